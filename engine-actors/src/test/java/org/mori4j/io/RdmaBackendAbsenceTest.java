package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.mori4j.natives.verbs.RdmaDevices;

/**
 * With the default provider ({@code auto}) the RDMA backend runs on real devices only: on the project's machines
 * (no device; often no RDMA support in the kernel at all) {@code createBackend(RDMA)} fails with
 * {@code ERR_RDMA_OP} and "no RDMA device on this machine: why", never falling back to the emulated device, and the
 * engine stays usable. The software provider runs when named; an unknown provider name is refused naming it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RdmaBackendAbsenceTest {
  private IoEngine engine;

  @BeforeAll
  void start() {
    engine = IoEngine.create("rdma-absence-" + ProcessHandle.current().pid(), IoEngineConfig.loopback());
  }

  @AfterAll
  void stop() {
    if (engine != null) engine.close();
  }

  @Test
  void rdmaBackendSaysWhetherThisMachineHasAnRdmaDevice() {
    RdmaDevices.Inventory found = RdmaDevices.inventory();
    IoEngineException e = assertThrows(IoEngineException.class,
        () -> engine.createBackend(BackendType.RDMA, RdmaBackendConfig.defaults()));
    System.out.println("createBackend(RDMA) here: " + e.code() + ": " + e.getMessage());
    assertEquals(StatusCode.ERR_RDMA_OP, e.code(), e.toString());
    org.junit.jupiter.api.Assumptions.assumeTrue(found.isEmpty(), "this machine has RDMA devices " + found.devices()
        + ": createBackend(RDMA) with provider auto uses them");
    assertFalse(found.whyNone().isEmpty(), "an empty inventory says why");
    assertTrue(e.getMessage().startsWith("no RDMA device on this machine: " + found.whyNone()), e.getMessage());
    assertTrue(e.getMessage().contains("MORI4J_RDMA_PROVIDER=software"), "says how to run the emulated device: " + e.getMessage());
  }

  @Test
  void theRefusalLeavesTheEngineUsable() {
    assertThrows(IoEngineException.class, () -> engine.createBackend(BackendType.RDMA, RdmaBackendConfig.defaults()));
    // A second request gets the same answer: nothing was half-created by the first.
    IoEngineException again = assertThrows(IoEngineException.class,
        () -> engine.createBackend(BackendType.RDMA, RdmaBackendConfig.defaults()));
    assertTrue(again.getMessage().contains("RDMA"), again.getMessage());
    assertTrue(engine.engineDesc().key().startsWith("rdma-absence-"));
  }

  /** Runs {@code body} with an engine embedded in a system whose {@code mori4j.rdma.provider} is {@code provider}. */
  private static void withProvider(String provider, java.util.function.Consumer<IoEngine> body) {
    org.apache.pekko.actor.typed.ActorSystem<Void> app = org.apache.pekko.actor.typed.ActorSystem.create(
        org.apache.pekko.actor.typed.javadsl.Behaviors.empty(), "rdma-" + provider,
        com.typesafe.config.ConfigFactory.parseString("mori4j.rdma.provider = " + provider).withFallback(com.typesafe.config.ConfigFactory.load()));
    try {
      IoEngine e = IoEngine.create(app, "rdma-" + provider + "-" + ProcessHandle.current().pid(), IoEngineConfig.loopback());
      try {
        body.accept(e);
      } finally {
        e.close();
      }
    } finally {
      app.terminate();
    }
  }

  @Test
  void theSoftwareProviderRunsWhenNamed() {
    withProvider("software", e -> {
      e.createBackend(BackendType.RDMA, RdmaBackendConfig.defaults());
      assertTrue(e.engineDesc().backends().contains(BackendType.RDMA), e.engineDesc().toString());
    });
  }

  /**
   * Since every mori4j.rdma key is checked at engine start (RdmaOptions), an unknown provider fails the start, not
   * createBackend, as every refused setting does: ERR_INVALID_ARGS naming the key, its variable and the value.
   */
  @Test
  void anUnknownProviderIsRefusedByName() {
    IoEngineException x = assertThrows(IoEngineException.class, () -> withProvider("rxe0", e -> {}));
    assertEquals(StatusCode.ERR_INVALID_ARGS, x.code(), x.toString());
    assertTrue(x.getMessage().contains("mori4j.rdma.provider (MORI4J_RDMA_PROVIDER) = 'rxe0'"), x.getMessage());
  }
}
