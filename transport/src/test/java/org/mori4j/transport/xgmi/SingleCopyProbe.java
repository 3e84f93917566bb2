package org.mori4j.transport.xgmi;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.Locale;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuEvent;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.gpu.GpuStream;

/**
 * A measuring tool, run by hand on a GPU machine (not a test): where the time of one 4 KiB XGMI-style copy goes on the
 * host, outside the engine, for issue 15 target 5 (a session's 4 KiB write against a raw copy + synchronize). Every
 * iteration is one {@code copyDeviceToDeviceAsync} of 4 KiB on one device (the one-GPU proxy), timed with
 * {@link System#nanoTime()} stamps between the steps; modes, alternated round by round:
 * <ul>
 *   <li>{@code sync}: copy, {@code synchronize} the stream (the bench's raw baseline);</li>
 *   <li>{@code self}: copy, record an event, query it until complete, all on the calling thread (what a caller that
 *       issues its copy and polls its event does, without the engine's bookkeeping);</li>
 *   <li>{@code worker}: the calling thread hands the request to a spinning second thread, which copies, records and
 *       queries until complete and hands the result back (the worker path's hand-offs, without the engine);</li>
 *   <li>{@code caller-issue}: the calling thread copies and records, the spinning second thread queries and hands the
 *       result back.</li>
 * </ul>
 * Parts (p50/p90/p99/mean in microseconds, per mode and round): {@code total}; {@code copy} (the copy call),
 * {@code record} (the record call), {@code seen} (after the record until a query said complete, or the synchronize
 * returned), {@code queries} (how many, in the n column's place: its p50), {@code in} (hand-off to the second thread)
 * and {@code back} (from the second thread's completion to the caller seeing it).
 * <pre>
 * bash .device/run.sh org.mori4j.transport.xgmi.SingleCopyProbe [--iters 5000] [--rounds 3] [--device 0] [--test-device]
 * </pre>
 * {@code --test-device}: {@link HostBackedGpuRuntime} (a dry run of the loops on a machine without a GPU).
 */
public final class SingleCopyProbe {
  private SingleCopyProbe() {}

  static final long BLOCK = 4096;
  private static final int T0 = 0, COPY = 1, RECORD = 2, SEEN = 3, BACK = 4, IN = 5, QUERIES = 6, STAMPS = 7;

