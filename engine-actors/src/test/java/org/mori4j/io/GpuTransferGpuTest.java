package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.mori4j.io.Bytes.*;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mori4j.io.internal.GpuStaging;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;

/**
 * GPU memory through the engine over TCP between two JVMs (the target in a child JVM): CPU->GPU, GPU->CPU
 * and GPU0->GPU1 (GPU0->GPU0 with one device), written and read back, byte-exact from 1 B to 256 MiB, plus a
 * batch and a session; bad device pointers refused at registration; every staging buffer freed on close.
 * Runs on the GPU machine only ({@code -Dgroups=gpu -DexcludedTestGroups=none}); skips, saying why, elsewhere.
 */
@Tag("gpu")
class GpuTransferGpuTest {
  private static final long BIG = 256L << 20;
  private static final long REMOTE_OFFSET = 7;
  private static final long[] SIZES = {1, 4096, (1L << 20) + 3, 64L << 20, 256L << 20};
  private static GpuRuntime gpu;

  @BeforeEach
  void requireGpu() {
    gpu = GpuRuntimes.select("auto");
    assumeTrue(gpu.available(), "no GPU runtime on this machine: " + gpu.version());
  }

  private static Process startChild(String key, long size, int device) throws Exception {
    String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
    ProcessBuilder pb = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Xmx512m",
        "-cp", System.getProperty("java.class.path"), GpuTargetProcessMain.class.getName(), key, Long.toString(size),
        Integer.toString(device));
    pb.redirectErrorStream(true);
    return pb.start();
  }

  private static String[] awaitReady(Process child) throws Exception {
    BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    StringBuilder log = new StringBuilder();
    String line;
    while ((line = out.readLine()) != null) {
      if (line.startsWith("READY ")) {
        Thread drain = new Thread(() -> {
          try {
            while (out.readLine() != null) {
              // keep the child's pipe from filling
            }
          } catch (java.io.IOException ignored) {
            // child gone
          }
        });
        drain.setDaemon(true);
        drain.start();
        return line.split(" ");
      }
      log.append(line).append('\n');
    }
    throw new AssertionError("child target exited without READY:\n" + log);
  }

  /** One local end of the round trips: where the pattern comes from and where the read-back lands. */
  private record LocalEnd(String name, MemoryDesc src, MemoryDesc dst, long dstDevicePtr, MemorySegment dstHost) {}

  @Test
  void cpuAndGpuEndsAcrossTwoJvmsAreByteExactBothWays() throws Exception {
    int remoteDevice = gpu.deviceCount() > 1 ? 1 : 0;
    String childKey = "gpu-target-" + ProcessHandle.current().pid();
    Process child = startChild(childKey, BIG + REMOTE_OFFSET, remoteDevice);
    try (Arena arena = Arena.ofShared();
         DeviceBuffer devSrc = gpu.allocDevice(0, BIG);
         DeviceBuffer devDst = gpu.allocDevice(0, BIG)) {
      String[] ready = awaitReady(child);
      try (IoEngine engine = IoEngine.create("gpu-initiator-" + ProcessHandle.current().pid(), IoEngineConfig.loopback())) {
        engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
        EngineDesc remoteEngine = engine.discover(ready[1], Integer.parseInt(ready[2]));
        engine.registerRemoteEngine(remoteEngine);
        MemoryDesc remoteGpu = engine.lookupMemory(remoteEngine, "gpu").orElseThrow();
        MemoryDesc remoteCpu = engine.lookupMemory(remoteEngine, "cpu").orElseThrow();
        assertEquals(MemoryLocationType.GPU, remoteGpu.location());

        MemorySegment pattern = arena.allocate(BIG, 4096);
        randomize(pattern, 11);
        MemorySegment hostDst = arena.allocate(BIG, 4096);
        MemorySegment check = arena.allocate(BIG, 4096);
        gpu.copyHostToDevice(devSrc.address(), pattern, BIG);
        MemoryDesc hostSrcDesc = engine.registerMemory(pattern);
        MemoryDesc hostDstDesc = engine.registerMemory(hostDst);
        MemoryDesc devSrcDesc = engine.registerMemory(devSrc.address(), BIG, 0, MemoryLocationType.GPU);
        MemoryDesc devDstDesc = engine.registerMemory(devDst.address(), BIG, 0, MemoryLocationType.GPU);
        assertEquals(MemoryLocationType.GPU, devSrcDesc.location());

        LocalEnd cpu = new LocalEnd("CPU", hostSrcDesc, hostDstDesc, 0, hostDst);
        LocalEnd dev = new LocalEnd("GPU0", devSrcDesc, devDstDesc, devDst.address(), null);
        Object[][] cases = {{cpu, remoteGpu, "GPU" + remoteDevice}, {dev, remoteCpu, "CPU"}, {dev, remoteGpu, "GPU" + remoteDevice}};
        long uid = 1;
        for (Object[] c : cases) {
          LocalEnd l = (LocalEnd) c[0];
          MemoryDesc remote = (MemoryDesc) c[1];
          for (long size : SIZES) {
            String what = l.name() + "->" + c[2] + " " + size + " B";
            assertSucceeds(engine.write(l.src(), 0, remote, REMOTE_OFFSET, size, uid++), what + " write");
            clear(l, size);
            assertSucceeds(engine.read(l.dst(), 0, remote, REMOTE_OFFSET, size, uid++), what + " read back");
            assertArrived(l, pattern, check, size, what);
          }
        }

        // a batch from GPU memory into remote GPU memory, read back as a batch into host memory
        long[] lo = {0, 5 << 20, (9 << 20) + 1};
        long[] ro = {100, (20 << 20) + 3, 40 << 20};
        long[] sz = {(3 << 20) + 1, 4096, (6 << 20) + 7};
        TransferStatus bw = engine.batchWrite(List.of(devSrcDesc), List.of(lo), List.of(remoteGpu), List.of(ro), List.of(sz),
            new long[] {uid++}).get(0);
        assertSucceeds(bw, "batch write GPU->GPU");
        hostDst.fill((byte) 0);
        TransferStatus br = engine.batchRead(List.of(hostDstDesc), List.of(lo), List.of(remoteGpu), List.of(ro), List.of(sz),
            new long[] {uid++}).get(0);
        assertSucceeds(br, "batch read GPU->CPU");
        for (int i = 0; i < lo.length; i++) assertRangeEquals(pattern, lo[i], hostDst, lo[i], sz[i], "batch block " + i);

        // a session between local GPU memory and remote GPU memory
        IoEngineSession s = engine.createSession(devSrcDesc, remoteGpu).orElseThrow(() -> new AssertionError("no session GPU->GPU"));
        assertSucceeds(s.write(0, 0, 8L << 20, s.allocateTransferUid()), "session write");
        IoEngineSession back = engine.createSession(devDstDesc, remoteGpu).orElseThrow();
        gpu.fill(devDst.address(), (byte) 0, 8L << 20);
        assertSucceeds(back.read(0, 0, 8L << 20, back.allocateTransferUid()), "session read");
        gpu.copyDeviceToHost(check, devDst.address(), 8L << 20);
        assertRangeEquals(pattern, 0, check, 0, 8L << 20, "session round trip");
        assertTrue(GpuStaging.openSlotsInProcess() > 0, "GPU transfers went through staging buffers");
      }
      assertEquals(0, GpuStaging.openSlotsInProcess(), "closing the engine frees every staging buffer");
    } finally {
      child.getOutputStream().close();
      if (!child.waitFor(20, TimeUnit.SECONDS)) child.destroyForcibly();
    }
  }

  private static void clear(LocalEnd l, long size) {
    if (l.dstHost() != null) l.dstHost().asSlice(0, size).fill((byte) 0);
    else gpu.fill(l.dstDevicePtr(), (byte) 0, size);
  }

  private static void assertArrived(LocalEnd l, MemorySegment pattern, MemorySegment check, long size, String what) {
    MemorySegment got = l.dstHost();
    if (got == null) {
      gpu.copyDeviceToHost(check, l.dstDevicePtr(), size);
      got = check;
    }
    assertRangeEquals(pattern, 0, got, 0, size, what);
  }

  @Test
  void badDevicePointersAreRefusedClearly() {
    try (Arena arena = Arena.ofShared();
         IoEngine engine = IoEngine.create("gpu-bad-ptr-" + ProcessHandle.current().pid(), IoEngineConfig.loopback());
         DeviceBuffer buf = gpu.allocDevice(0, 1 << 20)) {
      engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      MemorySegment host = arena.allocate(1 << 20, 4096);
      refused(() -> engine.registerMemory(host.address(), 1 << 20, 0, MemoryLocationType.GPU), "not");
      refused(() -> engine.registerMemory(buf.address(), (1 << 20) + 1, 0, MemoryLocationType.GPU), "past its allocation");
      int wrong = gpu.deviceCount() > 1 ? 1 : gpu.deviceCount();
      refused(() -> engine.registerMemory(buf.address(), 1 << 20, wrong, MemoryLocationType.GPU), "not device " + wrong);
      DeviceBuffer freed = gpu.allocDevice(0, 1 << 20);
      long stale = freed.address();
      freed.close();
      refused(() -> engine.registerMemory(stale, 1 << 20, 0, MemoryLocationType.GPU), "not");
      MemoryDesc ok = engine.registerMemory(buf.address(), 1 << 20, 0, MemoryLocationType.GPU);
      assertEquals(MemoryLocationType.GPU, ok.location());
      engine.deregisterMemory(ok);
    }
  }

  private static void refused(org.junit.jupiter.api.function.Executable call, String fragment) {
    IoEngineException e = assertThrows(IoEngineException.class, call);
    assertEquals(StatusCode.ERR_INVALID_ARGS, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains(fragment), "'" + fragment + "' not in: " + e.getMessage());
  }

}
