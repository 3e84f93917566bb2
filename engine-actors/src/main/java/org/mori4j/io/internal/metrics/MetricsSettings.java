package org.mori4j.io.internal.metrics;

import com.typesafe.config.Config;
import org.mori4j.io.internal.SettingReads;
import org.mori4j.io.internal.SettingReads.Section;

/**
 * The {@code mori4j.metrics} section of the configuration (reference.conf explains each key), read once when an
 * engine starts.
 *
 * @param enabled   whether the engine keeps any metrics at all (off: the transfer path skips every hook)
 * @param histogram whether successful transfers' latency goes into a Micrometer Timer when a registry is bound
 * @param percentiles the percentiles each latency Timer computes itself (HdrHistogram), each in (0, 1); may be empty
 * @param jfr       whether the engine emits JDK Flight Recorder events (they cost nothing while no recording runs)
 * @param jmx       whether the engine registers its MBean in the platform MBean server
 */
public record MetricsSettings(boolean enabled, boolean histogram, double[] percentiles, boolean jfr, boolean jmx) {
  /** Everything off: what an engine built without configuration (unit tests of the transfer path) uses. */
  public static final MetricsSettings OFF = new MetricsSettings(false, false, new double[0], false, false);

  /** Reads and checks {@code mori4j.metrics}; a bad value is a {@link SettingReads.Refused} naming the key. */
  public static MetricsSettings from(Config config) {
    Section c = SettingReads.section(config, "mori4j.metrics");
    boolean on = c.getBoolean("enabled");
    double[] p = c.read("percentiles", () -> c.config().getDoubleList("percentiles"), "must be a list of numbers")
        .stream().mapToDouble(Double::doubleValue).toArray();
    for (double x : p)
      if (!(x > 0 && x < 1)) throw c.refused("percentiles", "must hold numbers in (0, 1) only: " + x + " is not");
    return new MetricsSettings(on, on && c.getBoolean("histogram"), p, on && c.getBoolean("jfr"), on && c.getBoolean("jmx"));
  }
}
