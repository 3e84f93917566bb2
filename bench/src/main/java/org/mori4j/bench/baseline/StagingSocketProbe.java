package org.mori4j.bench.baseline;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.mori4j.bench.HumanSize;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.gpu.HostRegistration;
import org.mori4j.natives.gpu.PinnedBuffer;

/**
 * Is a loopback socket slower per byte out of (or into) GPU staging memory than out of ordinary host memory? The TCP
 * backend stages GPU transfers through page-locked buffers from the driver's allocator ({@code cuMemAllocHost}), and
 * the staging trace (bench/results/*-gpu-over-tcp-3) put a 1 MiB GPU transfer's socket phase at 3.6-4.4 GB/s, about
 * as long as a whole CPU-to-CPU transfer. This probe times the socket alone, without the engine, for three kinds of
 * host buffer of the same size: {@code pinned} (the runtime's page-locked allocation), {@code arena} (ordinary memory
 * from a Java arena: what a CPU transfer reads) and {@code registered} (the same ordinary memory page-locked with
 * {@code cuMemHostRegister}). Directions: {@code out} writes the buffer to the socket (the staging side that copies off
 * the device), {@code in} reads the socket into it (the side that copies onto the device); the peer end is an
 * ordinary direct buffer on a second thread, which answers one byte per payload. Each payload goes either in one
 * {@code write}/{@code read} loop or cut like the stager's 1 MiB plan (64 KiB, four equal middle pieces, 64 KiB), and
 * with a device, the untimed step before each {@code out} payload is a device-to-host copy into the buffer and after
 * each {@code in} payload a host-to-device copy out of it (synchronous), so the buffer's cache state is as in
 * staging ({@code dev} rows; {@code hot} rows skip it, so the CPU finds the bytes in its caches as a CPU transfer
 * does). {@code memcpy} rows time the CPU alone copying the buffer into an ordinary one (no socket). Kinds are
 * alternated within each round and the order reverses every round. Timed: out, first byte offered -> the peer's answer;
 * in, the ask -> the last byte read (so both ends' socket work), per payload; printed as p50 and mean per row.
 * Run: {@code java ... org.mori4j.bench.baseline.StagingSocketProbe [--size 1M] [--iters 200] [--rounds 5]
 * [--device 0|-1] [--kinds pinned,arena,registered]}; {@code --device -1} uses no GPU (arena only, no copies).
 */
public final class StagingSocketProbe {
  private StagingSocketProbe() {}

  /** What the probe measured: per row name ("out pinned whole"), every round's payload latencies in nanoseconds. */
  public record Result(Map<String, List<long[]>> rows) {
    /** One line per row: p50 and mean over all rounds' payloads, and the rounds' p50s. */
    public List<String> lines(long size) {
      List<String> out = new ArrayList<>();
      for (var e : rows.entrySet()) {
        long[] all = e.getValue().stream().flatMapToLong(Arrays::stream).sorted().toArray();
        double mean = Arrays.stream(all).average().orElse(0) / 1e3;
        StringBuilder perRound = new StringBuilder();
        for (long[] r : e.getValue()) perRound.append(perRound.isEmpty() ? "" : " ").append(String.format(Locale.ROOT, "%.1f", p50(r) / 1e3));
        out.add(String.format(Locale.ROOT, "%-26s p50 %8.1f us  mean %8.1f us  %6.2f GB/s (p50)  rounds' p50 [%s]", e.getKey(),
            p50(all) / 1e3, mean, size / (double) p50(all), perRound));
      }
      return out;
    }
  }

  private static long p50(long[] v) {
    long[] s = v.clone();
    Arrays.sort(s);
    return s.length == 0 ? 0 : s[s.length / 2];
  }

