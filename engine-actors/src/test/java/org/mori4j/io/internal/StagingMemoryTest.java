package org.mori4j.io.internal;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.ForwardingGpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.gpu.HostRegistration;
import org.mori4j.natives.gpu.PinnedBuffer;
import org.mori4j.transport.DeviceStaging;
import org.mori4j.transport.StagingTuning;
import org.mori4j.transport.xgmi.HostBackedGpuRuntime;

/**
 * {@code mori4j.tcp.gpu-staging-memory = registered}: the pool's slots are ordinary memory page-locked with
 * {@code registerHost} (never the runtime's pinned allocation), registered when the pool is filled, carry bytes to and
 * from the device exactly, and are unregistered and freed when the staging closes; an unknown value is refused by name.
 */
class StagingMemoryTest {
  @Test
  void registeredSlotsMoveBytesAndAreUnregisteredAtClose() {
    HostBackedGpuRuntime device = new HostBackedGpuRuntime(1, 0);
    AtomicInteger registered = new AtomicInteger();
    AtomicInteger pinned = new AtomicInteger();
    var counting = new ForwardingGpuRuntime(device) {
      @Override
      public HostRegistration registerHost(MemorySegment segment) {
        HostRegistration r = super.registerHost(segment);
        registered.incrementAndGet();
        return new HostRegistration("memory", segment, () -> {
          r.close();
          registered.decrementAndGet();
        });
      }

      @Override
      public PinnedBuffer allocPinned(long size) {
        pinned.incrementAndGet();
        return super.allocPinned(size);
      }
    };
    GpuRuntimes.register("staging-memory-test", counting);
    int open = GpuStaging.openSlotsInProcess();
    GpuStaging staging = new GpuStaging("staging-memory-test", 64 << 10, 2, new StagingTuning(4, 0, true));
    staging.enable();
    staging.prewarm(0);
    assertEquals(2, registered.get(), "the pool's two slots are registered when it is filled");
    try (DeviceBuffer d = device.allocDevice(0, 64 << 10)) {
      MemorySegment dev = MemorySegment.ofAddress(d.address()).reinterpret(64 << 10);
      for (int i = 0; i < 4096; i++) dev.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (i * 7));
      DeviceStaging.Slot slot = staging.openSlot(64 << 10);
      slot.fromDevice(0, d.address(), 0, 4096);
      slot.mark();
      long deadline = System.nanoTime() + 5_000_000_000L;
      while (!slot.done()) assertTrue(System.nanoTime() < deadline, "copy not done in 5 s");
      assertEquals(-1L, slot.buffer().asSlice(0, 4096).mismatch(dev.asSlice(0, 4096)), "device -> registered staging, byte-exact");
      slot.buffer().asSlice(0, 4096).fill((byte) 3);
      slot.toDevice(0, d.address() + 8192, 0, 4096);
      slot.mark();
      while (!slot.done()) assertTrue(System.nanoTime() < deadline, "copy not done in 5 s");
      assertEquals(3, dev.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 8192 + 4095));
      slot.close();
    } finally {
      staging.close();
    }
    assertEquals(0, pinned.get(), "registered staging never uses the runtime's pinned allocation");
    assertEquals(0, registered.get(), "every registration is undone at close");
    assertEquals(open, GpuStaging.openSlotsInProcess());
  }

  @Test
  void anUnknownMemoryKindIsRefusedByName() {
    var e = assertThrows(IllegalArgumentException.class, () -> EngineSettings.stagingTuning(StagingTuningSettingTest.tcp(
        "gpu-staging-pieces = 4\ngpu-copy-spin = 0us\ngpu-staging-memory = hugepages")));
    assertTrue(e.getMessage().contains("mori4j.tcp.gpu-staging-memory") && e.getMessage().contains("hugepages"), e.getMessage());
    assertTrue(EngineSettings.stagingTuning(StagingTuningSettingTest.tcp(
        "gpu-staging-pieces = 4\ngpu-copy-spin = 0us\ngpu-staging-memory = registered")).registeredMemory());
    assertFalse(EngineSettings.load().tcpGpuStagingTuning().registeredMemory(), "reference.conf: pinned");
  }
}
