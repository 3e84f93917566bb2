package org.mori4j.io.gpuinit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.StatusCode;
import org.mori4j.io.internal.SettingReads;

/**
 * {@code mori4j.gpu-initiated} is read when a context opens: a refused value fails {@link RdmaDeviceContext#open} with
 * {@code ERR_INVALID_ARGS} whose message is the refusal's, {@code <key> (<ENV>) = '<value>' <why>} (the form of
 * every setting's refusal, as {@code KvCache.create} gives it), with the refusal as its cause. Before, it was a bare
 * {@code IllegalArgumentException} without the environment variable, or a raw {@code ConfigException}, and the queue
 * depths were named by the endpoint record's parameters ({@code maxSendWr}).
 */
class GpuInitSettingsTest {
  @ParameterizedTest(name = "{0} = {1}")
  @CsvSource(delimiter = '|', nullValues = "-", value = {
      "proxy-spin | -1us | MORI4J_GPU_PROXY_SPIN | must not be negative",
      "proxy-park | 0s | MORI4J_GPU_PROXY_PARK | must be positive",
      "proxy-park | soon | MORI4J_GPU_PROXY_PARK | has the wrong type or format",
      "proxy-park-max | 100us | MORI4J_GPU_PROXY_PARK_MAX | must be at least proxy-park (200us)",
      "proxy-max-run | 0s | - | must be positive",
      "max-send-wr | 1000 | - | must be a power of two in 1..1048576",
      "max-send-wr | 0 | - | must be a power of two in 1..1048576",
      "max-send-wr | 2097152 | - | must be a power of two in 1..1048576",
      "max-cqe | 1024 | - | must be at least max-send-wr + max-recv-wr (1024 + 256)",
      "max-recv-wr | 3 | - | must be 0 or a power of two in 1..1048576",
      "max-recv-wr | many | - | has the wrong type or format",
      "wait-timeout | 0s | MORI4J_GPU_WAIT_TIMEOUT | must be positive",
      "rnr-retry-time | -1s | MORI4J_GPU_RNR_RETRY_TIME | must not be negative",
      "peer-timeout | 0s | MORI4J_GPU_PEER_TIMEOUT | must be positive",
      "liveness-probe-after | -5s | MORI4J_GPU_LIVENESS_PROBE_AFTER | must be positive",
      "liveness-probe-timeout | never | MORI4J_GPU_LIVENESS_PROBE_TIMEOUT | has the wrong type or format"})
  void eachRefusedValueNamesItsKeyVariableAndValue(String key, String value, String env, String why) {
    String full = "mori4j.gpu-initiated." + key;
    Config root = ConfigFactory.parseString(full + " = \"" + value + "\"").withFallback(ConfigFactory.load());
    SettingReads.Refused e = assertThrows(SettingReads.Refused.class, () -> GpuInitSettings.from(root));
    assertEquals(full, e.key());
    assertTrue(e.getMessage().startsWith(full + (env == null ? "" : " (" + env + ")") + " = '" + value + "' " + why), e.getMessage());
  }

  @Test
  void theDefaultsAndTheBoundariesAreAccepted() {
    GpuInitSettings d = GpuInitSettings.from(ConfigFactory.load());
    assertEquals(1024, d.defaultMaxSendWr());
    assertEquals(200_000L, d.parkNanos());
    GpuInitSettings edge = GpuInitSettings.from(ConfigFactory.parseString("""
        mori4j.gpu-initiated { proxy-spin = 0s, proxy-park-max = 200us, max-send-wr = 1048576, max-cqe = 1048576, max-recv-wr = 0,
          rnr-retry-time = 0s }""").withFallback(ConfigFactory.load()));
    assertEquals(1 << 20, edge.defaultMaxSendWr());
    assertEquals(0, edge.defaultMaxRecvWr());
    assertEquals(edge.parkNanos(), edge.parkMaxNanos());
  }

  /** Through the public call: the refusal is {@code open}'s documented error, {@code ERR_INVALID_ARGS}. */
  @Test
  void openingAContextWithARefusedSettingIsInvalidArgs() {
    String key = "mori4j.gpu-initiated.proxy-park";
    System.setProperty(key, "0s");
    ConfigFactory.invalidateCaches();
    try (IoEngine engine = IoEngine.create("gpuinit-settings-" + ProcessHandle.current().pid(), IoEngineConfig.loopback())) {
      IoEngineException e = assertThrows(IoEngineException.class, () -> RdmaDeviceContext.open(engine).close());
      assertEquals(StatusCode.ERR_INVALID_ARGS, e.code(), e.toString());
      assertTrue(e.getMessage().startsWith(key + " (MORI4J_GPU_PROXY_PARK) = '0s' must be positive"), e.getMessage());
      SettingReads.Refused cause = assertInstanceOf(SettingReads.Refused.class, e.getCause(), "the refusal is the cause");
      assertEquals(key, cause.key());
    } finally {
      System.clearProperty(key);
      ConfigFactory.invalidateCaches();
    }
  }
}
