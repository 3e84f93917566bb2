package org.mori4j.io.internal;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * The one way the engine's setting sections ({@code mori4j.rdma} in {@link RdmaOptions}, {@code mori4j.kv} in the KV
 * layer) refuse a value: a message that names the setting (its key, and its environment variable where it has one)
 * and the value as configured, and says what is wrong, turned into the exception each section answers with. A key
 * that is missing or has the wrong type or format is refused the same way as a value out of range.
 */
public final class SettingReads {
  private SettingReads() {}

  /**
   * {@code get} (a typed read of {@code path} in {@code c}); a missing key or a wrong type or format is refused through
   * {@code refuse} (message, cause), named {@code label}.
   */
  public static <T> T read(Config c, String path, String label, Supplier<T> get, BiFunction<String, Throwable, RuntimeException> refuse) {
    try {
      return get.get();
    } catch (ConfigException.Missing e) {
      throw refuse.apply(label + " is not set (reference.conf has it: is it on the class path?)", e);
    } catch (ConfigException e) {
      throw refuse.apply(refusal(c, path, label, "has the wrong type or format (" + e.getMessage() + ")"), e);
    }
  }

  /** "{@code label} = '<the value of path in c>' {@code why}". */
  public static String refusal(Config c, String path, String label, String why) {
    return label + " = '" + c.getValue(path).unwrapped() + "' " + why;
  }
}