  public static void main(String[] args) throws Exception {
    int iters = 5000, rounds = 3, device = 0;
    boolean testDevice = false;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--iters" -> iters = Integer.parseInt(args[++i]);
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--device" -> device = Integer.parseInt(args[++i]);
        case "--test-device" -> testDevice = true;
        default -> throw new IllegalArgumentException("unknown argument '" + args[i] + "' (--iters N --rounds N --device D --test-device)");
      }
    }
    if (iters < 1 || rounds < 1) throw new IllegalArgumentException("--iters and --rounds must be >= 1: " + iters + ", " + rounds);
    GpuRuntime gpu = testDevice ? new HostBackedGpuRuntime(1, 0) : GpuRuntimes.select("auto");
    run(gpu, device, iters, rounds, System.out);
    if (gpu instanceof HostBackedGpuRuntime h) h.shutdown();
  }

  /** The state the calling thread and the second thread share: one request at a time. */
  private static final class Shared {
    volatile int request; // iteration + 1 the caller asks for; 0 none
    volatile int issued; // caller-issue: the caller recorded the event of this iteration + 1
    volatile int done; // iteration + 1 the second thread saw complete
    volatile boolean stop;
    volatile int mode = -1;
  }

  static void run(GpuRuntime gpu, int device, int iters, int rounds, PrintStream out) throws Exception {
    try (DeviceBuffer a = gpu.allocDevice(device, 2 * BLOCK); DeviceBuffer b = gpu.allocDevice(device, 2 * BLOCK);
         GpuStream stream = gpu.createStream(device); GpuEvent event = gpu.createEvent(device, false)) {
      long src = a.address(), dst = b.address();
      long[][] t = new long[STAMPS][iters];
      Shared sh = new Shared();
      Thread second = Thread.ofPlatform().daemon().name("probe-second").start(() -> {
        int seen = 0;
        while (!sh.stop) {
          int md = sh.mode; // read before the request: the counters are reset before a mode is set
          int r = md == 2 ? sh.request : md == 3 ? sh.issued : 0;
          if (r == 0 || r == seen) {
            if (r == 0) seen = 0;
            Thread.onSpinWait();
            continue;
          }
          seen = r;
          int i = r - 1;
          if (md == 2) {
            t[IN][i] = System.nanoTime();
            gpu.copyDeviceToDeviceAsync(dst, src, BLOCK, stream);
            t[COPY][i] = System.nanoTime();
            event.record(stream);
            t[RECORD][i] = System.nanoTime();
          }
          int q = 0;
          do q++; while (!event.isComplete());
          t[SEEN][i] = System.nanoTime();
          t[QUERIES][i] = q;
          sh.done = r;
        }
      });
      String[] modes = {"sync", "self", "worker", "caller-issue"};
      // a warm-up pass of every mode (JIT, driver), not printed
      for (int m = 0; m < modes.length; m++) loop(gpu, stream, event, sh, m, Math.min(iters, 2000), src, dst, t);
      out.println("# mode\tround\tpart\tn\tp50\tp90\tp99\tmean (us; queries: counts)");
      for (int round = 1; round <= rounds; round++) {
        for (int m = 0; m < modes.length; m++) {
          loop(gpu, stream, event, sh, m, iters, src, dst, t);
          print(out, modes[m], round, "total", diff(t[BACK], t[T0], iters));
          if (m == 0) {
            print(out, modes[m], round, "copy", diff(t[COPY], t[T0], iters));
            print(out, modes[m], round, "seen", diff(t[SEEN], t[COPY], iters));
            continue;
          }
          long[] issueStart = m == 2 ? t[IN] : t[T0];
          print(out, modes[m], round, "copy", diff(t[COPY], issueStart, iters));
          print(out, modes[m], round, "record", diff(t[RECORD], t[COPY], iters));
          print(out, modes[m], round, "seen", diff(t[SEEN], t[RECORD], iters));
          print(out, modes[m], round, "queries", Arrays.copyOf(t[QUERIES], iters), true);
          if (m == 2) print(out, modes[m], round, "in", diff(t[IN], t[T0], iters));
          if (m >= 2) print(out, modes[m], round, "back", diff(t[BACK], t[SEEN], iters));
        }
      }
      sh.stop = true;
      second.join(5_000);
    }
  }

  private static void loop(GpuRuntime gpu, GpuStream stream, GpuEvent event, Shared sh, int m, int iters, long src, long dst, long[][] t) {
    sh.done = 0;
    stream.synchronize();
    sh.mode = m;
    for (int i = 0; i < iters; i++) {
      long t0 = System.nanoTime();
      t[T0][i] = t0;
      switch (m) {
        case 0 -> {
          gpu.copyDeviceToDeviceAsync(dst, src, BLOCK, stream);
          t[COPY][i] = System.nanoTime();
          stream.synchronize();
          t[SEEN][i] = t[BACK][i] = System.nanoTime();
        }
        case 1 -> {
          gpu.copyDeviceToDeviceAsync(dst, src, BLOCK, stream);
          t[COPY][i] = System.nanoTime();
          event.record(stream);
          t[RECORD][i] = System.nanoTime();
          int q = 0;
          do q++; while (!event.isComplete());
          t[SEEN][i] = t[BACK][i] = System.nanoTime();
          t[QUERIES][i] = q;
        }
        default -> {
          if (m == 3) {
            gpu.copyDeviceToDeviceAsync(dst, src, BLOCK, stream);
            t[COPY][i] = System.nanoTime();
            event.record(stream);
            t[RECORD][i] = System.nanoTime();
            sh.issued = i + 1;
          } else {
            sh.request = i + 1;
          }
          // bounded: a lost second thread ends the probe rather than hanging the device call
          long end = t0 + 5_000_000_000L;
          while (sh.done != i + 1) {
            if (System.nanoTime() - end > 0) throw new IllegalStateException(
                "the second thread did not complete iteration " + i + " within 5 s");
            Thread.onSpinWait();
          }
          t[BACK][i] = System.nanoTime();
        }
      }
    }
    sh.mode = -1;
    sh.request = 0;
    sh.issued = 0;
  }

  private static long[] diff(long[] later, long[] earlier, int n) {
    long[] d = new long[n];
    for (int i = 0; i < n; i++) d[i] = later[i] - earlier[i];
    return d;
  }

  private static void print(PrintStream out, String mode, int round, String part, long[] nanos) {
    print(out, mode, round, part, nanos, false);
  }

  private static void print(PrintStream out, String mode, int round, String part, long[] v, boolean counts) {
    long[] s = v.clone();
    Arrays.sort(s);
    double scale = counts ? 1 : 1e-3;
    double mean = Arrays.stream(s).average().orElse(0) * scale;
    out.printf(Locale.ROOT, "%s\t%d\t%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f%n", mode, round, part, s.length, rank(s, 50) * scale, rank(s, 90) * scale,
        rank(s, 99) * scale, mean);
  }

  /** Nearest-rank percentile of the sorted {@code s}. */
  private static long rank(long[] s, int p) {
    int k = (int) Math.ceil(p / 100.0 * s.length) - 1;
    return s[Math.max(0, Math.min(s.length - 1, k))];
  }
}
