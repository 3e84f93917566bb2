package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.mori4j.io.XgmiTransferSupport.*;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.DeviceMemoryInfo;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.transport.xgmi.XgmiBackend;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The XGMI backend through the engine: engines of one process and of two processes (the target in a child
 * JVM), single transfers from 1 B up to {@link #maxSingle()} and batches of 1 to 32,768 blocks (each batch one
 * kernel launch) written and read byte-exact, routing (XGMI for GPU pairs of this host, TCP otherwise and when
 * a descriptor lacks XGMI data), forged and stale descriptors refused, and every stream, event, block table,
 * kernel module and IPC mapping given back on close. Run on a real GPU by {@link XgmiTransferGpuTest} and on
 * the in-memory device of the transport tests by {@link XgmiTransferOnTestDeviceTest}; with one GPU both ends
 * are on device 0 (device-to-device copies; peer copies need two devices, which the in-memory device has).
 */
abstract class XgmiTransferTests {
  private static final Logger LOG = LoggerFactory.getLogger(XgmiTransferTests.class);
  static final long MIB = 1L << 20;
  private static final Duration WAIT = Duration.ofSeconds(120);
  static GpuRuntime gpu;
  private DeviceMemoryInfo memoryBefore;

  /** The runtime the engines use (the test makes them select it). */
  abstract GpuRuntime runtime();

  /** Largest single transfer. */
  abstract long maxSingle();

  /** Buffer of the child target. */
  abstract long childBuffer();

  /** Bytes between the starts of two blocks of a batch (at least 4 KiB + 16). */
  abstract long batchStride();

  /** What the child target needs to use the same device as this process (after its key, size and device). */
  abstract List<String> childRuntimeArgs();

  @BeforeEach
  void requireGpu() {
    gpu = runtime();
    assumeTrue(gpu.available(), "no GPU runtime on this machine: " + gpu.version());
    memoryBefore = gpu.memoryInfo(0);
  }

  @AfterEach
  void nothingLeaks() {
    if (gpu == null || !gpu.available()) return;
    assertEquals(0, XgmiBackend.openMappingsInProcess(), "IPC mappings left open");
    assertEquals(0, XgmiBackend.gpuResourcesInProcess(), "streams, events, tables or modules left");
    DeviceMemoryInfo after = gpu.memoryInfo(0);
    assertTrue(Math.abs(memoryBefore.free() - after.free()) <= 64 * MIB, "device memory not given back: " + memoryBefore + " -> " + after);
  }

  static IoEngine engine(String key) {
    IoEngine e = IoEngine.create(key, IoEngineConfig.loopback());
    e.createBackend(BackendType.XGMI, XgmiBackendConfig.defaults());
    e.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
    return e;
  }

  static int remoteDevice() {
    return gpu.deviceCount() > 1 ? 1 : 0;
  }

  static void ok(TransferStatus s, String what) {
    assertTrue(s.await(WAIT), what + ": no answer within " + WAIT);
    assertEquals(StatusCode.SUCCESS, s.code(), what + ": " + s.message());
  }

  private static TransferStatus failed(TransferStatus s, StatusCode code, String fragment) {
    assertTrue(s.await(WAIT), "no answer within " + WAIT);
    assertEquals(code, s.code(), s.message());
    assertTrue(s.message().contains(fragment), s.message());
    return s;
  }

  static void upload(DeviceBuffer d, MemorySegment host) {
    gpu.copyHostToDevice(d.address(), host, host.byteSize());
  }

  static MemorySegment download(Arena arena, DeviceBuffer d, long offset, long length) {
    MemorySegment h = arena.allocate(length, 64);
    gpu.copyDeviceToHost(h, d.address() + offset, length);
    return h;
  }

  private static void zero(DeviceBuffer d, MemorySegment zeros) {
    gpu.copyHostToDevice(d.address(), zeros, d.size());
  }

