package org.mori4j.io.kv;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.locks.LockSupport;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.TestGpuDevice;
import org.mori4j.io.XgmiBackendConfig;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.transport.xgmi.HostBackedGpuRuntime;

/**
 * Not a test: measures the CPU time of the receiving engine's landing-board reader thread ({@link KvBoardPoller},
 * {@code mori4j-kv-board-<key>}) with {@link ThreadMXBean}, over bounded phases of two engines of this JVM on
 * transport's in-memory device: idle (no stream), a stream opened but no layer sent for the phase (board writes
 * announced, none coming: the reader's park loop), streams of 8 layers sent one per {@code P} ms back to back for
 * several paces (a prefill finishing a layer every P ms), and idle again after them. Prints, per phase, the
 * reader's CPU milliseconds per second of wall time (the share of one core) and the layers sent. Arguments:
 * seconds per phase (default 3), then the paces in ms (default 1 5 18). Run it where nothing else loads the host
 * (on the 2-core VM: under the build lock).
 */
public final class KvBoardReaderCpuProbe {
  private static final KvCacheLayout LAYOUT = KvCacheLayout.perLayer(8, 2, 16, 16384);

  public static void main(String[] args) throws Exception {
    double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
    long[] paces = args.length > 1 ? java.util.Arrays.stream(args, 1, args.length).mapToLong(Long::parseLong).toArray() : new long[] {1, 5, 18};
    HostBackedGpuRuntime device = TestGpuDevice.select("kv-board-cpu-probe", new HostBackedGpuRuntime(2, 0));
    String pid = String.valueOf(ProcessHandle.current().pid());
    DeviceBuffer[] a = alloc(device, 0), b = alloc(device, 1);
    try (IoEngine tx = engine("kv-cpu-tx-" + pid); IoEngine rx = engine("kv-cpu-rx-" + pid)) {
      tx.registerRemoteEngine(rx.engineDesc());
      rx.registerRemoteEngine(tx.engineDesc());
      try (KvCache src = KvCache.createAt(tx, "cpu-src", LAYOUT, addresses(a), LAYOUT.bufferBytes(), 0, MemoryLocationType.GPU);
           KvCache dst = KvCache.createAt(rx, "cpu-dst", LAYOUT, addresses(b), LAYOUT.bufferBytes(), 1, MemoryLocationType.GPU)) {
        if (KvEndpoint.of(rx).boards.own() == null || src.landingBoard(dst.desc()) == null) throw new IllegalStateException("no landing board between the engines");
        long reader = threadId("mori4j-kv-board-" + rx.key());
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        System.out.printf(Locale.ROOT, "landing-board reader CPU, %s per phase, %d cores, board settings: %s%n", Duration.ofMillis((long) (seconds * 1000)),
            Runtime.getRuntime().availableProcessors(), KvBoards.Settings.of(rx.actorSystem().settings().config()));
        int[] blocks = {1, 4, 9, 12}, to = {0, 3, 5, 15};
        // warm up the path (JIT, first mappings) before anything is measured
        for (int i = 0; i < 20; i++) stream(src, dst, blocks, to, "warm-" + i, 0);
        phase(mx, reader, "idle (no stream)", seconds, () -> {
          LockSupport.parkNanos((long) (seconds * 1e9));
          return 0;
        });
        phase(mx, reader, "stream open, no layer sent (board writes announced, none coming)", seconds, () -> {
          KvMigration m = src.openStream("quiet", blocks, dst.desc(), to);
          LockSupport.parkNanos((long) (seconds * 1e9));
          m.cancel();
          return 0;
        });
        for (long pace : paces) {
          phase(mx, reader, "8-layer streams, a layer every " + pace + " ms", seconds, () -> {
            int layers = 0;
            long end = System.nanoTime() + (long) (seconds * 1e9);
            for (int i = 0; System.nanoTime() < end; i++) layers += stream(src, dst, blocks, to, "p" + pace + "-" + i, pace * 1_000_000);
            return layers;
          });
        }
        phase(mx, reader, "idle again after the streams", seconds, () -> {
          LockSupport.parkNanos((long) (seconds * 1e9));
          return 0;
        });
      }
    } finally {
      for (DeviceBuffer x : a) x.close();
      for (DeviceBuffer x : b) x.close();
      TestGpuDevice.forget("kv-board-cpu-probe", device);
    }
  }

  private interface Work {
    int run() throws Exception;
  }

  private static void phase(ThreadMXBean mx, long reader, String name, double seconds, Work w) throws Exception {
    long c0 = mx.getThreadCpuTime(reader), t0 = System.nanoTime();
    int layers = w.run();
    long cpu = mx.getThreadCpuTime(reader) - c0, wall = System.nanoTime() - t0;
    System.out.printf(Locale.ROOT, "  %-70s reader CPU %7.1f ms in %5.2f s wall = %5.1f%% of a core; %d layers sent%n", name, cpu / 1e6, wall / 1e9,
        100.0 * cpu / wall, layers);
  }

  /** One stream, a layer every {@code paceNanos}; waits until the receiver heard all layers; returns the layers. */
  private static int stream(KvCache src, KvCache dst, int[] blocks, int[] to, String req, long paceNanos) throws Exception {
    KvMigration m = src.openStream(req, blocks, dst.desc(), to);
    long next = System.nanoTime();
    for (int l = 0; l < LAYOUT.layers(); l++) {
      next += paceNanos;
      for (long left; (left = next - System.nanoTime()) > 0; ) LockSupport.parkNanos(left);
      m.sendLayers(l, l + 1);
    }
    if (!dst.awaitLanded(req, 0, LAYOUT.layers(), Duration.ofSeconds(20)) || !m.await(Duration.ofSeconds(20)))
      throw new IllegalStateException("stream " + req + " did not land");
    dst.forget(req);
    return LAYOUT.layers();
  }

  private static long threadId(String name) {
    for (Thread t : Thread.getAllStackTraces().keySet()) if (t.getName().equals(name)) return t.threadId();
    throw new IllegalStateException("no thread named " + name);
  }

  private static IoEngine engine(String key) {
    IoEngine e = IoEngine.create(key, IoEngineConfig.loopback());
    e.createBackend(BackendType.XGMI, XgmiBackendConfig.defaults());
    return e;
  }

  private static DeviceBuffer[] alloc(HostBackedGpuRuntime device, int dev) {
    DeviceBuffer[] b = new DeviceBuffer[LAYOUT.buffers()];
    for (int i = 0; i < b.length; i++) b[i] = device.allocDevice(dev, LAYOUT.bufferBytes());
    return b;
  }

  private static long[] addresses(DeviceBuffer[] b) {
    long[] a = new long[b.length];
    for (int i = 0; i < b.length; i++) a[i] = b[i].address();
    return a;
  }
}
