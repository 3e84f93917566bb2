package org.mori4j.io.internal;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigResolveOptions;
import com.typesafe.config.ConfigResolver;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueFactory;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.slf4j.LoggerFactory;

/**
 * The one way the engine's settings refuse a value: {@link Refused}, whose message names the setting (its full key,
 * and the environment variable that overrides it where {@code reference.conf} declares one), the value as configured,
 * and what is wrong: {@code <key> (<ENV>) = '<value>' <why>}. A key that is missing or has the wrong type or format is
 * refused the same way as a value out of range. {@link EngineStart} turns a refusal into
 * {@code IoEngineException(ERR_INVALID_ARGS)} naming the engine, the KV layer into one of its own; the readers
 * ({@link EngineSettings}, {@link RdmaOptions}, the TCP and metrics setups, {@code KvSettings}) read through a
 * {@link Section}.
 *
 * <p>The environment variable is not kept in a table of its own: {@link #environmentVariables} reads every
 * {@code key = ${?ENV}} line of the {@code reference.conf} files on the class path, so a new setting with an
 * override is named in refusals as soon as it is declared.
 */
public final class SettingReads {
  private SettingReads() {}

  /**
   * A setting refused: an {@link IllegalArgumentException} (what the public config factories such as
   * {@code TcpBackendConfig.defaults()} have always thrown for a bad value) carrying the full key.
   */
  public static final class Refused extends IllegalArgumentException {
    private final String key;

    Refused(String key, String message, Throwable cause) {
      super(message, cause);
      this.key = key;
    }

    /** The full key of the refused setting ({@code mori4j.tcp.io-threads}). */
    public String key() {
      return key;
    }
  }

  /**
   * The settings under {@code path} of {@code root} ({@code mori4j.tcp}, say), read by relative key: each typed read
   * refuses a missing key or a wrong type or format as a {@link Refused} naming the full key.
   */
  public static Section section(Config root, String path) {
    try {
      return new Section(root.getConfig(path), path + ".");
    } catch (ConfigException e) {
      throw new Refused(path, path + " is missing or not a section (reference.conf has it: is it on the class path?): " + e.getMessage(), e);
    }
  }

  /** Reads one section's keys; see {@link SettingReads#section}. */
  public static final class Section {
    private final Config c;
    private final String prefix;

    private Section(Config c, String prefix) {
      this.c = c;
      this.prefix = prefix;
    }

    /** The section itself, for readers that take a {@link Config}. */
    public Config config() {
      return c;
    }

    /** The full key of {@code key}. */
    public String path(String key) {
      return prefix + key;
    }

    public int getInt(String key) {
      return read(key, () -> c.getInt(key));
    }

    public long getBytes(String key) {
      return read(key, () -> c.getBytes(key));
    }

    public Duration getDuration(String key) {
      return read(key, () -> c.getDuration(key));
    }

    public boolean getBoolean(String key) {
      return read(key, () -> c.getBoolean(key));
    }

    public String getString(String key) {
      return read(key, () -> c.getString(key));
    }

    /** A duration in nanoseconds that must not be negative. */
    public long nanosNotNegative(String key) {
      long n = getDuration(key).toNanos();
      if (n < 0) throw refused(key, "must not be negative");
      return n;
    }

    /** A duration that must be more than zero. */
    public Duration positiveDuration(String key) {
      Duration d = getDuration(key);
      if (d.isNegative() || d.isZero()) throw refused(key, "must be positive");
      return d;
    }

    /** An int in {@code min..max} ({@code max} = {@link Integer#MAX_VALUE}: at least {@code min}). */
    public int intIn(String key, int min, int max) {
      int v = getInt(key);
      if (v < min || v > max) throw refused(key, max == Integer.MAX_VALUE ? "must be at least " + min : "must be in " + min + ".." + max);
      return v;
    }

    /** {@code get}, a typed read of {@code key}; a missing key or a wrong type or format is refused naming it. */
    public <T> T read(String key, Supplier<T> get) {
      return read(key, get, null);
    }

    /** {@link #read(String, Supplier)}, saying {@code why} (what the key takes) when the type or format is wrong. */
    public <T> T read(String key, Supplier<T> get, String why) {
      try {
        return get.get();
      } catch (ConfigException.Missing e) {
        throw new Refused(path(key), name(path(key)) + " is not set (reference.conf has it: is it on the class path?)", e);
      } catch (ConfigException e) {
        throw refused(key, why != null ? why : "has the wrong type or format (" + e.getMessage() + ")", e);
      }
    }

    /** "{@code <full key> (<ENV>) = '<value>' why}", as a {@link Refused}. */
    public Refused refused(String key, String why) {
      return refused(key, why, null);
    }

    public Refused refused(String key, String why, Throwable cause) {
      return new Refused(path(key), name(path(key)) + " = '" + shown(key) + "' " + why, cause);
    }

    /** The value as configured; a password's is never echoed. */
    private String shown(String key) {
      if (key.contains("password")) return "(hidden)";
      try {
        return String.valueOf(c.getValue(key).unwrapped());
      } catch (ConfigException e) {
        return "(unset)";
      }
    }
  }

  /** {@code key}, with " (ENV)" where reference.conf declares {@code key = ${?ENV}}. */
  public static String name(String key) {
    String env = environmentVariables().get(key);
    return env == null ? key : key + " (" + env + ")";
  }

  /** Full key to the environment variable that overrides it, from every reference.conf on the class path. */
  public static Map<String, String> environmentVariables() {
    return Declared.ENV;
  }

  /** Read once, at the first refusal (or the first caller): a started engine never needs it. */
  private static final class Declared {
    /** Not a character a setting's value holds: marks the values the resolver below supplied. */
    private static final String MARK = "\u0000env:";
    static final Map<String, String> ENV = read();

    /**
     * Resolves reference.conf with every substitution the file cannot resolve itself (each {@code ${?ENV}}) answered
     * by a marked name instead of the process environment: the keys whose value is then a marked name are those an
     * environment variable overrides, and the mark says which.
     */
    private static Map<String, String> read() {
      ConfigResolver names = new ConfigResolver() {
        @Override
        public ConfigValue lookup(String path) {
          return ConfigValueFactory.fromAnyRef(MARK + path);
        }

        @Override
        public ConfigResolver withFallback(ConfigResolver fallback) {
          return this;
        }
      };
      Config reference;
      try {
        reference = ConfigFactory.parseResourcesAnySyntax(SettingReads.class.getClassLoader(), "reference")
            .resolve(ConfigResolveOptions.defaults().setUseSystemEnvironment(false).appendResolver(names));
      } catch (ConfigException e) {
        // another library's reference.conf that resolves only with the application's file: refusals still name key
        // and value, without the variable
        LoggerFactory.getLogger(SettingReads.class).warn("cannot read the environment variables reference.conf declares: {}", e.getMessage());
        return Map.of();
      }
      Map<String, String> env = new TreeMap<>();
      for (Map.Entry<String, ConfigValue> e : reference.entrySet())
        if (e.getValue().unwrapped() instanceof String s && s.startsWith(MARK)) env.put(e.getKey(), s.substring(MARK.length()));
      return Map.copyOf(env);
    }
  }
}
