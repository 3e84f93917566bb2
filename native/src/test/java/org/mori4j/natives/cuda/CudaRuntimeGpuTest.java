package org.mori4j.natives.cuda;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.DeviceMemoryInfo;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuEvent;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.HostRegistration;
import org.mori4j.natives.gpu.IpcMapping;
import org.mori4j.natives.gpu.KernelArgs;
import org.mori4j.natives.gpu.PinnedBuffer;
import org.mori4j.natives.gpu.PointerInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CUDA runtime on a real GPU (the project's H100/H200 machine, CUDA 13): NVRTC-compiled kernels fill and
 * checksum device memory, every copy kind is byte-exact, pointer checks refuse what is not device memory of
 * the right size, IPC handles open in another process, and closing every owner gives all memory back.
 * Tagged {@code gpu}: the default build leaves it out, and without a CUDA device it skips saying why.
 */
@Tag("gpu")
class CudaRuntimeGpuTest {
  private static final Logger LOG = LoggerFactory.getLogger(CudaRuntimeGpuTest.class);
  private static final long MIB = 1L << 20;

  static final String KERNELS = """
      extern "C" __global__ void fill(unsigned int* out, unsigned long long n, unsigned int seed) {
        for (unsigned long long i = blockIdx.x * (unsigned long long) blockDim.x + threadIdx.x; i < n;
             i += (unsigned long long) gridDim.x * blockDim.x) {
          out[i] = (unsigned int) (i * 2654435761ull) ^ seed;
        }
      }
      extern "C" __global__ void checksum(const unsigned int* in, unsigned long long n, unsigned long long* sum) {
        unsigned long long local = 0;
        for (unsigned long long i = blockIdx.x * (unsigned long long) blockDim.x + threadIdx.x; i < n;
             i += (unsigned long long) gridDim.x * blockDim.x) {
          local += in[i];
        }
        atomicAdd(sum, local);
      }
      __device__ unsigned int marker = 0x1234abcdu;
      """;

  private static GpuRuntime runtime;

  @BeforeAll
  static void openCuda() {
    runtime = GpuRuntimes.select("cuda");
    if (runtime.available()) {
      LOG.info("{} with {} device(s): {} (compute {})", runtime.version(), runtime.deviceCount(), runtime.deviceName(0),
          runtime.computeCapability(0));
    }
  }

  /** Per test, not in {@code @BeforeAll}: surefire reports a class-level skip as zero tests, hiding why. */
  @BeforeEach
  void needsCuda() {
    Assumptions.assumeTrue(runtime.available(), "no CUDA GPU here: " + runtime.version());
  }

  @Test
  void nvrtcKernelsFillAndChecksumDeviceMemory() {
    long n = 4 * MIB; // 16 MiB of uints
    int seed = 0x5eed1234;
    try (GpuModule module = runtime.loadModule(0, runtime.compile(0, KERNELS, "kernels.cu"));
         DeviceBuffer data = runtime.allocDevice(0, n * 4);
         DeviceBuffer sum = runtime.allocDevice(0, 8);
         GpuStream stream = runtime.createStream(0);
         Arena arena = Arena.ofConfined()) {
      runtime.fill(sum.address(), (byte) 0, 8);
      runtime.copyDeviceToHost(arena.allocate(8), sum.address(), 8); // the memset is on the legacy stream; wait for it
      runtime.launch(module.function("fill"), Dim3.of(512), Dim3.of(256), 0, stream,
          KernelArgs.of().pointer(data.address()).i64(n).i32(seed));
      runtime.launch(module.function("checksum"), Dim3.of(512), Dim3.of(256), 0, stream,
          KernelArgs.of().pointer(data.address()).i64(n).pointer(sum.address()));
      stream.synchronize();

      MemorySegment host = arena.allocate(n * 4);
      runtime.copyDeviceToHost(host, data.address(), n * 4);
      long expectedSum = 0;
      for (long i = 0; i < n; i++) {
        int expected = (int) (i * 2654435761L) ^ seed;
        int actual = host.getAtIndex(JAVA_INT, i);
        if (actual != expected) throw new AssertionError("element " + i + ": " + actual + " != " + expected);
        expectedSum += Integer.toUnsignedLong(expected);
      }
      MemorySegment deviceSum = arena.allocate(8);
      runtime.copyDeviceToHost(deviceSum, sum.address(), 8);
      assertEquals(expectedSum, deviceSum.get(JAVA_LONG, 0), "checksum kernel");

      GpuModule.GlobalSymbol marker = module.global("marker");
      assertEquals(4, marker.size());
      MemorySegment markerValue = arena.allocate(4);
      runtime.copyDeviceToHost(markerValue, marker.address(), 4);
      assertEquals(0x1234abcd, markerValue.get(JAVA_INT, 0));

      NativeException missing = assertThrows(NativeException.class, () -> module.function("noSuchKernel"));
      assertTrue(missing.getMessage().contains("noSuchKernel"), missing.getMessage());
    }
  }

  @Test
  void aCompileErrorCarriesTheCompilerLog() {
    NativeException e = assertThrows(NativeException.class,
        () -> runtime.compile(0, "extern \"C\" __global__ void k() { not_declared = 1; }", "broken.cu"));
    assertEquals("NVRTC_ERROR_COMPILATION", e.codeName());
    assertTrue(e.getMessage().contains("not_declared"), e.getMessage());
  }

  @Test
  void synchronousCopiesAreByteExact() {
    for (long size : new long[] {1, 4097, MIB + 3, 64 * MIB}) {
      try (Arena arena = Arena.ofConfined(); DeviceBuffer a = runtime.allocDevice(0, size); DeviceBuffer b = runtime.allocDevice(0, size)) {
        MemorySegment src = random(arena, size, size);
        MemorySegment dst = arena.allocate(size);
        runtime.copyHostToDevice(a.address(), src, size);
        runtime.copyDeviceToDevice(b.address(), a.address(), size);
        runtime.copyDeviceToHost(dst, b.address(), size);
        assertEquals(-1, src.mismatch(dst), "size " + size);
      }
    }
  }

  @Test
  void asynchronousCopiesThroughPinnedAndRegisteredMemoryAreByteExact() {
    long size = 32 * MIB + 5;
    try (Arena arena = Arena.ofConfined();
         PinnedBuffer pinnedSrc = runtime.allocPinned(size);
         PinnedBuffer pinnedDst = runtime.allocPinned(size);
         DeviceBuffer a = runtime.allocDevice(0, size);
         DeviceBuffer b = runtime.allocDevice(0, size);
         GpuStream stream = runtime.createStream(0);
         GpuEvent start = runtime.createEvent(0, true);
         GpuEvent end = runtime.createEvent(0, true)) {
      MemorySegment.copy(random(arena, size, 7), 0, pinnedSrc.segment(), 0, size);
      start.record(stream);
      runtime.copyHostToDeviceAsync(a.address(), pinnedSrc.segment(), size, stream);
      runtime.copyDeviceToDeviceAsync(b.address(), a.address(), size, stream);
      runtime.copyDeviceToHostAsync(pinnedDst.segment(), b.address(), size, stream);
      end.record(stream);
      end.synchronize();
      assertTrue(end.isComplete() && stream.isComplete());
      assertEquals(-1, pinnedSrc.segment().mismatch(pinnedDst.segment()));
      assertTrue(end.elapsedMillisSince(start) > 0);

      // whole pages: older drivers documented page alignment for cuMemHostRegister
      MemorySegment registered = arena.allocate((size + 4095) / 4096 * 4096, 4096);
      try (HostRegistration registration = runtime.registerHost(registered)) {
        runtime.copyDeviceToHostAsync(registration.segment(), a.address(), size, stream);
        stream.synchronize();
      }
      assertEquals(-1, pinnedSrc.segment().mismatch(registered.asSlice(0, size)));
    }
  }

  @Test
  void copiesWorkFromAnyThread() throws Exception {
    try (Arena arena = Arena.ofShared(); DeviceBuffer a = runtime.allocDevice(0, MIB)) {
      MemorySegment src = random(arena, MIB, 3);
      MemorySegment dst = arena.allocate(MIB);
      runtime.copyHostToDevice(a.address(), src, MIB);
      // a fresh thread has no current context: the runtime must make one current itself
      CompletableFuture.runAsync(() -> runtime.copyDeviceToHost(dst, a.address(), MIB), r -> new Thread(r).start()).get(60, TimeUnit.SECONDS);
      assertEquals(-1, src.mismatch(dst));
    }
  }

  @Test
  void peerCopiesBetweenTwoDevicesAreByteExact() {
    Assumptions.assumeTrue(runtime.deviceCount() >= 2, "peer copies need 2 GPUs; this machine has " + runtime.deviceCount());
    long size = 64 * MIB + 1;
    if (runtime.canAccessPeer(0, 1)) {
      runtime.enablePeerAccess(0, 1);
      runtime.enablePeerAccess(0, 1); // idempotent
      runtime.enablePeerAccess(1, 0);
    } else {
      LOG.info("devices 0 and 1 have no direct peer access; cuMemcpyPeer stages through the host");
    }
    try (Arena arena = Arena.ofConfined();
         DeviceBuffer on0 = runtime.allocDevice(0, size);
         DeviceBuffer on1 = runtime.allocDevice(1, size);
         DeviceBuffer back = runtime.allocDevice(0, size);
         GpuStream stream = runtime.createStream(1)) {
      MemorySegment src = random(arena, size, 11);
      MemorySegment dst = arena.allocate(size);
      runtime.copyHostToDevice(on0.address(), src, size);
      runtime.copyPeer(on1.address(), 1, on0.address(), 0, size);
      runtime.copyDeviceToHost(dst, on1.address(), size);
      assertEquals(-1, src.mismatch(dst), "device 0 -> device 1");

      runtime.copyPeerAsync(back.address(), 0, on1.address(), 1, size, stream);
      stream.synchronize();
      dst.fill((byte) 0);
      runtime.copyDeviceToHost(dst, back.address(), size);
      assertEquals(-1, src.mismatch(dst), "device 1 -> device 0 (async)");

      assertEquals(1, runtime.pointerInfo(on1.address()).device());
      IllegalArgumentException wrongDevice = assertThrows(IllegalArgumentException.class, () -> runtime.requireDeviceMemory(on1.address(), size, 0));
      assertTrue(wrongDevice.getMessage().contains("device 1"), wrongDevice.getMessage());
    }
  }

  @Test
  void pointerAttributesIdentifyDeviceMemoryAndItsRange() {
    long size = 4 * MIB; // a multiple of the 2 MiB allocation granularity, so the range is exactly this
    try (DeviceBuffer buffer = runtime.allocDevice(0, size)) {
      PointerInfo inside = runtime.pointerInfo(buffer.address() + 100);
      assertTrue(inside.deviceMemory(), inside.toString());
      assertEquals(0, inside.device());
      assertEquals(buffer.address(), inside.rangeStart());
      assertEquals(size, inside.rangeSize());

      runtime.requireDeviceMemory(buffer.address(), size, 0);
      runtime.requireDeviceMemory(buffer.address() + size - 1, 1, 0);
    }
  }

  @Test
  void badDevicePointersAreRefusedClearly() {
    long size = 4 * MIB;
    try (Arena arena = Arena.ofConfined(); PinnedBuffer pinned = runtime.allocPinned(MIB)) {
      MemorySegment host = arena.allocate(MIB);
      assertRefused(host.address(), MIB, "not cuda device memory");
      assertRefused(pinned.address(), MIB, "CU_MEMORYTYPE_HOST");

      DeviceBuffer buffer = runtime.allocDevice(0, size);
      long address = buffer.address();
      assertRefused(address, size + 1, "runs past its allocation");
      assertRefused(address + size - 8, 16, "runs past its allocation");
      assertRefused(address, 0, "size must be positive");
      buffer.close();
      assertRefused(address, size, "not cuda device memory");
      assertThrows(IllegalStateException.class, buffer::address, "a closed buffer hands out no pointer");
    }
  }

  private static void assertRefused(long address, long size, String why) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> runtime.requireDeviceMemory(address, size, 0),
        () -> "0x" + Long.toHexString(address) + " +" + size + " was accepted");
    assertTrue(e.getMessage().contains(why) && e.getMessage().contains(Long.toHexString(address)), e.getMessage());
  }

  @Test
  void ipcHandlesOpenInAnotherProcess() throws IOException, InterruptedException {
    long size = 8 * MIB;
    try (DeviceBuffer buffer = runtime.allocDevice(0, size); Arena arena = Arena.ofConfined()) {
      runtime.fill(buffer.address(), (byte) 0x5a, size);
      runtime.copyDeviceToHost(arena.allocate(1), buffer.address(), 1); // the fill has landed before the child looks
      byte[] handle = runtime.ipcHandle(buffer.address());
      assertEquals(64, handle.length);

      try (IpcMapping same = runtime.openIpcHandle(0, handle)) {
        LOG.info("the driver opened an IPC handle in its own process: {}", same);
      } catch (NativeException e) {
        LOG.info("the driver refuses an IPC handle in its own process ({}); the child process is the real test", e.getMessage());
      }

      String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
      String java = ProcessHandle.current().info().command().orElse("java");
      Process child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp", classpath, IpcChild.class.getName(), "0",
          HexFormat.of().formatHex(handle), Long.toString(size), Integer.toString(0x5a), Integer.toString(0xa5))
          .redirectErrorStream(true).start();
      String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(child.waitFor(120, TimeUnit.SECONDS), "child did not finish: " + out);
      assertTrue(out.contains("IPC-CHILD-OK " + size) && child.exitValue() == 0, "child said: " + out);

      MemorySegment host = arena.allocate(size);
      runtime.copyDeviceToHost(host, buffer.address(), size);
      MemorySegment expected = arena.allocate(size).fill((byte) 0xa5);
      assertEquals(-1, expected.mismatch(host), "the child's writes are visible in the exporting process");
    }
  }

  /**
   * A forged handle (zeros, random bytes) and a stale one (its allocation freed by the exporter) make
   * {@code cuIpcOpenMemHandle} fail with an error in the importing process, which must survive it: the child
   * JVM exits with the NativeException, not a crash, so a driver that faulted would fail this test, not the run.
   */
  @Test
  void forgedAndStaleIpcHandlesFailWithAnErrorNotACrash() throws IOException, InterruptedException {
    byte[] random = new byte[64];
    new java.util.Random(42).nextBytes(random);
    DeviceBuffer freed = runtime.allocDevice(0, 2 * MIB);
    byte[] stale = runtime.ipcHandle(freed.address());
    freed.close();
    for (byte[] handle : List.of(new byte[64], random, stale)) {
      String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
      String java = ProcessHandle.current().info().command().orElse("java");
      Process child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp", classpath, IpcChild.class.getName(), "0",
          HexFormat.of().formatHex(handle), Long.toString(MIB), "0", "0").redirectErrorStream(true).start();
      String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(child.waitFor(120, TimeUnit.SECONDS), "child did not finish: " + out);
      LOG.info("opening a bad IPC handle in a child: exit {}, {}", child.exitValue(), out.lines().filter(l -> l.contains("cuIpcOpenMemHandle")).findFirst().orElse(out));
      assertEquals(1, child.exitValue(), "an uncaught NativeException (exit 1), not a crash: " + out);
      assertTrue(out.contains("NativeException") && out.contains("cuIpcOpenMemHandle"), out);
    }
  }

  @Test
  void devicesNameTheirPciLocationAndMultiprocessors() {
    for (int d = 0; d < runtime.deviceCount(); d++) {
      assertTrue(runtime.pciBusId(d).matches("[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}"), runtime.pciBusId(d));
      assertTrue(runtime.multiprocessorCount(d) > 0);
    }
    assertEquals(runtime.deviceCount(), java.util.stream.IntStream.range(0, runtime.deviceCount()).mapToObj(runtime::pciBusId).distinct().count());
  }

  @Test
  void closingEveryOwnerGivesAllDeviceMemoryBack() {
    long chunk = 32 * MIB;
    int count = 32;
    DeviceMemoryInfo before = runtime.memoryInfo(0);
    List<AutoCloseable> owners = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      owners.add(runtime.allocDevice(0, chunk));
      owners.add(runtime.allocPinned(MIB));
      owners.add(runtime.createStream(0));
      owners.add(runtime.createEvent(0, i % 2 == 0));
    }
    DeviceMemoryInfo during = runtime.memoryInfo(0);
    assertTrue(before.free() - during.free() >= count * chunk, "allocations not visible: " + before + " -> " + during);
    for (AutoCloseable owner : owners) {
      try {
        owner.close();
        owner.close(); // a second close is a no-op
      } catch (Exception e) {
        throw new AssertionError(e);
      }
    }
    DeviceMemoryInfo after = runtime.memoryInfo(0);
    assertTrue(Math.abs(before.free() - after.free()) <= 64 * MIB, "memory not given back: " + before + " -> " + after);

    GpuStream stream = (GpuStream) owners.get(2);
    assertThrows(IllegalStateException.class, stream::synchronize, "a closed stream refuses use");
    assertThrows(IllegalStateException.class, () -> ((PinnedBuffer) owners.get(1)).segment(), "a closed pinned buffer refuses use");
  }

  /** {@code size} bytes of a deterministic pseudo-random pattern. */
  private static MemorySegment random(Arena arena, long size, long seed) {
    MemorySegment s = arena.allocate(size, 8);
    long x = seed * 0x9E3779B97F4A7C15L + 1;
    long i = 0;
    for (; i + 8 <= size; i += 8) {
      x ^= x << 13;
      x ^= x >>> 7;
      x ^= x << 17;
      s.set(JAVA_LONG, i, x);
    }
    for (; i < size; i++) s.set(JAVA_BYTE, i, (byte) (x >>> (8 * (i & 7))));
    return s;
  }
}
