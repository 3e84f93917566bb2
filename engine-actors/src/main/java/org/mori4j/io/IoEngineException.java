package org.mori4j.io;

import java.util.Objects;

/**
 * Thrown by control calls ({@code createBackend}, {@code register*}, {@code deregister*}, ...) when they
 * cannot be carried out; the {@link #code()} says what kind of failure it is and the message says which
 * argument or state caused it. Transfer calls never throw it: they return a failed {@link TransferStatus}.
 */
public class IoEngineException extends RuntimeException {
  private final StatusCode code;

  public IoEngineException(StatusCode code, String message) {
    super(message);
    this.code = Objects.requireNonNull(code, "code");
  }

  public IoEngineException(StatusCode code, String message, Throwable cause) {
    super(message, cause);
    this.code = Objects.requireNonNull(code, "code");
  }

  public StatusCode code() {
    return code;
  }

  @Override
  public String toString() {
    return "IoEngineException[" + code + "]: " + getMessage();
  }
}
