package org.mori4j.io.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.PollCqMode;
import org.mori4j.io.StatusCode;

/**
 * {@code mori4j.rdma}: every key refuses a bad value with a message naming the key (and its environment variable)
 * and the value, {@code connect-timeout} may not exceed {@code mori4j.engine.handshake-timeout}, and an engine
 * does not start with such a setting.
 */
class RdmaOptionsTest {
  /** {@code overrides} (HOCON) over the loaded configuration, as an application's own file would be. */
  private static Config with(String overrides) {
    return ConfigFactory.parseString(overrides).withFallback(ConfigFactory.load()).resolve();
  }

  @Test
  void referenceValuesAreMorisDefaults() {
    RdmaOptions o = RdmaOptions.from(with(""));
    assertEquals(1, o.defaults().qpPerTransfer());
    assertEquals(64, o.defaults().postBatchSize());
    assertEquals(1, o.defaults().numWorkerThreads());
    assertEquals(PollCqMode.POLLING, o.defaults().pollCqMode());
    assertEquals(Duration.ofSeconds(5), o.connectTimeout());
    assertEquals(1024, o.sendQueueDepth());
    // as long as the handshake is allowed; a bare section-level poll mode is accepted in any case
    assertEquals(Duration.ofSeconds(10), RdmaOptions.from(with("mori4j.rdma.connect-timeout = 10s")).connectTimeout());
    assertEquals(PollCqMode.EVENT, RdmaOptions.from(with("mori4j.rdma.poll-cq-mode = \" event \"")).defaults().pollCqMode());
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "provider | verbs | MORI4J_RDMA_PROVIDER",
      "devices | 'mlx5_0,,mlx5_1' | MORI_RDMA_DEVICES",
      "devices | ^ | MORI_RDMA_DEVICES",
      "qp-per-transfer | 0 | MORI_IO_QP_PER_TRANSFER",
      "qp-per-transfer | 65 | MORI_IO_QP_PER_TRANSFER",
      "qp-per-transfer | many | MORI_IO_QP_PER_TRANSFER",
      "post-batch-size | 0 | MORI_IO_POST_BATCH_SIZE",
      "num-worker-threads | -1 | MORI_IO_NUM_WORKER_THREADS",
      "poll-cq-mode | BUSY | MORI_IO_POLL_CQ_MODE",
      "enable-notification | sometimes | MORI_IO_ENABLE_NOTIFICATION",
      "send-queue-depth | 1000 | ",
      "send-queue-depth | 2 | ",
      "receive-depth | 0 | ",
      "completion-queue-depth | 2000 | ",
      "max-work-request | 2GiB | ",
      "max-work-request | 0 | ",
      "stripe-threshold | 0 | ",
      "connect-timeout | 0s | MORI4J_RDMA_CONNECT_TIMEOUT",
      "connect-timeout | later | MORI4J_RDMA_CONNECT_TIMEOUT"})
  void badValueIsRefusedNamingKeyAndValue(String key, String value, String env) {
    SettingReads.Refused e = assertThrows(SettingReads.Refused.class,
        () -> RdmaOptions.from(with("mori4j.rdma." + key + " = \"" + value + "\"")));
    assertEquals("mori4j.rdma." + key, e.key());
    String m = e.getMessage();
    assertTrue(m.startsWith("mori4j.rdma." + key), m);
    assertTrue(m.contains("'" + value + "'"), m);
    assertTrue(env != null ? m.startsWith("mori4j.rdma." + key + " (" + env + ") = ") : m.startsWith("mori4j.rdma." + key + " = "), m);
  }

  @Test
  void connectTimeoutLongerThanTheHandshakeIsRefusedNamingBoth() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> RdmaOptions.from(with("mori4j.rdma.connect-timeout = 30s\nmori4j.engine.handshake-timeout = 20s")));
    assertTrue(e.getMessage().startsWith("mori4j.rdma.connect-timeout (MORI4J_RDMA_CONNECT_TIMEOUT) = '30s' must not exceed"
        + " mori4j.engine.handshake-timeout = '20s'"), e.getMessage());
  }

  @Test
  void theDefaultConnectTimeoutFollowsALowerHandshakeTimeout() {
    // only the handshake-timeout set (an application without RDMA, say): no refusal, the default is capped
    assertEquals(Duration.ofSeconds(2), RdmaOptions.from(with("mori4j.engine.handshake-timeout = 2s")).connectTimeout());
  }

  @Test
  void anEngineDoesNotStartWithABadRdmaSetting() {
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "rdma-options-test",
        with("mori4j.rdma.connect-timeout = 11s\npekko.loglevel = WARNING"));
    try {
      IoEngineException e = assertThrows(IoEngineException.class,
          () -> IoEngine.create(system, "rdma-options-engine", IoEngineConfig.loopback()).close());
      assertEquals(StatusCode.ERR_INVALID_ARGS, e.code());
      assertTrue(e.getMessage().startsWith("cannot start engine 'rdma-options-engine': mori4j.rdma.connect-timeout (MORI4J_RDMA_CONNECT_TIMEOUT)"
          + " = '11s' must not exceed mori4j.engine.handshake-timeout = '10s'"), e.getMessage());
      assertTrue(e.getCause() instanceof SettingReads.Refused, "the refusal is the cause: " + e.getCause());
    } finally {
      system.terminate();
    }
  }
}
