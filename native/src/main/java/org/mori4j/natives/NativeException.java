package org.mori4j.natives;

/**
 * A failed native call: which library and function, the native return code and its name string
 * ({@code cuGetErrorName}, {@code hipGetErrorName}, {@code ibv_wc_status_str}, errno's name).
 */
public class NativeException extends RuntimeException {
  private final String library;
  private final int code;
  private final String codeName;

  public NativeException(String library, int code, String codeName, String message) {
    super(message);
    this.library = library;
    this.code = code;
    this.codeName = codeName;
  }

  public String library() {
    return library;
  }

  /** The native return code (-1 when there is none, e.g. a missing library). */
  public int code() {
    return code;
  }

  public String codeName() {
    return codeName;
  }
}
