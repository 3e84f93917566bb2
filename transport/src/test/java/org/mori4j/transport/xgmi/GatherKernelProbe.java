package org.mori4j.transport.xgmi;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.mori4j.natives.gpu.GpuEvent;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.gpu.GpuStream;

/**
 * A measuring tool for the batch kernel, run by hand on a GPU machine (not a test). For each batch shape, with the
 * blocks scattered over shuffled slots on both sides, it times by GPU events the backend's kernel and the variants
 * of {@link GatherVariants} (each checked byte for byte once before it is timed) against one contiguous copy of the
 * same bytes on the same route and stream. With two devices it runs each shape in both directions: push (the kernel
 * on the source's device, storing to the peer: a batch write) and pull (on the destination's device, loading from
 * the peer: a batch read), the copy being {@code cuMemcpyPeerAsync} on that stream; with one device, device-local
 * (which shows the kernel's issue rate and geometry, not the link).
 *
 * <pre>
 * bash .device/run.sh org.mori4j.transport.xgmi.GatherKernelProbe [--devices 0,1] [--variants backend,2d,...]
 *     [--shapes 4k,16k,kv-layers,kv-one,256m] [--iters 200] [--streams 1,8] [--gate on|off] [--out DIR]
 * </pre>
 *
 * <p>Rows are timed in rounds that visit every variant in turn; shapes of several launches are also timed with the
 * launches round-robin over {@code --streams} streams. Each sample's streams are held by a {@link ProbeGate} until
 * its work is issued ({@code --gate off}: not, as in the first recordings), so the time is the GPU's alone and not
 * the host's launch call. {@code --out} writes {@code gather-probe.md} (a table) and
 * {@code gather-probe.tsv} there as well as printing.
 */
public final class GatherKernelProbe {
  private GatherKernelProbe() {}

  public static void main(String[] args) throws IOException {
    run(null, args);
  }

  /** The probe on {@code gpu} (null: the machine's runtime, chosen after the arguments are checked). */
  static void run(GpuRuntime given, String... args) throws IOException {
    List<Integer> devices = List.of(0);
    List<String> variants = GatherVariants.defaults();
    List<String> shapes = new ArrayList<>(ProbeShape.NAMES);
    int iters = 200;
    List<Integer> streamCounts = List.of(1, 8);
    boolean gated = true;
    long warmUpMillis = 1000;
    Path out = null;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (i + 1 >= args.length) throw new IllegalArgumentException(a + ": needs a value");
      String v = args[++i];
      switch (a) {
        case "--devices" -> devices = parseInts("--devices", v);
        case "--variants" -> variants = List.of(v.split(","));
        case "--shapes" -> shapes = List.of(v.split(","));
        case "--iters" -> iters = parseInts("--iters", v).getFirst();
        case "--streams" -> streamCounts = parseInts("--streams", v);
        case "--gate" -> gated = switch (v) {
          case "on" -> true;
          case "off" -> false;
          default -> throw new IllegalArgumentException("--gate: on or off, got '" + v + "'");
        };
        case "--out" -> out = Path.of(v);
        case "--warmup-ms" -> warmUpMillis = parseInts("--warmup-ms", v).getFirst();
        default -> throw new IllegalArgumentException("unknown argument '" + a + "' (known: --devices --variants --shapes --iters --streams --gate --warmup-ms --out)");
      }
    }
    if (devices.isEmpty() || devices.size() > 2) throw new IllegalArgumentException("--devices: one or two ids, got " + devices);
    if (iters < 5) throw new IllegalArgumentException("--iters: at least 5, got " + iters);
    for (int k : streamCounts) if (k < 1 || k > 64) throw new IllegalArgumentException("--streams: each between 1 and 64, got " + streamCounts);
    for (String v : variants) GatherVariants.catalogue().keySet().stream().filter(v::equals).findAny()
        .orElseThrow(() -> new IllegalArgumentException("--variants: unknown '" + v + "' (known: " + GatherVariants.catalogue().keySet() + ")"));
    for (String s : shapes) ProbeShape.of(s);

