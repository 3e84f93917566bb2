package org.mori4j.transport.xgmi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.ForwardingGpuRuntime;
import org.mori4j.natives.gpu.GpuEvent;
import org.mori4j.natives.gpu.GpuModule.GpuFunction;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.KernelArgs;

/**
 * {@link GatherKernelProbe}'s two-device run (push and pull, the gate and its self-check, the mapped-table variant, a
 * variant that cannot launch, several streams) on the in-memory device, whose helper kernels are taught here in
 * Java, so that the one call the 2x H200 machine gets does not end at a mistake of the probe's own (a stream of the
 * wrong device, a table on the wrong side). The figures it prints mean nothing; the flow and the byte checks do.
 */
class GatherKernelProbeSmokeTest {
  @Test
  void bothDirectionsRunCheckedAndGatedWithAFailedVariantOnItsOwnRow(@TempDir Path dir) throws Exception {
    HostBackedGpuRuntime device = new HostBackedGpuRuntime(2, 0, true, HostBackedGpuRuntime.newDirectory());
    teach(device);
    try {
      GatherKernelProbe.run(new Stamped(device), "--devices", "0,1", "--shapes", "smoke", "--variants", "backend,mapped,t512", "--iters", "5",
          "--streams", "1,2", "--warmup-ms", "0", "--out", dir.toString());
    } finally {
      device.shutdown();
    }
    List<String> md = Files.readAllLines(dir.resolve("gather-probe.md"));
    for (String d : List.of("push", "pull")) {
      for (String v : List.of("backend", "backend, 2 streams", "mapped", "mapped, 2 streams")) {
        assertEquals(1, md.stream().filter(l -> l.contains("| " + d + " | " + v + " |") && l.contains("| ok |")).count(), d + " " + v + " checked ok:\n" + md);
      }
      assertTrue(md.stream().anyMatch(l -> l.contains("| " + d + " | contiguous cuMemcpyPeerAsync |")), d + " copy row");
      // the in-memory device launches only 256-thread CTAs of the gather kernel: t512 fails, alone
      assertTrue(md.stream().anyMatch(l -> l.contains("| " + d + " | t512 |") && l.contains("FAILED")), d + " t512 row");
    }
    assertFalse(md.stream().anyMatch(l -> l.contains("timed without the gate")), "the gate held and released:\n" + md);
    assertEquals(1 + 2 * 5, Files.readAllLines(dir.resolve("gather-probe.tsv")).size());
  }

  private static long arg(HostBackedGpuRuntime.Launch l, int i) {
    ByteBuffer b = ByteBuffer.wrap(l.args().get(i)).order(ByteOrder.nativeOrder());
    return l.args().get(i).length == 4 ? b.getInt() : b.getLong();
  }

  private static MemorySegment at(long address, long bytes) {
    return MemorySegment.ofAddress(address).reinterpret(bytes);
  }

