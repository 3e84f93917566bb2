package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;

/**
 * An {@link RdmaBackendConfig} that its own constructor accepts but the RDMA backend's limits do not (more than 64
 * queue pairs per transfer or worker threads) is refused by {@code createBackend(RDMA)} with {@code ERR_INVALID_ARGS}
 * naming the value, and the engine answers the next call: the refusal must not escape the engine actor (which would
 * stop it, leaving every later call to time out).
 */
class RdmaBackendConfigRangeTest {
  @Test
  void aConfigOutsideTheBackendsLimitsIsRefusedAndTheEngineStaysUp() {
    // software provider: nothing to open on a machine without RDMA devices; a short ask-timeout so that a dead engine
    // actor fails this test in seconds instead of after the default 30 s
    ActorSystem<Void> app = ActorSystem.create(Behaviors.empty(), "rdma-config-range",
        ConfigFactory.parseString("mori4j.rdma.provider = software\nmori4j.engine.ask-timeout = 3s\npekko.loglevel = WARNING")
            .withFallback(ConfigFactory.load()));
    try (IoEngine e = IoEngine.create(app, "rdma-config-range-" + ProcessHandle.current().pid(), IoEngineConfig.loopback())) {
      RdmaBackendConfig d = RdmaBackendConfig.defaults();
      IoEngineException qps = assertThrows(IoEngineException.class, () -> e.createBackend(BackendType.RDMA, d.withQpPerTransfer(65)));
      assertEquals(StatusCode.ERR_INVALID_ARGS, qps.code(), qps.toString());
      assertTrue(qps.getMessage().contains("65"), qps.getMessage());
      RdmaBackendConfig workers = new RdmaBackendConfig(1, 64, 65, PollCqMode.POLLING, true);
      IoEngineException w = assertThrows(IoEngineException.class, () -> e.createBackend(BackendType.RDMA, workers));
      assertEquals(StatusCode.ERR_INVALID_ARGS, w.code(), w.toString());
      assertTrue(w.getMessage().contains("65"), w.getMessage());
      assertTrue(e.engineDesc().backends().isEmpty(), "nothing half-created: " + e.engineDesc());
    } finally {
      app.terminate();
    }
  }
}