    GpuRuntime gpu = given != null ? given : GpuRuntimes.select("auto");
    int a = devices.get(0), b = devices.get(devices.size() - 1);
    List<String> rows = new ArrayList<>();
    List<String> notes = new ArrayList<>();
    StringBuilder head = new StringBuilder();
    head.append(String.format(Locale.ROOT, "%s %s; devices %s; gate %s%n", gpu.name(), gpu.version(), devices, gated ? "on" : "off"));
    for (int d : devices.stream().distinct().toList()) {
      head.append(String.format(Locale.ROOT, "device %d: %s, %d SMs, capability %d%n", d, gpu.deviceName(d), gpu.multiprocessorCount(d), gpu.computeCapability(d)));
    }
    if (a != b) {
      if (!gpu.canAccessPeer(a, b) || !gpu.canAccessPeer(b, a)) throw new IllegalStateException("devices " + a + " and " + b + " cannot reach each other (no peer access)");
      gpu.enablePeerAccess(a, b);
      gpu.enablePeerAccess(b, a);
    }
    System.out.print(head);
    for (String v : variants) System.out.println("  " + v + ": " + GatherVariants.catalogue().get(v));
    List<String> dirs = a == b ? List.of("local") : List.of("push", "pull");
    rows.add("| shape | dir | variant | grid (CTAs x y x threads) | bytes ok | gpu p50 us | gpu p90 us | GB/s at p50 | of copy |");
    rows.add("|---|---|---|---|---|---|---|---|---|");
    List<String> tsv = new ArrayList<>(List.of("shape\tdir\tvariant\tgrid\tcheck\tp50_us\tp90_us\tgbps_p50\tof_copy"));
    int maxStreams = streamCounts.stream().mapToInt(Integer::intValue).max().orElse(1);
    try (ProbeBuffers.Checker ca = new ProbeBuffers.Checker(gpu, a); ProbeBuffers.Checker cb = a == b ? null : new ProbeBuffers.Checker(gpu, b)) {
      for (int d : devices.stream().distinct().toList()) warmUp(gpu, d, warmUpMillis);
      for (String s : shapes) {
        ProbeShape shape = ProbeShape.of(s);
        try (ProbeBuffers buf = new ProbeBuffers(gpu, shape, a, b, ca, cb == null ? ca : cb)) {
          for (String dir : dirs) {
            int runOn = dir.equals("pull") ? b : a;
            List<AutoCloseable> owned = new ArrayList<>();
            try {
              GpuStream[] streams = new GpuStream[maxStreams];
              GpuEvent[] ends = new GpuEvent[maxStreams];
              for (int i = 0; i < maxStreams; i++) {
                owned.add(streams[i] = gpu.createStream(runOn));
                owned.add(ends[i] = gpu.createEvent(runOn, true));
              }
              GpuEvent e0 = gpu.createEvent(runOn, true);
              owned.add(e0);
              buf.uploadTables(runOn);
              List<Case> cases = new ArrayList<>();
              cases.add(new Case(a == b ? "contiguous cuMemcpyDtoDAsync" : "contiguous cuMemcpyPeerAsync", "1 copy", "-", 1, (st, k) -> buf.copyAll(st[0])));
              List<String> failed = new ArrayList<>();
              for (String v : variants) {
                GatherVariants.Variant variant;
                String ok;
                try {
                  variant = GatherVariants.open(v, gpu, runOn);
                  owned.add(variant);
                  ok = buf.checkOnce(streams[0], variant);
                } catch (RuntimeException e) {
                  // one variant that cannot run here (e.g. no mapped host memory) must not cost the others their rows
                  failed.add(String.format(Locale.ROOT, "| %s | %s | %s | - | FAILED: %s | - | - | - | - |", shape.label(), dir, v, e.getMessage()));
                  continue;
                }
                String grid = variant.geometry(shape.perLaunch(), shape.blockSize());
                for (int k : shape.launches() > 1 ? streamCounts : List.of(1)) {
                  cases.add(new Case(k == 1 ? v : v + ", " + k + " streams", grid, ok, k, (st, kk) -> buf.run(st, kk, variant)));
                }
              }
              ProbeGate gate = null;
              try {
                gate = gated ? ProbeGate.open(gpu, runOn) : null;
              } catch (RuntimeException e) {
                System.out.println("(no gate: " + e.getMessage() + ")");
              }
              if (gate != null) {
                owned.add(gate);
                if (!gate.works(streams[0], e0, ends[0])) gate = null;
              }
              if (gated && gate == null) notes.add(shape.label() + ", " + dir + ": timed without the gate (GPU times include the host's issue time)");
              float[][] us = timeInRounds(cases, streams, e0, ends, shape.iters(iters), gate);
              double copyP50 = p(us[0], 50);
              for (int c = 0; c < cases.size(); c++) {
                Case x = cases.get(c);
                emit(rows, tsv, shape, dir, x.label(), x.grid(), x.ok(), us[c], shape.bytes(), copyP50);
              }
              for (String f : failed) {
                System.out.println(f);
                rows.add(f);
              }
            } finally {
              for (int i = owned.size() - 1; i >= 0; i--) {
                try {
                  owned.get(i).close();
                } catch (Exception e) {
                  System.err.println("close: " + e);
                }
              }
            }
          }
        }
      }
    }
    for (String n : notes) System.out.println(n);
    if (out != null) {
      Files.createDirectories(out);
      Files.writeString(out.resolve("gather-probe.md"), head.toString().replace("\n", "  \n") + "\n" + String.join("\n", rows) + "\n"
          + (notes.isEmpty() ? "" : "\n" + String.join("  \n", notes) + "\n"));
      Files.writeString(out.resolve("gather-probe.tsv"), String.join("\n", tsv) + "\n");
    }
  }

  /** Contiguous copies for {@code millis} (a second by default) first, so that the clocks are up before the first shape. */
  private static void warmUp(GpuRuntime gpu, int device, long millis) {
    if (millis <= 0) return;
    try (var x = gpu.allocDevice(device, 256L << 20); var y = gpu.allocDevice(device, 256L << 20); GpuStream s = gpu.createStream(device)) {
      long end = System.nanoTime() + millis * 1_000_000L;
      while (System.nanoTime() < end) {
        for (int i = 0; i < 20; i++) gpu.copyDeviceToDeviceAsync(y.address(), x.address(), 256L << 20, s);
        s.synchronize();
      }
    }
  }

  /** One timed row: its label, its grid, its byte check, the streams it spreads its launches over, and the work. */
  private record Case(String label, String grid, String ok, int streams, Work work) {}

  @FunctionalInterface
  private interface Work {
    void run(GpuStream[] streams, int count);
  }

  private static final int ROUNDS = 5;

  /**
   * GPU microseconds of each case, {@code iters} samples each, taken in {@value #ROUNDS} rounds that visit every case
   * in turn, so that a clock or thermal drift during the shape is spread over all rows instead of landing on the
   * first. A sample runs from an event before the work on the first stream to the last of the events recorded on
   * every stream the work used; with a {@code gate} (the default) the streams are held until all of it is issued,
   * so that the sample is GPU time only.
   */
  private static float[][] timeInRounds(List<Case> cases, GpuStream[] streams, GpuEvent e0, GpuEvent[] ends, int iters, ProbeGate gate) {
    float[][] us = new float[cases.size()][iters];
    int per = Math.max(1, iters / ROUNDS);
    for (int done = 0; done < iters; done += per) {
      int upto = Math.min(iters, done + per);
      for (int c = 0; c < cases.size(); c++) {
        Case x = cases.get(c);
        int k = x.streams();
        for (int w = 0; w < 2; w++) x.work().run(streams, k);
        for (int s = 0; s < k; s++) streams[s].synchronize();
        for (int i = done; i < upto; i++) {
          if (gate != null) gate.shut(streams, k);
          e0.record(streams[0]);
          x.work().run(streams, k);
          for (int s = 0; s < k; s++) ends[s].record(streams[s]);
          if (gate != null) gate.open();
          float worst = 0;
          for (int s = 0; s < k; s++) {
            ends[s].synchronize();
            worst = Math.max(worst, ends[s].elapsedMillisSince(e0) * 1000f);
          }
          us[c][i] = worst;
        }
      }
    }
    return us;
  }

  private static void emit(List<String> rows, List<String> tsv, ProbeShape shape, String dir, String variant, String grid, String ok,
                           float[] us, long bytes, double copyP50) {
    double p50 = p(us, 50), p90 = p(us, 90);
    double gbps = bytes / (p50 * 1e3);
    String line = String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %.1f | %.1f | %.1f | %.0f%% |", shape.label(), dir, variant, grid, ok, p50, p90, gbps,
        100 * copyP50 / p50);
    System.out.println(line);
    rows.add(line);
    tsv.add(String.format(Locale.ROOT, "%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%.2f\t%.3f", shape.name(), dir, variant, grid, ok, p50, p90, gbps, copyP50 / p50));
  }

  static double p(float[] a, int pct) {
    float[] c = a.clone();
    java.util.Arrays.sort(c);
    return c[Math.min(c.length - 1, c.length * pct / 100)];
  }

  private static List<Integer> parseInts(String arg, String v) {
    List<Integer> r = new ArrayList<>();
    for (String s : v.split(",")) {
      try {
        r.add(Integer.parseInt(s.trim()));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(arg + ": not a number list: '" + v + "'");
      }
    }
    return r;
  }
}
