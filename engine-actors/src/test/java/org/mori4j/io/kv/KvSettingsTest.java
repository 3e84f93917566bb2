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

/**
 * {@code mori4j.kv}: the values come from the configuration alone (reference.conf's, or the application's over them),
 * and a bad one is refused with ERR_INVALID_ARGS naming the key and the value.
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
      "tcp-batch-parts | -1", "tcp-batch-parts | 65", "tcp-batch-parts | two",
      "tcp-min-part | 0", "tcp-min-part | big",
      "first-chunk-layers | -2",
      "plan-pool-bytes | -1", "plan-pool-bytes | lots",
      "landing-board.enabled | maybe",
      "landing-board.entries | 8", "landing-board.entries | 1000", "landing-board.entries | 2097152",
      "landing-board.spin | -1ms", "landing-board.spin | soon",
      "landing-board.park | 0s"})
  void badValueIsRefusedNamingKeyAndValue(String key, String value) {
    Config c = with("mori4j.kv." + key + " = \"" + value + "\"");
    IoEngineException e = assertThrows(IoEngineException.class,
        () -> {
          if (key.startsWith("landing-board.")) KvSettings.board(c);
          else KvSettings.of(c);
        });
    assertEquals(StatusCode.ERR_INVALID_ARGS, e.code());
    assertTrue(e.getMessage().startsWith("mori4j.kv." + key + " = '" + value + "'"), e.getMessage());
  }
}
