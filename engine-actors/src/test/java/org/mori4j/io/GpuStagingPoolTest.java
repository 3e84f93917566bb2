package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;

import com.typesafe.config.ConfigFactory;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;
import org.mori4j.io.internal.GpuStaging;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.transport.xgmi.HostBackedGpuRuntime;

/**
 * After GPU memory is registered and the peers are connected, GPU-to-GPU transfers over TCP (8 B to 4 MiB,
 * WRITE and READ, striped over both lanes from 1 MiB) must not allocate pinned or device memory, create streams
 * or events, or load modules: those CUDA calls wait for work running on the device and would deadlock a kernel
 * that spins until the host proxy completes its transfer (issue 13). The in-memory test device is wrapped in a
 * runtime that counts every such call; the staging pool ({@code mori4j.tcp.gpu-staging-prewarm}) must serve
 * every connection's buffers, bytes arrive exact, and closing the engines frees every pooled buffer.
 */
class GpuStagingPoolTest {
  private static final String MODE = "staging-pool-test-device";
  private static final long SIZE = 8L << 20;
  private static final Set<String> SLOW_CALLS = Set.of("allocPinned", "allocDevice", "createStream", "createEvent", "loadModule",
      "compile", "registerHost");

  @Test
  void transfersAfterRegistrationAndConnectOpenNoStagingAndAllocateNothing() throws Exception {
    Path dir = HostBackedGpuRuntime.newDirectory();
    HostBackedGpuRuntime device = new HostBackedGpuRuntime(2, 20, false, dir);
    Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    GpuRuntime counting = (GpuRuntime) Proxy.newProxyInstance(GpuRuntime.class.getClassLoader(), new Class<?>[] {GpuRuntime.class},
        (p, m, args) -> {
          if (SLOW_CALLS.contains(m.getName())) calls.computeIfAbsent(m.getName(), k -> new AtomicInteger()).incrementAndGet();
          try {
            return m.invoke(device, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
    GpuRuntimes.register(MODE, counting);
    int openBefore = GpuStaging.openSlotsInProcess();
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "staging-pool", ConfigFactory.parseString(
        "mori4j.gpu.runtime = " + MODE + "\nmori4j.tcp.gpu-staging-chunk = 256KiB\nmori4j.tcp.gpu-staging-prewarm = 16")
        .withFallback(ConfigFactory.load()));
    String pid = String.valueOf(ProcessHandle.current().pid());
    IoEngine a = null, b = null;
    try (DeviceBuffer da = device.allocDevice(0, SIZE); DeviceBuffer db = device.allocDevice(1, SIZE)) {
      a = IoEngine.create(system, "pool-a-" + pid, IoEngineConfig.loopback());
      b = IoEngine.create(system, "pool-b-" + pid, IoEngineConfig.loopback());
      TcpBackendConfig d = TcpBackendConfig.defaults();
      TcpBackendConfig striped = new TcpBackendConfig(2, 1, 1L << 20, 0, d.peerTimeout(), d.connectTimeout(), true, d.tls());
      a.createBackend(BackendType.TCP, striped);
      b.createBackend(BackendType.TCP, striped);
      MemoryDesc ma = a.registerMemory(da.address(), SIZE, 0, MemoryLocationType.GPU);
      MemoryDesc mb = b.registerMemory(db.address(), SIZE, 1, MemoryLocationType.GPU);
      a.registerRemoteEngine(b.engineDesc());
      b.registerRemoteEngine(a.engineDesc());
      // one slot per buffer: 16 prewarmed per engine at registration, nothing on the data path yet
      assertEquals(openBefore + 32, GpuStaging.openSlotsInProcess(), "prewarmed staging buffers of both engines");
      Map<String, Integer> armed = snapshot(calls);

      MemorySegment va = MemorySegment.ofAddress(da.address()).reinterpret(SIZE);
      MemorySegment vb = MemorySegment.ofAddress(db.address()).reinterpret(SIZE);
      long[] sizes = {8, 4096, 65_537, (256 << 10) + 1, 1L << 20, (3L << 20) + 5, 4L << 20};
      Random rnd = new Random(13);
      long uid = 1;
      for (long size : sizes) {
        fill(va, rnd);
        ok(a.write(ma, 3, mb, 5, size, uid++), "write " + size);
        assertEquals(-1, va.asSlice(3, size).mismatch(vb.asSlice(5, size)), "GPU -> GPU write of " + size + " B");
        fill(vb, rnd);
        ok(a.read(ma, 11, mb, 7, size, uid++), "read " + size);
        assertEquals(-1, va.asSlice(11, size).mismatch(vb.asSlice(7, size)), "GPU <- GPU read of " + size + " B");
      }
      assertEquals(armed, snapshot(calls), "CUDA calls that wait for the device, made on the data path (before -> after)");
      assertEquals(openBefore + 32, GpuStaging.openSlotsInProcess(), "staging buffers opened on the data path");
    } finally {
      if (a != null) a.close();
      if (b != null) b.close();
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(20, java.util.concurrent.TimeUnit.SECONDS);
      GpuRuntimes.register(MODE, null);
    }
    long end = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (GpuStaging.openSlotsInProcess() != openBefore && System.nanoTime() < end) Thread.sleep(10);
    assertEquals(openBefore, GpuStaging.openSlotsInProcess(), "pooled staging buffers left open after the engines closed");
    device.shutdown();
  }

  private static Map<String, Integer> snapshot(Map<String, AtomicInteger> calls) {
    Map<String, Integer> m = new TreeMap<>();
    calls.forEach((k, v) -> m.put(k, v.get()));
    return m;
  }

  private static void fill(MemorySegment m, Random rnd) {
    byte[] chunk = new byte[1 << 16];
    for (long off = 0; off < m.byteSize(); off += chunk.length) {
      rnd.nextBytes(chunk);
      MemorySegment.copy(chunk, 0, m, java.lang.foreign.ValueLayout.JAVA_BYTE, off, (int) Math.min(chunk.length, m.byteSize() - off));
    }
  }

  private static void ok(TransferStatus s, String what) {
    assertTrue(s.await(Duration.ofSeconds(10)), what + " did not finish");
    assertEquals(StatusCode.SUCCESS, s.code(), what + ": " + s.message());
  }
}
