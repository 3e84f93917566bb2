package org.mori4j.io.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;
import org.mori4j.transport.StagingTuning;

/**
 * {@code mori4j.tcp.gpu-staging-pieces}, {@code gpu-copy-spin} (and the gather, scatter and early-refill switches): read into the engine's settings and handed to the
 * TCP backend through its GPU staging; values out of range are refused by name.
 */
class StagingTuningSettingTest {
  /** {@code mori4j.tcp} with these two values over reference.conf's (as the engine reads it). */
  private static Config tcp(String pieces, String spin) {
    return ConfigFactory.parseString("gpu-staging-pieces = " + pieces + "\ngpu-copy-spin = " + spin).withFallback(reference());
  }

  static Config reference() {
    return ConfigFactory.defaultReference().getConfig("mori4j.tcp");
  }

  @Test
  void theDefaultsReachTheStaging() {
    StagingTuning t = EngineSettings.load().tcpGpuStagingTuning();
    Config ref = ConfigFactory.load().getConfig("mori4j.tcp");
    assertEquals(ref.getInt("gpu-staging-pieces"), t.middlePieces());
    assertEquals(ref.getDuration("gpu-copy-spin").toNanos(), t.copySpinNanos());
    assertEquals(ref.getBoolean("gpu-staging-gather"), t.gatherPieces());
    assertEquals(ref.getBoolean("gpu-staging-scatter"), t.scatterPieces());
    assertEquals(new StagingTuning(3, 7_000, false, true, false), EngineSettings.stagingTuning(tcp("3", "7us")), "the reference defaults of the others");
    assertEquals(new StagingTuning(3, 7_000, false, true, true),
        EngineSettings.stagingTuning(ConfigFactory.parseString("gpu-staging-scatter = on").withFallback(tcp("3", "7us"))), "scatter read");
    assertEquals(ref.getBoolean("gpu-staging-early-refill"), t.earlyRefill());
    assertEquals(new StagingTuning(3, 7_000, false, true, false, true),
        EngineSettings.stagingTuning(ConfigFactory.parseString("gpu-staging-early-refill = on").withFallback(tcp("3", "7us"))), "early refill");
    assertEquals(new StagingTuning(4, 0), new GpuStaging("auto", 1 << 20, 0, new StagingTuning(4, 0)).tuning());
  }

  @Test
  void valuesOutOfRangeAreRefusedByName() {
    var pieces = assertThrows(IllegalArgumentException.class, () -> EngineSettings.stagingTuning(tcp("0", "0us")));
    assertTrue(pieces.getMessage().contains("mori4j.tcp.gpu-staging-pieces") && pieces.getMessage().contains(": 0"), pieces.getMessage());
    var spin = assertThrows(IllegalArgumentException.class, () -> EngineSettings.stagingTuning(tcp("2", "11ms")));
    assertTrue(spin.getMessage().contains("mori4j.tcp.gpu-copy-spin"), spin.getMessage());
  }
}
