package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.GpuRuntimes;

/**
 * GPU registration on a machine without a GPU runtime (every build machine): it fails with ERR_GPU_OP and
 * the runtime's one message naming what was tried; a negative device is refused as a bad argument first.
 * Skipped, saying so, where a GPU runtime exists (the gpu-tagged tests cover that machine).
 */
class GpuRegistrationTest {
  @Test
  void gpuRegistrationWithoutARuntimeFailsWithErrGpuOp() {
    assumeFalse(GpuRuntimes.select("auto").available(), "a GPU runtime is present here; GpuTransferGpuTest covers GPU registration");
    try (Arena arena = Arena.ofShared(); IoEngine engine = IoEngine.create("gpu-reg-" + ProcessHandle.current().pid(), IoEngineConfig.loopback())) {
      engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      MemorySegment host = arena.allocate(4096);
      IoEngineException e = assertThrows(IoEngineException.class,
          () -> engine.registerMemory(host.address(), 4096, 0, MemoryLocationType.GPU));
      assertEquals(StatusCode.ERR_GPU_OP, e.code(), e.getMessage());
      assertTrue(e.getMessage().contains("no GPU runtime available"), e.getMessage());
      IoEngineException neg = assertThrows(IoEngineException.class,
          () -> engine.registerMemory(host.address(), 4096, -1, MemoryLocationType.GPU));
      assertEquals(StatusCode.ERR_INVALID_ARGS, neg.code(), neg.getMessage());
      assertTrue(neg.getMessage().contains("deviceId"), neg.getMessage());
      // host registration is unaffected
      assertNotNull(engine.registerMemory(host));
    }
  }
}
