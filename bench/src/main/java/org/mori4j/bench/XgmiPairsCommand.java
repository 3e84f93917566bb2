package org.mori4j.bench;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.mori4j.natives.gpu.GpuRuntime;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code mori4j xgmi-pairs}: XGMI between every pair of engines at once (issue 16, item 2). One engine per entry of
 * {@code --gpus} (repeats allowed: several engines on one GPU), each with only the XGMI backend, in one JVM or one
 * JVM each; a ring (engine i writes to i+1) and all-to-all (every engine writes to every other, its bytes split per
 * destination), 256 MiB contiguous and a 4,096 x 4 KiB gather/scatter batch per engine, all engines released
 * together. Beside each row, the same copies with the driver alone ({@link XgmiPairsRawCopies}), and the ratio.
 * Every destination region is checked after the measured iterations; a wrong byte is exit 1.
 */
@Command(name = "xgmi-pairs", mixinStandardHelpOptions = true,
    description = "XGMI between every pair of GPUs at once (ring, all-to-all), aggregate bandwidth beside the raw peer copies run together.")
public final class XgmiPairsCommand implements Callable<Integer> {
  static final String ENGINE_SERIES = "mori4j xgmi";

  @Option(names = "--gpus", description = "Devices, one engine per entry, repeats allowed (e.g. 0,0,0,0); default: every GPU of the host.")
  String gpus;

  @Option(names = "--pattern", defaultValue = "both", description = "ring, all-to-all or both (default: ${DEFAULT-VALUE}).")
  String pattern;

  @Option(names = "--single-process", description = "All engines in this JVM (direct peer copies) instead of one child JVM per engine (IPC handles).")
  boolean singleProcess;

  @Option(names = "--size", defaultValue = "256M", description = "Contiguous bytes each engine writes per iteration; none for no contiguous row (default: ${DEFAULT-VALUE}).")
  String size;

  @Option(names = "--batch", defaultValue = "4096x4K", description = "Blocks x block size of the gather/scatter row, e.g. 4096x4K; none for no batch row (default: ${DEFAULT-VALUE}).")
  String batch;

  @Option(names = "--iters", defaultValue = "100", description = "Measured iterations per row (default: ${DEFAULT-VALUE}).")
  int iters;

  @Option(names = "--warmup-iters", defaultValue = "10", description = "Unmeasured iterations before each row (default: ${DEFAULT-VALUE}).")
  int warmupIters;

  @Option(names = "--baselines", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "The raw driver copies of the same routes, run together, beside each row (default: on).")
  boolean baselines;

  @Option(names = "--json", description = "Write the rows to this file.")
  Path json;

  @Option(names = "--machine", description = "The machine, as the results name it (e.g. \"1x H100 80GB HBM3, CUDA 13\"); printed and in the JSON.")
  String machine;

  @Option(names = "--host", defaultValue = "127.0.0.1", description = "Host the engines' control planes bind (default: ${DEFAULT-VALUE}).")
  String host;

  @Spec CommandSpec spec;

  /** Everything the flags say, checked. */
  record Plan(List<Integer> devices, List<XgmiPairsLayout> layouts, long sourceBytes, long destinationBytes) {}

