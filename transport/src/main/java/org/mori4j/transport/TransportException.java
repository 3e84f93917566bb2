package org.mori4j.transport;

/** A control-path failure of a backend (bind, connect, handshake), with the transport's reason code. */
public class TransportException extends RuntimeException {
  private final TransportError error;

  public TransportException(TransportError error, String message) {
    super(message);
    this.error = error;
  }

  public TransportException(TransportError error, String message, Throwable cause) {
    super(message, cause);
    this.error = error;
  }

  public TransportError error() {
    return error;
  }
}