  /** The probe's helper kernels, in Java, with the CUDA source's arguments. */
  private static void teach(HostBackedGpuRuntime device) {
    device.defineKernel("probe_fill", l -> {
      long p = arg(l, 0), words = arg(l, 1), seed = arg(l, 2);
      boolean zero = arg(l, 3) != 0;
      MemorySegment m = at(p, 8 * words);
      for (long i = 0; i < words; i++) m.setAtIndex(ValueLayout.JAVA_LONG, i, zero ? 0 : (i + seed) * 0x9E3779B97F4A7C15L);
    });
    device.defineKernel("probe_compare", l -> {
      long table = arg(l, 0), n = arg(l, 1), src = arg(l, 2), dst = arg(l, 3), size = arg(l, 4), bad = arg(l, 5);
      MemorySegment t = at(table, 16 * n);
      long differ = 0;
      for (long i = 0; i < n; i++) {
        MemorySegment s = at(src + t.getAtIndex(ValueLayout.JAVA_LONG, i), size), d = at(dst + t.getAtIndex(ValueLayout.JAVA_LONG, n + i), size);
        for (long k = 0; k < size / 8; k++) if (s.getAtIndex(ValueLayout.JAVA_LONG, k) != d.getAtIndex(ValueLayout.JAVA_LONG, k)) differ++;
      }
      MemorySegment c = at(bad, 8);
      c.set(ValueLayout.JAVA_LONG, 0, c.get(ValueLayout.JAVA_LONG, 0) + differ);
    });
    device.defineKernel("probe_zeros", l -> {
      long offsets = arg(l, 0), m = arg(l, 1), base = arg(l, 2), size = arg(l, 3), bad = arg(l, 4);
      long stray = 0;
      for (long i = 0; i < m; i++) {
        MemorySegment d = at(base + at(offsets, 8 * m).getAtIndex(ValueLayout.JAVA_LONG, i), size);
        for (long k = 0; k < size / 8; k++) if (d.getAtIndex(ValueLayout.JAVA_LONG, k) != 0) stray++;
      }
      MemorySegment c = at(bad, 8);
      c.set(ValueLayout.JAVA_LONG, 0, c.get(ValueLayout.JAVA_LONG, 0) + stray);
    });
    VarHandle flagRead = ValueLayout.JAVA_INT.varHandle();
    device.defineKernel("probe_gate", l -> {
      MemorySegment flag = at(arg(l, 0), 8);
      long until = System.nanoTime() + 1_000_000_000L; // as the CUDA gate's cycle limit, so a lost flag cannot hang the stream
      boolean held = (int) flagRead.getVolatile(flag, 0L) == 0;
      if (held) flagRead.setVolatile(flag, 4L, ProbeGate.HOLDING);
      while ((int) flagRead.getVolatile(flag, 0L) == 0 && System.nanoTime() < until) Thread.onSpinWait();
      boolean up = (int) flagRead.getVolatile(flag, 0L) != 0;
      flagRead.setVolatile(flag, 4L, up ? (held ? ProbeGate.RELEASED : ProbeGate.NEVER_HELD) : ProbeGate.TIMED_OUT);
    });
    device.defineKernel("probe_stamp", l -> Stamped.STAMPS.put(arg(l, 0), System.nanoTime()));
  }

  /**
   * The in-memory device with what the probe needs beyond it: timing events (a stamp kernel before each recorded
   * event, in stream order, gives its host time) and an occupancy answer.
   */
  private static final class Stamped extends ForwardingGpuRuntime {
    static final Map<Long, Long> STAMPS = new ConcurrentHashMap<>();
    private static final AtomicLong IDS = new AtomicLong();
    private final HostBackedGpuRuntime d;
    private final Map<Integer, GpuFunction> stamp = new ConcurrentHashMap<>();

    Stamped(HostBackedGpuRuntime d) {
      super(d);
      this.d = d;
    }

    private GpuFunction stamp(int device) {
      return stamp.computeIfAbsent(device, dv -> d.loadModule(dv, d.compile(dv, "extern \"C\" __global__ void probe_stamp(u64 id) {}", "stamp.cu")).function("probe_stamp"));
    }

    @Override public int maxActiveBlocksPerMultiprocessor(GpuFunction f, int threads, int shared) { return 2048 / threads; }

    @Override
    public GpuEvent createEvent(int device, boolean timing) {
      return new StampEvent(d.createEvent(device, timing));
    }

    /** An event whose record is preceded, on the same stream, by a stamp kernel with its own id. */
    private final class StampEvent implements GpuEvent {
      private final GpuEvent e;
      private volatile long id = -1;

      StampEvent(GpuEvent e) {
        this.e = e;
      }

      @Override public int device() { return e.device(); }

      @Override public void record(GpuStream s) {
        long next = IDS.incrementAndGet();
        d.launch(stamp(s.device()), Dim3.of(1), Dim3.of(1), 0, s, KernelArgs.of().i64(next));
        e.record(s);
        id = next;
      }

      @Override public boolean isComplete() { return e.isComplete(); }
      @Override public void synchronize() { e.synchronize(); }

      @Override public float elapsedMillisSince(GpuEvent start) {
        return (waitFor(id) - waitFor(((StampEvent) start).id)) / 1e6f;
      }

      @Override public void close() { e.close(); }
    }

    /** The stamp of a recorded event once its stream has run it (waits at most a second). */
    private static long waitFor(long id) {
      long until = System.nanoTime() + 1_000_000_000L;
      Long t;
      while ((t = STAMPS.get(id)) == null && System.nanoTime() < until) Thread.onSpinWait();
      if (t == null) throw new IllegalStateException("event " + id + " never reached");
      return t;
    }
  }
}
