package org.mori4j.cluster;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.Locale;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.StatusCode;

/**
 * The tunables of the {@link DescriptorDirectory}, read once from {@code mori4j.cluster.directory} (and
 * {@code mori4j.cluster.ask-timeout}) when a directory starts; every value is checked there and a bad one is
 * refused with a message naming its configuration path and value. It also owns the rule for names, since the
 * length limit is one of its values: a name is non-empty, at most {@link #maxNameLength()} characters, and
 * has no control characters (names end up in log lines and error messages).
 */
public record DirectorySettings(Duration lookupTimeout, String writeConsistency, Duration writeTimeout, Duration readTimeout,
                                int maxNameLength, Duration orphanGrace, Duration sweepInterval, Duration askTimeout) {

  /** The configuration section this record is read from. */
  public static final String PATH = "mori4j.cluster.directory";

  public DirectorySettings {
    nonNegative("lookup-timeout", lookupTimeout);
    positive("write-timeout", writeTimeout);
    positive("read-timeout", readTimeout);
    nonNegative("orphan-grace", orphanGrace);
    positive("sweep-interval", sweepInterval);
    if (askTimeout == null || askTimeout.isNegative() || askTimeout.isZero())
      throw bad("mori4j.cluster.ask-timeout", askTimeout, "a positive duration");
    writeConsistency = writeConsistency == null ? null : writeConsistency.trim().toLowerCase(Locale.ROOT);
    if (!"local".equals(writeConsistency) && !"majority".equals(writeConsistency) && !"all".equals(writeConsistency))
      throw bad(PATH + ".write-consistency", writeConsistency, "one of local, majority, all");
    if (maxNameLength < 1 || maxNameLength > 65_536)
      throw bad(PATH + ".max-name-length", maxNameLength, "between 1 and 65536");
  }

  /** Reads {@link #PATH} and {@code mori4j.cluster.ask-timeout} from a system's configuration. */
  public static DirectorySettings fromConfig(Config root) {
    Config c = root.getConfig(PATH);
    return new DirectorySettings(c.getDuration("lookup-timeout"), c.getString("write-consistency"), c.getDuration("write-timeout"),
        c.getDuration("read-timeout"), c.getInt("max-name-length"), c.getDuration("orphan-grace"), c.getDuration("sweep-interval"),
        root.getDuration("mori4j.cluster.ask-timeout"));
  }

  /** How a publish or unpublish is replicated before it completes. */
  Replicator.WriteConsistency writeConsistencyLevel() {
    return switch (writeConsistency) {
      case "local" -> Replicator.writeLocal();
      case "all" -> new Replicator.WriteAll(writeTimeout);
      default -> new Replicator.WriteMajority(writeTimeout);
    };
  }

  /**
   * Checks a name or prefix given to the directory and returns it; {@code allowEmpty} is for prefixes, where
   * the empty prefix means every name. Throws {@link IoEngineException} {@code ERR_INVALID_ARGS} naming
   * {@code argument} and the value (shortened when it is very long).
   */
  public String checkName(String argument, String value, boolean allowEmpty) {
    if (value == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, argument + " must not be null");
    if (value.isEmpty() && !allowEmpty) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, argument + " must not be empty");
    if (value.length() > maxNameLength)
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, argument + " '" + shorten(value) + "' is " + value.length()
          + " characters long, more than " + PATH + ".max-name-length = " + maxNameLength);
    for (int i = 0; i < value.length(); i++) {
      char ch = value.charAt(i);
      if (Character.isISOControl(ch) || Character.isSurrogate(ch) && !validSurrogateAt(value, i))
        throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, argument + " '" + shorten(value) + "' has a "
            + (Character.isISOControl(ch) ? "control character" : "lone surrogate") + String.format(" U+%04X at index %d", (int) ch, i));
    }
    return value;
  }

  static boolean validSurrogateAt(String s, int i) {
    char ch = s.charAt(i);
    if (Character.isHighSurrogate(ch)) return i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
    return i > 0 && Character.isHighSurrogate(s.charAt(i - 1));
  }

  /** A value as it may appear in a message: control characters escaped, at most 80 characters. */
  static String shorten(String s) {
    StringBuilder b = new StringBuilder();
    int i = 0;
    for (; i < s.length() && b.length() < 80; i++) {
      char ch = s.charAt(i);
      if (Character.isISOControl(ch) || Character.isSurrogate(ch)) b.append(String.format("\\u%04x", (int) ch));
      else b.append(ch);
    }
    return i < s.length() ? b.append("...").toString() : b.toString();
  }

  private static void positive(String key, Duration d) {
    if (d == null || d.isNegative() || d.isZero()) throw bad(PATH + "." + key, d, "a positive duration");
  }

  private static void nonNegative(String key, Duration d) {
    if (d == null || d.isNegative()) throw bad(PATH + "." + key, d, "zero or a positive duration");
  }

  private static IoEngineException bad(String path, Object value, String expected) {
    return new IoEngineException(StatusCode.ERR_INVALID_ARGS, path + " = " + value + ": must be " + expected);
  }
}