  @Override
  public Integer call() throws Exception {
    GpuRuntime gpu = BenchGpu.runtime();
    Plan plan = plan(gpu);
    PrintStream out = System.out;
    List<Integer> devices = plan.devices();
    String devs = devices.stream().map(String::valueOf).collect(Collectors.joining(","));
    String mode = singleProcess ? "one JVM" : "one JVM per engine";
    out.printf(Locale.ROOT, "mori4j xgmi-pairs: %d engines on GPUs %s (%s), %s, iters=%d warmup=%d%s%n", devices.size(), devs, mode,
        plan.layouts().stream().map(l -> l.pattern().label() + " " + l.shape().label()).distinct().collect(Collectors.joining(", ")), iters, warmupIters,
        machine != null ? ", machine: " + machine : "");
    out.printf(Locale.ROOT, "  gpu runtime %s: %s; %s%n", gpu.name(), gpu.version(),
        devices.stream().distinct().map(d -> "GPU" + d + " " + gpu.deviceName(d)).collect(Collectors.joining(", ")));
    if (devices.stream().distinct().count() < devices.size())
      out.println("  engines share a GPU: a pair on one device is a device-to-device copy within its memory (its bandwidth shared by all"
          + " engines on it), not a peer link; such rows say nothing about NVLink/XGMI between GPUs");
    out.flush();
    List<XgmiPairsRow> rows = new ArrayList<>();
    List<String> ratios = new ArrayList<>();
    List<String> paths;
    long rowSeed = System.nanoTime();
    try (XgmiPairsEngines engines = XgmiPairsEngines.start(devices, singleProcess, gpu, plan.sourceBytes(), plan.destinationBytes(), host)) {
      paths = engines.paths();
      for (XgmiPairsLayout layout : plan.layouts()) {
        long seed = ++rowSeed;
        engines.row(layout, seed);
        List<long[]> measured = new ArrayList<>();
        for (int i = 0; i < warmupIters; i++) engines.iterate();
        engines.resetLateStarts();
        for (int i = 0; i < iters; i++) measured.add(engines.iterate());
        List<String> bad = engines.check();
        if (!bad.isEmpty()) {
          System.err.println("mori4j xgmi-pairs: data integrity check failed, " + layout.pattern().label() + " " + layout.shape().label() + ":");
          for (String b : bad) System.err.println("  " + b);
          return 1;
        }
        XgmiPairsRow row = XgmiPairsRow.of(ENGINE_SERIES, layout, devs, mode, measured, note(engines.lateStarts(), engines.latestStart()) + "; every destination region checked");
        rows.add(row);
        if (baselines) {
          XgmiPairsRawCopies.Result raw = XgmiPairsRawCopies.run(gpu, devices, layout, ++rowSeed, iters, warmupIters, engines.firstMarginNanos());
          if (raw.bad() != null) {
            System.err.println("mori4j xgmi-pairs: the raw copies' check failed: " + raw.bad());
            return 1;
          }
          XgmiPairsRow base = XgmiPairsRow.of(rawSeries(gpu, devices, layout), layout, devs, "this JVM, a thread and a stream per pair", raw.iterations(),
              note(raw.lateStarts(), raw.latestStart()) + "; " + (layout.shape().contiguous() ? "one copy per pair" : "one copy per block, back to back")
              + "; every destination region checked");
          rows.add(base);
          ratios.add(String.format(Locale.ROOT, "%s %s: aggregate avg %.2f GB/s = %.0f%% of the raw copies run together (%.2f GB/s); p50 %.1f us vs %.1f us",
              layout.pattern().label(), layout.shape().label(), row.aggregateGBps(), 100 * row.aggregateGBps() / base.aggregateGBps(), base.aggregateGBps(),
              row.p50Us(), base.p50Us()));
        }
      }
    }
    out.print(XgmiPairsRow.table(String.format(Locale.ROOT, "xgmi-pairs, %d engines on GPUs %s, %s (an iteration: common release to the last engine's end)",
        devices.size(), devs, mode), rows));
    out.println("bytes verified: " + rows.size() + " row(s), every destination region of every pair");
    if (!ratios.isEmpty()) {
      out.println("Comparison (same run):");
      for (String r : ratios) out.println("  " + r);
    }
    out.println("paths:");
    for (String p : paths) out.println("  " + p);
    out.flush();
    if (json != null) {
      JsonRows.write(json, XgmiPairsRow.json(rows, ENGINE_SERIES, machine));
      System.err.println("wrote " + json);
    }
    return 0;
  }

  private static String note(int late, long latestNanos) {
    return String.format(Locale.ROOT, "%s; latest start %.1f us after the release", late == 0 ? "every engine started at the release"
        : late + " iteration(s) with an engine that started more than 20 us after the release (counted in the time)", latestNanos / 1e3);
  }

  /** "raw cuMemcpyPeerAsync" or "raw cuMemcpyDtoDAsync" (both, joined by +, when the pattern has both kinds of pair). */
  static String rawSeries(GpuRuntime gpu, List<Integer> devices, XgmiPairsLayout layout) {
    Set<String> calls = new LinkedHashSet<>();
    for (XgmiPairsLayout.Route r : layout.routes()) calls.add(XgmiPairsRawCopies.copyName(gpu, !devices.get(r.source()).equals(devices.get(r.destination()))));
    return "raw " + String.join("+", calls);
  }

