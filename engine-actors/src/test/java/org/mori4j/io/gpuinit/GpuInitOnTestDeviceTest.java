package org.mori4j.io.gpuinit;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.io.gpuinit.GpuQueueLayout.*;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.TestGpuDevice;
import org.mori4j.io.gpuinit.HostDevice.Cqe;
import org.mori4j.io.gpuinit.HostDevice.Wr;
import org.mori4j.natives.cuda.Nvrtc;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.transport.xgmi.HostBackedGpuRuntime;

/**
 * The GPU side of the proxy on transport's in-memory test device ({@link HostBackedGpuRuntime}, selected through
 * {@code mori4j.gpu.runtime}): endpoints with {@code onGpu} (their block from the runtime's pinned allocator), GPU
 * regions written over the engine (TCP staging), a SEND read from and landing in GPU memory (the proxy's copies on
 * its own streams), and atomics on GPU memory (the atomic kernel's launch arguments, executed by a kernel body this
 * test teaches the device) with the old value landing in GPU memory. The atomic kernel's CUDA source itself is
 * compiled with NVRTC where the library is found; that it runs right on a GPU is G2's gpu-tagged tests'.
 */
class GpuInitOnTestDeviceTest {
  private static final String MODE = "gpuinit-test-device";
  private static Path dir;
  private static HostBackedGpuRuntime device;

  @BeforeAll
  static void useTheTestDevice() {
    dir = HostBackedGpuRuntime.newDirectory();
    device = new HostBackedGpuRuntime(2, 20, true, dir);
    // the atomic kernel's contract: (u64* target, int cas, u64 compareAdd, u64 swap, u64* old)
    device.defineKernel("mori4j_gpuinit_atomic", l -> {
      long target = le(l.args().get(0)), cmp = le(l.args().get(2)), swap = le(l.args().get(3)), old = le(l.args().get(4));
      boolean cas = le(l.args().get(1)) != 0;
      MemorySegment t = MemorySegment.ofAddress(target).reinterpret(8);
      long v = cas ? (long) HostDevice.LONG.compareAndExchange(t, 0L, cmp, swap) : (long) HostDevice.LONG.getAndAdd(t, 0L, cmp);
      MemorySegment.ofAddress(old).reinterpret(8).set(ValueLayout.JAVA_LONG, 0, v);
    });
    TestGpuDevice.select(MODE, device);
  }

  @AfterAll
  static void forgetTheTestDevice() {
    TestGpuDevice.forget(MODE, device);
  }

  private static long le(byte[] b) {
    return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getLong();
  }

  private static MemorySegment view(DeviceBuffer b) {
    return MemorySegment.ofAddress(b.address()).reinterpret(b.size());
  }

  @Test
  void gpuEndpointsMoveGpuMemoryAndDoAtomicsOnIt() {
    try (GpuInitBed bed = new GpuInitBed()) {
      assertEquals(MODE, bed.ca.settings.gpuRuntime());
      RdmaEndpointConfig cfg = new RdmaEndpointConfig(true, 0, 32, 64, 8);
      RdmaEndpoint x = bed.ca.createEndpoint(cfg), y = bed.cb.createEndpoint(new RdmaEndpointConfig(true, 1, 32, 64, 8));
      bed.ca.connectEndpoint(x, y.handle());
      bed.cb.connectEndpoint(y, x.handle());
      HostDevice dx = new HostDevice(x), dy = new HostDevice(y);
      int size = 1 << 20;
      try (DeviceBuffer a = device.allocDevice(0, size); DeviceBuffer b = device.allocDevice(1, size)) {
        MemorySegment va = view(a), vb = view(b);
        for (int i = 0; i < size; i += 8) va.set(ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L);
        vb.fill((byte) 0);
        RdmaMemoryRegion ma = bed.ca.registerMemoryRegion(a.address(), size, 0, MemoryLocationType.GPU, ACCESS_ALL);
        RdmaMemoryRegion mb = bed.cb.registerMemoryRegion(b.address(), size, 1, MemoryLocationType.GPU, ACCESS_ALL);

        dx.post(Wr.write(a.address(), ma.lkey(), b.address(), mb.rkey(), size / 2, FLAG_SIGNALED, 1));
        assertEquals(WC_SUCCESS, dx.awaitCqe().status());
        assertEquals(-1, MemorySegment.mismatch(va, 0, size / 2, vb, 0, size / 2), "GPU to GPU over the engine");

        // SEND: payload read from GPU memory, landing in a receive in GPU memory
        dy.postRecv(b.address() + size - 4096, mb.lkey(), 4096, 5);
        dx.post(Wr.send(a.address() + 64, ma.lkey(), 3000, FLAG_SIGNALED, 2));
        assertEquals(WC_SUCCESS, dx.awaitCqe().status());
        Cqe r = dy.awaitCqe();
        assertEquals(WC_SUCCESS, r.status(), r.toString());
        assertEquals(3000, r.byteLen());
        assertEquals(-1, MemorySegment.mismatch(va, 64, 3064, vb, size - 4096, size - 4096 + 3000));

        // atomics on the target's GPU memory; old values into the initiator's GPU memory and its atomic result cells
        long word = b.address() + size - 8192;
        vb.set(ValueLayout.JAVA_LONG, size - 8192, 40);
        dx.post(Wr.fetchAdd(a.address() + size - 8, ma.lkey(), word, mb.rkey(), 2, FLAG_SIGNALED, 3));
        assertEquals(WC_SUCCESS, dx.awaitCqe().status());
        assertEquals(40, va.get(ValueLayout.JAVA_LONG, size - 8), "old value in the initiator's GPU memory");
        assertEquals(42, vb.get(ValueLayout.JAVA_LONG, size - 8192));
        long cells = dx.m.get(ValueLayout.JAVA_LONG, CTRL_ATOMIC_RESULTS);
        int internal = dx.m.get(ValueLayout.JAVA_INT, CTRL_INTERNAL_LKEY);
        long idx = dx.post(Wr.cas(cells + 3 * 8, internal, word, mb.rkey(), 42, 7, FLAG_SIGNALED, 4));
        assertEquals(3, idx);
        assertEquals(WC_SUCCESS, dx.awaitCqe().status());
        assertEquals(42, MemorySegment.ofAddress(cells).reinterpret(32 * 8).get(ValueLayout.JAVA_LONG, 3 * 8), "old value in result cell 3");
        assertEquals(7, vb.get(ValueLayout.JAVA_LONG, size - 8192));
        assertTrue(x.errors().isEmpty() && y.errors().isEmpty(), x.errors() + " " + y.errors());
        bed.ca.deregisterMemoryRegion(ma);
        bed.cb.deregisterMemoryRegion(mb);
      }
    }
  }

  @Test
  void theAtomicKernelCompilesWithNvrtc() {
    Assumptions.assumeTrue(Nvrtc.library().available(), "no NVRTC here: " + Nvrtc.library().failure());
    byte[] ptx = Nvrtc.compile(GpuAtomics.SOURCE, "mori4j_gpuinit_atomic.cu", "-arch=compute_90");
    String s = new String(ptx, StandardCharsets.US_ASCII);
    assertTrue(s.contains(".entry mori4j_gpuinit_atomic"), s);
    assertTrue(s.contains("atom.sys") || s.contains(".sys."), "system-scope atomics: " + s);
  }
}
