package org.mori4j.natives;

/**
 * A failed native call: which library and function, the native return code and its name string
 * ({@code cuGetErrorName}, {@code hipGetErrorName}, {@code nvrtcGetErrorString}, {@code ibv_wc_status_str},
 * errno's name). Callers branch on {@link #code()} or {@link #codeName()}, never on the message text, which
 * is for people and may carry more (a compile log, the library names tried).
 */
public class NativeException extends RuntimeException {
  private final String library;
  private final String function;
  private final int code;
  private final String codeName;

  public NativeException(String library, int code, String codeName, String message) {
    this(library, "", code, codeName, message);
  }

  /** With the native {@code function} that failed (e.g. {@code cuMemAlloc}). */
  public NativeException(String library, String function, int code, String codeName, String message) {
    super(message);
    this.library = library;
    this.function = function;
    this.code = code;
    this.codeName = codeName;
  }

  public String library() {
    return library;
  }

  /** The native function that failed; empty when the failure was not one call's (e.g. a missing library). */
  public String function() {
    return function;
  }

  /** The native return code (-1 when there is none, e.g. a missing library). */
  public int code() {
    return code;
  }

  public String codeName() {
    return codeName;
  }
}