  public static void main(String[] args) throws Exception {
    long size = 1 << 20;
    int iters = 200, rounds = 5, device = 0;
    List<String> kinds = List.of("pinned", "arena", "registered");
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (i + 1 >= args.length) throw new IllegalArgumentException(a + " needs a value");
      String v = args[++i];
      switch (a) {
        case "--size" -> size = HumanSize.parse(v);
        case "--iters" -> iters = Integer.parseInt(v);
        case "--rounds" -> rounds = Integer.parseInt(v);
        case "--device" -> device = Integer.parseInt(v);
        case "--kinds" -> kinds = List.of(v.split(","));
        default -> throw new IllegalArgumentException("unknown argument " + a + " (--size, --iters, --rounds, --device, --kinds)");
      }
    }
    GpuRuntime runtime = device < 0 ? null : GpuRuntimes.select("auto");
    if (runtime != null && !runtime.available()) throw new IllegalStateException("--device " + device + ": no GPU runtime: " + runtime.version());
    System.out.println("# staging-socket probe: " + HumanSize.format(size) + ", " + iters + " payloads x " + rounds + " rounds, kinds " + kinds
        + (runtime == null ? ", no device" : ", device " + device + " (" + runtime.deviceName(device) + ")"));
    Result r = run(runtime, device, size, iters, rounds, kinds);
    r.lines(size).forEach(System.out::println);
  }

  /**
   * Measures every kind, direction and cut. {@code runtime} null: no device copies, and only {@code arena} is allowed
   * (the other kinds need a runtime).
   */
  public static Result run(GpuRuntime runtime, int device, long size, int iters, int rounds, List<String> kinds)
      throws IOException, InterruptedException {
    if (size < 4096 || size > (256L << 20)) throw new IllegalArgumentException("--size must be in 4 KiB..256 MiB: " + size);
    if (iters < 1 || iters > 100_000) throw new IllegalArgumentException("--iters must be in 1..100000: " + iters);
    if (rounds < 1 || rounds > 100) throw new IllegalArgumentException("--rounds must be in 1..100: " + rounds);
    for (String k : kinds) {
      if (!List.of("pinned", "arena", "registered").contains(k)) throw new IllegalArgumentException("--kinds: unknown kind " + k);
      if (runtime == null && !k.equals("arena")) throw new IllegalArgumentException("--kinds " + k + " needs a GPU runtime (--device >= 0)");
    }
    long[] cut = stagerCut(size);
    Map<String, List<long[]>> rows = new LinkedHashMap<>();
    List<Buffer> buffers = new ArrayList<>();
    try (Arena arena = Arena.ofShared(); ServerSocketChannel server = ServerSocketChannel.open()) {
      for (String k : kinds) buffers.add(new Buffer(k, runtime, size));
      DeviceBuffer dev = runtime == null ? null : runtime.allocDevice(device, size);
      try {
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        SocketChannel mine = SocketChannel.open(server.getLocalAddress());
        SocketChannel theirs = server.accept();
        for (SocketChannel ch : List.of(mine, theirs)) ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        Peer peer = new Peer(theirs, arena.allocate(size, 4096).asByteBuffer());
        MemorySegment sink = arena.allocate(size, 4096);
        // with a device: each payload after a device copy (as staged), whole and cut, and whole without one (cache-warm)
        List<Variant> variants = runtime == null ? List.of(new Variant(false, false), new Variant(true, false))
            : List.of(new Variant(false, true), new Variant(true, true), new Variant(false, false));
        Thread t = Thread.ofPlatform().name("staging-probe-peer").daemon().start(peer);
        ByteBuffer ack = ByteBuffer.allocateDirect(1);
        try {
          for (int round = 0; round < rounds; round++) {
            List<Buffer> order = new ArrayList<>(buffers);
            if (round % 2 == 1) order = order.reversed();
            for (Buffer b : order) {
              for (String dir : List.of("out", "in", "memcpy")) {
                for (Variant v : variants) {
                  if (dir.equals("memcpy") && v.pieces) continue;
                  String name = dir + " " + b.kind + (v.pieces ? " pieces" : " whole") + (v.device ? " dev" : " hot");
                  long[] lat = new long[iters];
                  GpuRuntime rt = v.device ? runtime : null;
                  long[] c = v.pieces ? cut : null;
                  // a few untimed payloads first: the kind's pages and the socket's buffers warm, as in a run's steady state
                  for (int i = -3; i < iters; i++) {
                    long ns = switch (dir) {
                      case "out" -> out(rt, dev, b, mine, ack, c, size);
                      case "in" -> in(rt, dev, b, mine, c, size);
                      default -> memcpy(rt, dev, b, sink, size);
                    };
                    if (i >= 0) lat[i] = ns;
                  }
                  rows.computeIfAbsent(name, k -> new ArrayList<>()).add(lat);
                }
              }
            }
          }
          mine.write(ByteBuffer.wrap(new byte[] {'q'}));
          t.join(5_000);
        } finally {
          mine.close();
          theirs.close();
        }
        if (peer.failure != null) throw new IOException("probe peer failed", peer.failure);
      } finally {
        if (dev != null) dev.close();
      }
    } finally {
      for (Buffer b : buffers) b.close();
    }
    return new Result(rows);
  }

  private record Variant(boolean pieces, boolean device) {}

  /** The CPU alone reading the buffer: copies it into an ordinary one, after the device wrote it (rt non-null). */
  private static long memcpy(GpuRuntime rt, DeviceBuffer dev, Buffer b, MemorySegment sink, long size) {
    if (rt != null) rt.copyDeviceToHost(b.segment, dev.address(), size);
    long t0 = System.nanoTime();
    MemorySegment.copy(b.segment, 0, sink, 0, size);
    return System.nanoTime() - t0;
  }

  /** The stager's cut of a payload of {@code size}: 64 KiB, four equal middle pieces (4 KiB multiples), 64 KiB. */
  static long[] stagerCut(long size) {
    long end = Math.min(64 << 10, size / 8);
    long mid = ((size - 2 * end) / 4) & ~4095L;
    return new long[] {end, mid, mid, mid, size - 2 * end - 3 * mid, end};
  }

  /** Writes the buffer (cut or whole) and waits for the peer's byte: nanoseconds from the first byte offered. */
  private static long out(GpuRuntime rt, DeviceBuffer dev, Buffer b, SocketChannel ch, ByteBuffer ack, long[] cut, long size) throws IOException {
    if (rt != null) rt.copyDeviceToHost(b.segment, dev.address(), size);
    ByteBuffer v = b.view;
    ch.write(ByteBuffer.wrap(new byte[] {'o'}));
    long t0 = System.nanoTime();
    if (cut == null) {
      v.clear();
      while (v.hasRemaining()) ch.write(v);
    } else {
      long at = 0;
      for (long n : cut) {
        v.limit((int) (at + n)).position((int) at);
        while (v.hasRemaining()) ch.write(v);
        at += n;
      }
    }
    ack.clear();
    while (ack.hasRemaining()) if (ch.read(ack) < 0) throw new IOException("probe peer closed");
    return System.nanoTime() - t0;
  }

  /** Asks the peer for a payload and reads it into the buffer (cut or whole): nanoseconds from the ask to the last byte. */
  private static long in(GpuRuntime rt, DeviceBuffer dev, Buffer b, SocketChannel ch, long[] cut, long size) throws IOException {
    ByteBuffer v = b.view;
    long t0 = System.nanoTime();
    ch.write(ByteBuffer.wrap(new byte[] {'i'}));
    if (cut == null) {
      v.clear();
      while (v.hasRemaining()) if (ch.read(v) < 0) throw new IOException("probe peer closed");
    } else {
      long at = 0;
      for (long n : cut) {
        v.limit((int) (at + n)).position((int) at);
        while (v.hasRemaining()) if (ch.read(v) < 0) throw new IOException("probe peer closed");
        at += n;
      }
    }
    long ns = System.nanoTime() - t0;
    if (rt != null) rt.copyHostToDevice(dev.address(), b.segment, size);
    return ns;
  }

  /** The other end: 'o' = read a payload into its ordinary buffer and answer one byte; 'i' = send one; 'q' = stop. */
  private static final class Peer implements Runnable {
    private final SocketChannel ch;
    private final ByteBuffer buf;
    volatile Exception failure;

    Peer(SocketChannel ch, ByteBuffer buf) {
      this.ch = ch;
      this.buf = buf;
    }

    @Override
    public void run() {
      ByteBuffer cmd = ByteBuffer.allocateDirect(1);
      ByteBuffer ack = ByteBuffer.allocateDirect(1);
      try {
        while (true) {
          cmd.clear();
          if (ch.read(cmd) < 0) return;
          byte c = cmd.get(0);
          if (c == 'q') return;
          buf.clear();
          if (c == 'o') {
            while (buf.hasRemaining()) if (ch.read(buf) < 0) return;
            ack.clear();
            while (ack.hasRemaining()) ch.write(ack);
          } else {
            while (buf.hasRemaining()) ch.write(buf);
          }
        }
      } catch (IOException e) {
        failure = e;
      }
    }
  }

  /** One kind's host buffer and what owns its memory; closed once, registration before the memory. */
  private static final class Buffer implements AutoCloseable {
    final String kind;
    final MemorySegment segment;
    final ByteBuffer view;
    private final PinnedBuffer pinned;
    private final Arena arena;
    private final HostRegistration registration;

    Buffer(String kind, GpuRuntime rt, long size) {
      this.kind = kind;
      if (kind.equals("pinned")) {
        pinned = rt.allocPinned(size);
        arena = null;
        registration = null;
        segment = pinned.segment();
      } else {
        pinned = null;
        arena = Arena.ofShared();
        segment = arena.allocate(size, 4096);
        try {
          registration = kind.equals("registered") ? rt.registerHost(segment) : null;
        } catch (RuntimeException e) {
          arena.close();
          throw e;
        }
      }
      // touch every page: an arena's memory is zeroed by the JDK anyway; the point is the same state for every kind
      segment.fill((byte) 0x5A);
      view = segment.asByteBuffer();
    }

    @Override
    public void close() {
      if (pinned != null) pinned.close();
      if (registration != null) registration.close();
      if (arena != null) arena.close();
    }
  }
}
