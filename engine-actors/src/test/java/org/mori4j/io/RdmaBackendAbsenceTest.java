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
 * Asking for the RDMA backend says first whether this machine has an RDMA device, in the verbs layer's own
 * words. It fails with {@code ERR_RDMA_OP} on every machine: on the project's machines (no device; often no
 * RDMA support in the kernel at all) with "no RDMA device on this machine: why"; where devices exist saying
 * the backend is not implemented yet and naming them. Either way the engine stays usable.
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
    if (found.isEmpty()) {
      assertFalse(found.whyNone().isEmpty(), "an empty inventory says why");
      assertEquals("no RDMA device on this machine: " + found.whyNone(), e.getMessage());
    } else {
      assertTrue(e.getMessage().startsWith("the RDMA backend is not implemented yet"), e.getMessage());
      for (String device : found.devices()) assertTrue(e.getMessage().contains(device), e.getMessage());
    }
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
}
