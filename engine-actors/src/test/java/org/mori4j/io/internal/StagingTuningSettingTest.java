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
  private static SettingReads.Section tcp(String pieces, String spin) {
    return tcp("gpu-staging-pieces = " + pieces + "\ngpu-copy-spin = " + spin);
  }

  /** {@code mori4j.tcp} with {@code overrides} (HOCON, keys relative to the section) over reference.conf's. */
  static SettingReads.Section tcp(String overrides) {
    return SettingReads.section(ConfigFactory.parseString(overrides).atPath("mori4j.tcp").withFallback(ConfigFactory.defaultReference()), "mori4j.tcp");
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
        EngineSettings.stagingTuning(tcp("gpu-staging-pieces = 3\ngpu-copy-spin = 7us\ngpu-staging-scatter = on")), "scatter read");
    assertEquals(ref.getBoolean("gpu-staging-early-refill"), t.earlyRefill());
    assertEquals(new StagingTuning(3, 7_000, false, true, false, true),
        EngineSettings.stagingTuning(tcp("gpu-staging-pieces = 3\ngpu-copy-spin = 7us\ngpu-staging-early-refill = on")), "early refill");
    assertEquals(new StagingTuning(4, 0), new GpuStaging("auto", 1 << 20, 0, new StagingTuning(4, 0)).tuning());
  }

  @Test
  void valuesOutOfRangeAreRefusedByName() {
    var pieces = assertThrows(IllegalArgumentException.class, () -> EngineSettings.stagingTuning(tcp("0", "0us")));
    assertEquals("mori4j.tcp.gpu-staging-pieces (MORI_IO_TCP_GPU_STAGING_PIECES) = '0' must be in 1..64", pieces.getMessage());
    var spin = assertThrows(IllegalArgumentException.class, () -> EngineSettings.stagingTuning(tcp("2", "11ms")));
    assertTrue(spin.getMessage().contains("mori4j.tcp.gpu-copy-spin"), spin.getMessage());
  }
}
