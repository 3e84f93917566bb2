package org.mori4j.natives.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.cuda.CudaDriver;

/**
 * Runtime selection: with no usable GPU runtime (this build machine: no libcuda.so.1, HIP without an AMD
 * GPU), every GPU call fails with one message naming each runtime tried and why; an unknown mode is refused.
 */
class GpuRuntimesTest {

  private static void assumeNoGpu(GpuRuntime runtime) {
    Assumptions.assumeFalse(runtime.available(), "this machine has a GPU runtime: " + runtime.name() + " " + runtime.version());
  }

  @Test
  void withoutAnyRuntimeEveryCallFailsWithOneMessageNamingWhatWasTried() {
    GpuRuntime runtime = GpuRuntimes.select("auto");
    assumeNoGpu(runtime);

    assertEquals("none", runtime.name());
    String reason = runtime.version();
    assertTrue(reason.contains("CUDA") && reason.contains("HIP"), reason);
    if (!CudaDriver.library().available()) assertTrue(reason.contains("libcuda.so.1"), reason);

    List<Consumer<GpuRuntime>> calls = List.of(GpuRuntime::deviceCount, r -> r.allocDevice(0, 1), r -> r.allocPinned(1),
        r -> r.pointerInfo(0x1000), r -> r.requireDeviceMemory(0x1000, 1, 0), r -> r.compile(0, "", "k"),
        r -> r.copyDeviceToDevice(1, 2, 3), r -> r.createStream(0), r -> r.memoryInfo(0), r -> r.ipcHandle(1));
    for (Consumer<GpuRuntime> call : calls) {
      NativeException e = assertThrows(NativeException.class, () -> call.accept(runtime));
      assertEquals(reason, e.getMessage());
      assertEquals("NO_GPU_RUNTIME", e.codeName());
    }
  }

  @Test
  void cudaModeSaysWhyCudaIsMissing() {
    GpuRuntime runtime = GpuRuntimes.select("CUDA");
    assumeNoGpu(runtime);

    assertTrue(runtime.version().contains("mode cuda") && runtime.version().contains("CUDA:"), runtime.version());
    assertFalse(runtime.version().contains("HIP:"), "only CUDA was asked for: " + runtime.version());
  }

  @Test
  void hipModeSaysWhyHipIsMissing() {
    GpuRuntime runtime = GpuRuntimes.select("hip");
    assumeNoGpu(runtime);

    assertTrue(runtime.version().contains("HIP:"), runtime.version());
  }

  @Test
  void anUnknownModeIsRefused() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GpuRuntimes.select("metal"));
    assertTrue(e.getMessage().contains("auto, cuda or hip"), e.getMessage());
  }

  @Test
  void aRegisteredRuntimeIsSelectedByItsOwnName() {
    GpuRuntime stand = GpuRuntimes.select("auto");
    try {
      assertEquals(null, GpuRuntimes.register("Sim", stand));
      org.junit.jupiter.api.Assertions.assertSame(stand, GpuRuntimes.select(" sim "));
      IllegalArgumentException other = assertThrows(IllegalArgumentException.class, () -> GpuRuntimes.select("metal"));
      assertTrue(other.getMessage().contains("[sim]"), other.getMessage());
      assertThrows(IllegalArgumentException.class, () -> GpuRuntimes.register("cuda", stand));
      assertThrows(IllegalArgumentException.class, () -> GpuRuntimes.register(" ", stand));
    } finally {
      GpuRuntimes.register("sim", null);
    }
    assertThrows(IllegalArgumentException.class, () -> GpuRuntimes.select("sim"));
  }

  @Test
  void hostMemoryForACopyMustBeNativeAndLargeEnough() {
    assertThrows(IllegalArgumentException.class, () -> HostMemory.requireNative(MemorySegment.ofArray(new byte[16]), 16));
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment s = arena.allocate(16);
      assertEquals(s.address(), HostMemory.requireNative(s, 16));
      assertThrows(IllegalArgumentException.class, () -> HostMemory.requireNative(s, 17));
      assertThrows(IllegalArgumentException.class, () -> HostMemory.requireNative(s, -1));
    }
  }

  @Test
  void aRangeIsCoveredOnlyInsideItsAllocation() {
    PointerInfo info = new PointerInfo(0x1000, true, 0, 0x1000, 0x100, "device");
    assertTrue(info.covers(0x1000, 0x100));
    assertTrue(info.covers(0x10ff, 1));
    assertFalse(info.covers(0x1000, 0x101));
    assertFalse(info.covers(0x1100, 1));
    assertFalse(info.covers(0xfff, 1));
    assertFalse(info.covers(0x1000, -1));
  }

  @Test
  void aClosedBufferRefusesItsPointerAndFreesOnce() {
    int[] frees = {0};
    DeviceBuffer buffer = new DeviceBuffer("test", 0, 0xdead000, 64, () -> frees[0]++);
    assertEquals(0xdead000, buffer.address());
    buffer.close();
    buffer.close();
    assertEquals(1, frees[0]);
    IllegalStateException e = assertThrows(IllegalStateException.class, buffer::address);
    assertTrue(e.getMessage().contains("closed"), e.getMessage());
  }
}