  /** Checks every flag against this machine before anything starts; a usage error names the flag and the value. */
  Plan plan(GpuRuntime gpu) {
    List<XgmiPairsLayout.Pattern> patterns = switch (pattern.toLowerCase(Locale.ROOT)) {
      case "both" -> List.of(XgmiPairsLayout.Pattern.RING, XgmiPairsLayout.Pattern.ALL_TO_ALL);
      default -> {
        XgmiPairsLayout.Pattern p = XgmiPairsLayout.Pattern.parse(pattern);
        if (p == null) throw usage("unknown --pattern '" + pattern + "' (expected ring, all-to-all or both)");
        yield List.of(p);
      }
    };
    List<XgmiPairsLayout.Shape> shapes = new ArrayList<>();
    if (!size.equalsIgnoreCase("none")) {
      try {
        shapes.add(XgmiPairsLayout.Shape.contiguous(HumanSize.parse(size)));
      } catch (IllegalArgumentException e) {
        throw usage("--size '" + size + "': " + e.getMessage() + " (or none)");
      }
    }
    if (!batch.equalsIgnoreCase("none")) shapes.add(parseBatch(batch));
    if (shapes.isEmpty()) throw usage("--size none and --batch none: nothing to measure");
    if (iters < 1) throw usage("--iters " + iters + ": must be at least 1");
    if (warmupIters < 0) throw usage("--warmup-iters " + warmupIters + ": must be 0 or more");
    if (!gpu.available()) throw usage("xgmi-pairs needs GPUs: " + gpu.version());
    List<Integer> devices = parseGpus(gpu);
    if (devices.size() < 2)
      throw usage("--gpus " + devices.stream().map(String::valueOf).collect(Collectors.joining(",")) + ": " + devices.size()
          + " engine; the patterns need at least 2 (a device may repeat: --gpus 0,0)");
    List<XgmiPairsLayout> layouts = new ArrayList<>();
    for (XgmiPairsLayout.Pattern p : patterns) {
      for (XgmiPairsLayout.Shape s : shapes) {
        try {
          layouts.add(XgmiPairsLayout.of(p, devices.size(), s));
        } catch (IllegalArgumentException e) {
          throw usage((s.contiguous() ? "--size " : "--batch ") + s.label() + " with --pattern " + p.label() + " and " + devices.size() + " engines: " + e.getMessage());
        }
      }
      for (XgmiPairsLayout.Route r : layouts.getLast().routes()) {
        int a = devices.get(r.source()), b = devices.get(r.destination());
        if (a != b && !gpu.canAccessPeer(a, b))
          throw usage("--pattern " + p.label() + " needs peer access GPU" + a + " -> GPU" + b + " (engine " + r.source() + " -> engine " + r.destination()
              + "), which this machine's devices lack (canAccessPeer false)");
      }
    }
    long src = layouts.stream().mapToLong(XgmiPairsLayout::sourceBytes).max().orElseThrow();
    long dst = layouts.stream().mapToLong(XgmiPairsLayout::destinationBytes).max().orElseThrow();
    long raw = baselines ? layouts.stream().mapToLong(l -> l.sourceBytes() + l.destinationBytes()).max().orElseThrow() : 0;
    Map<Integer, Long> perDevice = new LinkedHashMap<>();
    for (int d : devices) perDevice.merge(d, 1L, Long::sum);
    for (Map.Entry<Integer, Long> e : perDevice.entrySet()) {
      // the engines' buffers for the largest row, the raw copies' for the largest row while the engines still hold theirs, and 256 MiB for the rest
      long need = e.getValue() * (src + dst + raw) + (256L << 20);
      long free = gpu.memoryInfo(e.getKey()).free();
      if (need > free)
        throw usage(String.format(Locale.ROOT, "--size %s / --batch %s: %d engine(s) on GPU%d need %s (%s source + %s destination each%s, and 256 MiB), "
                + "it has %s free; use a smaller --size or fewer engines per GPU", size, batch, e.getValue(), e.getKey(),
            HumanSize.format(need), HumanSize.format(src), HumanSize.format(dst), baselines ? ", the same again for the raw copies" : "", HumanSize.format(free)));
    }
    return new Plan(List.copyOf(devices), List.copyOf(layouts), src, dst);
  }

  private List<Integer> parseGpus(GpuRuntime gpu) {
    int count = gpu.deviceCount();
    if (gpus == null) return IntStream.range(0, count).boxed().toList();
    List<Integer> out = new ArrayList<>();
    for (String s : gpus.split(",")) {
      int d;
      try {
        d = Integer.parseInt(s.trim());
      } catch (NumberFormatException e) {
        throw usage("--gpus '" + gpus + "': '" + s + "' is not a device index");
      }
      if (d < 0 || d >= count)
        throw usage("--gpus " + gpus + ": device " + d + " does not exist; this machine has " + count + " " + gpu.name() + " device(s)"
            + (count > 0 ? " (0.." + (count - 1) + ")" : ""));
      out.add(d);
    }
    return out;
  }

  private XgmiPairsLayout.Shape parseBatch(String text) {
    String[] p = text.toLowerCase(Locale.ROOT).split("x");
    try {
      if (p.length != 2) throw new IllegalArgumentException("expected BLOCKSxSIZE");
      int blocks = Integer.parseInt(p[0].trim());
      long block = HumanSize.parse(p[1].trim().toUpperCase(Locale.ROOT));
      if (blocks < 1 || block < 1) throw new IllegalArgumentException("blocks and size must be positive");
      return XgmiPairsLayout.Shape.batch(blocks, block);
    } catch (IllegalArgumentException e) {
      throw usage("--batch '" + text + "': " + e.getMessage() + " (e.g. 4096x4K, or none)");
    }
  }

  private ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }
}