  @Test
  void sameProcessSingleTransfersAreByteExactFromOneByteToOneGiBBothWays() {
    long max = maxSingle();
    long lo = 3, ro = 5, cap = max + 4096;
    try (Arena arena = Arena.ofShared();
         DeviceBuffer a = gpu.allocDevice(0, cap);
         DeviceBuffer b = gpu.allocDevice(remoteDevice(), cap)) {
      MemorySegment pattern = arena.allocate(cap, 4096);
      GpuPattern.fill(pattern, 11);
      MemorySegment zeros = arena.allocate(cap, 4096);
      try (IoEngine x = engine("xgmi-a"); IoEngine y = engine("xgmi-b")) {
        x.registerRemoteEngine(y.engineDesc());
        MemoryDesc local = x.registerMemory(a.address(), cap, 0, MemoryLocationType.GPU);
        MemoryDesc remote = y.registerMemory(b.address(), cap, remoteDevice(), MemoryLocationType.GPU);
        assertEquals(BackendType.XGMI, x.createSession(local, remote).orElseThrow().backendType());
        for (long size : LongStream.of(1, 7, 4096, 4097, MIB + 3, 64 * MIB, 256 * MIB + 1, max).filter(v -> v <= max).distinct().toArray()) {
          // write: a holds the pattern, b is zero; afterwards b[ro, ro+size) is pattern[lo, lo+size) and nothing around it moved
          upload(a, pattern);
          zero(b, zeros);
          long t0 = System.nanoTime();
          ok(x.write(local, lo, remote, ro, size, x.allocateTransferUid()), "write " + size);
          long writeUs = (System.nanoTime() - t0) / 1000;
          MemorySegment got = download(arena, b, ro - 1, size + 2);
          assertEquals(0, got.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0), "byte before the write, size " + size);
          assertEquals(0, got.get(java.lang.foreign.ValueLayout.JAVA_BYTE, size + 1), "byte after the write, size " + size);
          assertEquals(-1, MemorySegment.mismatch(got, 1, size + 1, pattern, lo, lo + size), "write of " + size + " bytes");
          // read: b holds the pattern, a is zero
          upload(b, pattern);
          zero(a, zeros);
          t0 = System.nanoTime();
          ok(x.read(local, lo, remote, ro, size, x.allocateTransferUid()), "read " + size);
          long readUs = (System.nanoTime() - t0) / 1000;
          got = download(arena, a, lo - 1, size + 2);
          assertEquals(0, got.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0));
          assertEquals(0, got.get(java.lang.foreign.ValueLayout.JAVA_BYTE, size + 1));
          assertEquals(-1, MemorySegment.mismatch(got, 1, size + 1, pattern, ro, ro + size), "read of " + size + " bytes");
          LOG.info("same process GPU0->GPU{}: {} bytes written in {} us, read in {} us (incl. first-use setup)", remoteDevice(), size, writeUs, readUs);
        }
      }
    }
  }

  @Test
  void sameProcessBatchesOfOneTo32768BlocksAreOneKernelLaunchAndByteExactBothWays() {
    long stride = batchStride();
    int maxBlocks = 32768;
    long cap = maxBlocks * stride;
    try (Arena arena = Arena.ofShared();
         DeviceBuffer a = gpu.allocDevice(0, cap);
         DeviceBuffer b = gpu.allocDevice(remoteDevice(), cap);
         IoEngine x = engine("xgmi-batch-a");
         IoEngine y = engine("xgmi-batch-b")) {
      MemorySegment pattern = arena.allocate(cap, 4096);
      GpuPattern.fill(pattern, 21);
      MemorySegment zeros = arena.allocate(cap, 4096);
      x.registerRemoteEngine(y.engineDesc());
      MemoryDesc local = x.registerMemory(a.address(), cap, 0, MemoryLocationType.GPU);
      MemoryDesc remote = y.registerMemory(b.address(), cap, remoteDevice(), MemoryLocationType.GPU);
      IoEngineSession session = x.createSession(local, remote).orElseThrow();
      List<Batch> batches = new ArrayList<>();
      for (int n : new int[] {1, 2, 3, 17, 1000, 4096, 32768}) batches.add(Batch.random(n, stride, n));
      batches.add(fourKiB(4096, stride)); // every block the same size: the kernel's table then carries no sizes
      for (Batch batch : batches) {
        int n = batch.lo().length;
        for (boolean write : new boolean[] {true, false}) {
          DeviceBuffer src = write ? a : b, dst = write ? b : a;
          upload(src, pattern);
          zero(dst, zeros);
          long launches = XgmiBackend.batchLaunchesInProcess();
          long engineLaunches = x.metrics().getXgmiKernelLaunches();
          long t0 = System.nanoTime();
          TransferStatus st = write
              ? x.batchWrite(List.of(local), List.of(batch.lo()), List.of(remote), List.of(batch.ro()), List.of(batch.sizes()), new long[] {x.allocateTransferUid()}).get(0)
              : session.batchRead(batch.lo(), batch.ro(), batch.sizes(), session.allocateTransferUid());
          ok(st, (write ? "batchWrite " : "batchRead ") + n + " blocks");
          long us = (System.nanoTime() - t0) / 1000;
          assertEquals(n == 1 ? 0 : 1, XgmiBackend.batchLaunchesInProcess() - launches, "kernel launches for a batch of " + n);
          assertEquals(n == 1 ? 0 : 1, x.metrics().getXgmiKernelLaunches() - engineLaunches, "the engine's kernel launch count, batch of " + n);
          long used = n * stride;
          MemorySegment got = download(arena, dst, 0, used);
          MemorySegment want = batch.expected(arena, pattern, used, write);
          long bad = got.mismatch(want);
          assertEquals(-1, bad, (write ? "write" : "read") + " batch of " + n + ": first wrong byte at " + bad);
          LOG.info("same process batch {} of {} blocks ({} bytes): {} us", write ? "write" : "read", n, batch.bytes(), us);
        }
      }
    }
  }

  @Test
  void gpuPairsGoOverXgmiEverythingElseOverTcpAndBothAreByteExact() {
    long size = 8 * MIB;
    try (Arena arena = Arena.ofShared();
         DeviceBuffer a = gpu.allocDevice(0, size);
         DeviceBuffer b = gpu.allocDevice(remoteDevice(), size);
         IoEngine x = engine("route-a");
         IoEngine y = engine("route-b");
         IoEngine tcpOnly = IoEngine.create("route-tcp", IoEngineConfig.loopback())) {
      tcpOnly.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      x.registerRemoteEngine(y.engineDesc());
      x.registerRemoteEngine(tcpOnly.engineDesc());
      assertTrue(y.engineDesc().backendData(BackendType.XGMI) != null, "the XGMI backend advertises where its engine runs");
      MemoryDesc local = x.registerMemory(a.address(), size, 0, MemoryLocationType.GPU);
      MemoryDesc remoteGpu = y.registerMemory(b.address(), size, remoteDevice(), MemoryLocationType.GPU);
      MemorySegment hostBuf = arena.allocate(size, 4096);
      MemoryDesc remoteCpu = y.registerMemory(hostBuf);
      MemoryDesc tcpGpu = tcpOnly.registerMemory(b.address(), size, remoteDevice(), MemoryLocationType.GPU);
      assertNotNull(remoteGpu.backendData(BackendType.XGMI));
      assertNull(remoteCpu.backendData(BackendType.XGMI), "host memory gets no XGMI data");

      assertEquals(BackendType.XGMI, x.createSession(local, remoteGpu).orElseThrow().backendType());
      assertEquals(BackendType.TCP, x.createSession(local, remoteCpu).orElseThrow().backendType());
      assertEquals(BackendType.TCP, x.createSession(local, tcpGpu).orElseThrow().backendType(), "a peer without XGMI");
      // a descriptor without XGMI data (an engine that registered before creating XGMI, or stripped): TCP carries it
      Map<BackendType, byte[]> noXgmi = new EnumMap<>(BackendType.class);
      MemoryDesc stripped = new MemoryDesc(remoteGpu.engineKey(), remoteGpu.id(), remoteGpu.deviceId(), remoteGpu.address(), remoteGpu.size(),
          remoteGpu.location(), remoteGpu.accessKey(), noXgmi, remoteGpu.ownerIncarnation());
      assertEquals(BackendType.TCP, x.createSession(local, stripped).orElseThrow().backendType());

      MemorySegment pattern = arena.allocate(size, 4096);
      GpuPattern.fill(pattern, 31);
      MemorySegment zeros = arena.allocate(size, 4096);
      for (MemoryDesc target : List.of(remoteGpu, stripped)) {
        upload(a, pattern);
        zero(b, zeros);
        ok(x.write(local, 0, target, 0, size, x.allocateTransferUid()), "write to " + target);
        assertEquals(-1, download(arena, b, 0, size).mismatch(pattern), "write through " + (target == stripped ? "TCP" : "XGMI"));
      }
      GpuPattern.fill(hostBuf, 32);
      ok(x.read(local, 0, remoteCpu, 0, size, x.allocateTransferUid()), "GPU <- CPU over TCP");
      assertEquals(-1, download(arena, a, 0, size).mismatch(hostBuf));
    }
  }

  @Test
  void crossProcessTransfersAndBatchesAreByteExactAndForgedOrStaleDescriptorsAreRefused() throws Exception {
    long cap = childBuffer() + 4096;
    long big = childBuffer();
    Process child = startChild(cap);
    BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    PrintWriter cmd = new PrintWriter(new OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8), true);
    try (Arena arena = Arena.ofShared(); DeviceBuffer a = gpu.allocDevice(0, cap)) {
      String ready = answer(out, "start");
      assertTrue(ready.startsWith("READY "), ready);
      MemorySegment pattern = arena.allocate(cap, 4096);
      GpuPattern.fill(pattern, 41);
      MemorySegment zeros = arena.allocate(cap, 4096);
      try (IoEngine x = engine("xgmi-initiator-" + ProcessHandle.current().pid())) {
        MemoryDesc remote = childMemory(x, ready);
        MemoryDesc local = x.registerMemory(a.address(), cap, 0, MemoryLocationType.GPU);
        assertEquals(BackendType.XGMI, x.createSession(local, remote).orElseThrow().backendType());

        // single writes, checked by the child's own CRC of its memory; reads of what the child wrote
        long lo = 3, ro = 5;
        upload(a, pattern);
        for (long size : LongStream.of(1, 4097, MIB + 3, 64 * MIB, big).filter(v -> v <= big).distinct().toArray()) {
          ok(x.write(local, lo, remote, ro, size, x.allocateTransferUid()), "cross-process write " + size);
          assertEquals("CRC " + GpuPattern.crc(pattern.asSlice(lo, size)), ask(cmd, out, "CRC " + ro + " " + size), "write of " + size);
        }
        assertEquals(1, XgmiBackend.openMappingsInProcess(), "the child's allocation is mapped once and kept");
        assertEquals("FILLED", ask(cmd, out, "FILL 42"));
        MemorySegment childPattern = arena.allocate(cap, 4096);
        GpuPattern.fill(childPattern, 42);
        for (long size : new long[] {1, 4097, MIB + 3, big}) {
          zero(a, zeros);
          ok(x.read(local, lo, remote, ro, size, x.allocateTransferUid()), "cross-process read " + size);
          assertEquals(-1, MemorySegment.mismatch(download(arena, a, lo, size), 0, size, childPattern, ro, ro + size), "read of " + size);
        }

        // batches both ways (4,096 x 4 KiB is issue 4's benchmark shape; 32,768 mixed blocks)
        long stride = Math.min(8 * 1024, big / 32768);
        for (int n : new int[] {4096, 32768}) {
          long used = n * stride;
          Batch batch = n == 4096 ? fourKiB(n, stride) : Batch.random(n, stride, 7);
          assertEquals("ZEROED", ask(cmd, out, "ZERO"));
          upload(a, pattern);
          long launches = XgmiBackend.batchLaunchesInProcess();
          ok(x.batchWrite(List.of(local), List.of(batch.lo()), List.of(remote), List.of(batch.ro()), List.of(batch.sizes()),
              new long[] {x.allocateTransferUid()}).get(0), "cross-process batchWrite " + n);
          assertEquals(1, XgmiBackend.batchLaunchesInProcess() - launches);
          assertEquals("CRC " + GpuPattern.crc(batch.expected(arena, pattern, used, true)), ask(cmd, out, "CRC 0 " + used), "batch write of " + n);
          assertEquals("FILLED", ask(cmd, out, "FILL 42"));
          zero(a, zeros);
          ok(x.batchRead(List.of(local), List.of(batch.lo()), List.of(remote), List.of(batch.ro()), List.of(batch.sizes()),
              new long[] {x.allocateTransferUid()}).get(0), "cross-process batchRead " + n);
          assertEquals(-1, download(arena, a, 0, used).mismatch(batch.expected(arena, childPattern, used, false)), "batch read of " + n);
        }

        // forged descriptors: each is refused by what the owner confirmed, and the child's memory does not change
        assertEquals("FILLED", ask(cmd, out, "FILL 42"));
        String before = ask(cmd, out, "CRC 0 " + cap);
        byte[] data = remote.backendData(BackendType.XGMI);
        data[data.length - 1] ^= 0x5a; // the IPC handle's last byte
        failed(x.write(local, 0, with(remote, remote.address(), remote.size(), remote.accessKey(), data), 0, 4096, x.allocateTransferUid()),
            StatusCode.ERR_INVALID_ARGS, "differs from what its owner registered");
        failed(x.write(local, 0, with(remote, remote.address(), remote.size() * 4, remote.accessKey(), remote.backendData(BackendType.XGMI)),
            cap + 4096, 4096, x.allocateTransferUid()), StatusCode.ERR_INVALID_ARGS, "exceeds the " + cap + " bytes");
        failed(x.write(local, 0, with(remote, remote.address() + 4096, remote.size() - 4096, remote.accessKey(), remote.backendData(BackendType.XGMI)),
            0, 4096, x.allocateTransferUid()), StatusCode.ERR_INVALID_ARGS, "registered it at 0x");
        failed(x.write(local, 0, with(remote, remote.address(), remote.size(), remote.accessKey() ^ 1, remote.backendData(BackendType.XGMI)),
            0, 4096, x.allocateTransferUid()), StatusCode.ERR_NOT_FOUND, "not registered");
        assertEquals(before, ask(cmd, out, "CRC 0 " + cap), "no forged write touched the child's memory");

        // stale: the child deregisters; its deregistration returns only after this process closed its mapping
        assertEquals(1, XgmiBackend.openMappingsInProcess());
        assertEquals("DEREGISTERED", ask(cmd, out, "DEREG"));
        assertEquals(0, XgmiBackend.openMappingsInProcess(), "the mapping was closed before the owner's deregistration returned");
        failed(x.write(local, 0, remote, 0, 4096, x.allocateTransferUid()), StatusCode.ERR_NOT_FOUND, "not registered");
        failed(x.read(local, 0, remote, 0, 4096, x.allocateTransferUid()), StatusCode.ERR_NOT_FOUND, "not registered");
      }
    } finally {
      cmd.close();
      if (!child.waitFor(60, TimeUnit.SECONDS)) child.destroyForcibly();
    }
  }

  /** The child target (XGMI and TCP) with {@code cap} bytes of GPU memory registered as "gpu"; talk to it through its stdin/stdout. */
  Process startChild(long cap) throws java.io.IOException {
    String childKey = "xgmi-target-" + ProcessHandle.current().pid();
    String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
    List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx2g", "-cp",
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")), XgmiTargetProcessMain.class.getName(),
        childKey, Long.toString(cap), Integer.toString(remoteDevice())));
    command.addAll(childRuntimeArgs());
    return new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
  }
}
