package org.mori4j.io.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.StatusCode;
import org.mori4j.io.internal.SettingReads;

/**
 * {@code mori4j.kv}: the values come from the configuration alone (reference.conf's, or the application's over them),
 * and a bad one is refused with ERR_INVALID_ARGS naming the key, its environment variable and the value.
 */
class KvSettingsTest {
  private static Config with(String overrides) {
    return ConfigFactory.parseString(overrides).withFallback(ConfigFactory.load()).resolve();
  }

  @Test
  void valuesComeFromTheConfiguration() {
    Config ref = with("");
    KvSettings s = KvSettings.of(ref);
    // tcp-batch-parts 0 in reference.conf: one part per TCP connection
    assertEquals(ref.getInt("mori4j.tcp.connections-per-peer"), s.tcpBatchParts());
    assertEquals(ref.getBytes("mori4j.kv.tcp-min-part"), s.tcpMinPart());
    assertEquals(ref.getInt("mori4j.kv.first-chunk-layers"), s.firstChunkLayers());
    assertEquals(ref.getBytes("mori4j.kv.plan-pool-bytes"), s.planPoolBytes());
    KvSettings set = KvSettings.of(with("mori4j.kv { tcp-batch-parts = 3, tcp-min-part = 4KiB, first-chunk-layers = 0, plan-pool-bytes = 0 }"));
    assertEquals(new KvSettings(3, 4096, 0, 0), set);
    assertEquals(5, KvSettings.of(with("mori4j.kv.tcp-batch-parts = 0\nmori4j.tcp.connections-per-peer = 5")).tcpBatchParts());
    KvBoards.Settings board = KvSettings.board(with("mori4j.kv.landing-board { enabled = off, entries = 16, spin = 0s, park = 1ms, dir = \"/x\" }"));
    assertEquals(new KvBoards.Settings(false, 16, Duration.ZERO, Duration.ofMillis(1), "/x"), board);
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "tcp-batch-parts | -1 | MORI4J_KV_TCP_BATCH_PARTS", "tcp-batch-parts | 65 | MORI4J_KV_TCP_BATCH_PARTS",
      "tcp-batch-parts | two | MORI4J_KV_TCP_BATCH_PARTS",
      "tcp-min-part | 0 | MORI4J_KV_TCP_MIN_PART", "tcp-min-part | big | MORI4J_KV_TCP_MIN_PART",
      "first-chunk-layers | -2 | MORI4J_KV_FIRST_CHUNK_LAYERS",
      "plan-pool-bytes | -1 | MORI4J_KV_PLAN_POOL_BYTES", "plan-pool-bytes | lots | MORI4J_KV_PLAN_POOL_BYTES",
      "landing-board.enabled | maybe | MORI4J_KV_LANDING_BOARD",
      "landing-board.entries | 8 | MORI4J_KV_LANDING_BOARD_ENTRIES", "landing-board.entries | 1000 | MORI4J_KV_LANDING_BOARD_ENTRIES",
      "landing-board.entries | 2097152 | MORI4J_KV_LANDING_BOARD_ENTRIES",
      "landing-board.spin | -1ms | MORI4J_KV_LANDING_BOARD_SPIN", "landing-board.spin | soon | MORI4J_KV_LANDING_BOARD_SPIN",
      "landing-board.park | 0s | MORI4J_KV_LANDING_BOARD_PARK"})
  void badValueIsRefusedNamingKeyEnvironmentVariableAndValue(String key, String value, String env) {
    Config c = with("mori4j.kv." + key + " = \"" + value + "\"");
    IoEngineException e = assertThrows(IoEngineException.class,
        () -> {
          if (key.startsWith("landing-board.")) KvSettings.board(c);
          else KvSettings.of(c);
        });
    assertEquals(StatusCode.ERR_INVALID_ARGS, e.code());
    assertTrue(e.getMessage().startsWith("mori4j.kv." + key + " (" + env + ") = '" + value + "'"), e.getMessage());
    assertTrue(e.getCause() instanceof SettingReads.Refused, "the refusal is the cause: " + e.getCause());
  }
}
