package org.mori4j.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.mori4j.bench.baseline.Baselines;
import org.mori4j.bench.baseline.GpuCopyBaseline;
import org.mori4j.natives.gpu.GpuRuntime;

/**
 * The report of {@code mori4j bench --backend tcp}: on one warm engine ({@link TcpBenchPass.Warm}), one round or
 * {@code --rounds N} of mori4j's sweep and the baselines in {@link PairedRounds}' order, each round printed as a plain
 * run prints (its table, paths, baselines and comparison, labelled "round k of N" when there are several), then the
 * paired section ({@link PairedRatios}), the JSON files and the plot. It is apart from {@link BenchCommand}, which
 * checks the flags and starts the target, because what a round is and how rounds are told apart is its own concern.
 *
 * @param plan         the points
 * @param sweep        MORI's flags of the run
 * @param rounds       1 for a plain run
 * @param baselines    whether the baselines run (always with rounds above 1)
 * @param base         the baselines' settings but the capacity, which the warm engine knows
 * @param localMem     "cpu" or "gpu"
 * @param gpuDevice    this side's device with GPU memory
 * @param localTarget  the target is a child of this run (its device may be a peer-copy baseline's)
 * @param compareCpu   whether the CPU<->CPU rows are measured too
 * @param json         --json, or null
 * @param plot         --plot, or null
 */
record TcpBenchRounds(SweepPlan plan, SweepOptions sweep, int rounds, boolean baselines, Baselines.Settings base, String localMem,
                      int gpuDevice, boolean localTarget, boolean compareCpu, Path json, Path plot) {

  /** Bytes of the raw GPU copies unless a row is bigger: the size issue 3 compares at. */
  static final long GPU_COPY_SIZE = 64L << 20;

  /** What one round printed and measured; {@code base} is empty without baselines. */
  record Round(int round, TcpBenchPass.EngineRun run, List<BaselineRow> base, List<Comparison.Ratio> ratios) {}

  /** Runs the rounds on {@code warm} and prints them to {@code out}; exceptions of a transfer end the run. */
  List<Round> run(TcpBenchPass.Warm warm, GpuRuntime gpu, PrintStream out) throws IOException {
    List<Round> done = new ArrayList<>();
    PairedRounds.run(rounds, k -> mori4j(warm, k, out), baselines ? k -> baselines(warm, gpu, k, out) : null, r -> {
      List<BaselineRow> base = r.baselines() == null ? List.of() : r.baselines();
      List<Comparison.Ratio> ratios = ratios(r.mori4j(), base);
      List<String> cmp = new ArrayList<>(r.mori4j().ratioLines());
      if (gpuRun(r.mori4j())) {
        cmp.addAll(Comparison.gpuLines(r.mori4j().rows(), compareCpu ? r.mori4j().cpuRows() : null, base,
            gpu != null ? GpuCopyBaseline.h2dSeries(gpu) : null, gpu != null ? GpuCopyBaseline.d2hSeries(gpu) : null));
      }
      if (baselines) cmp.addAll(Comparison.render(ratios.stream().filter(x -> !x.series().equals(Comparison.CPU_ROWS)).toList()));
      if (!cmp.isEmpty()) {
        out.println("Comparison (same run" + label(", ", r.round()) + "):");
        for (String l : cmp) out.println("  " + l);
      }
      out.flush();
      done.add(new Round(r.round(), r.mori4j(), base, ratios));
    });
    String op = sweep.op.name().toLowerCase(Locale.ROOT);
    List<PairedRatios> paired = rounds > 1 ? PairedRatios.of(done.stream().map(Round::ratios).toList()) : List.of();
    if (rounds > 1) for (String l : PairedRatios.section(paired, op)) out.println(l);
    out.flush();
    if (json != null) writeJson(done, paired, op);
    if (plot != null) drawPlot(done, gpu);
    return done;
  }

  private TcpBenchPass.EngineRun mori4j(TcpBenchPass.Warm warm, int round, PrintStream out) {
    TcpBenchPass.EngineRun run = warm.sweep();
    // a single run frees its engine before the baselines, as it always has; rounds keep it warm for the next round
    if (rounds == 1) warm.close();
    out.print(ResultTable.render(title(run.localWhere(), run.remoteWhere()) + label(" [", round, "]"), run.rows()));
    if (compareCpu) out.print(ResultTable.render(title("cpu", "cpu") + " [--compare-cpu" + label(", ", round) + "]", run.cpuRows()));
    for (String p : run.paths()) out.println(p);
    out.println(run.registration());
    out.flush();
    return run;
  }

  private List<BaselineRow> baselines(TcpBenchPass.Warm warm, GpuRuntime gpu, int round, PrintStream out) {
    ProgressBar progress = ProgressBar.forConsole(Baselines.steps(plan));
    Baselines.Settings s = new Baselines.Settings(base.nioHost(), base.nioPort(), warm.capacity(), base.iters(), base.warmup(),
        base.warmupNanos(), base.pingpongIters(), base.iperfSeconds());
    List<BaselineRow> rows = new ArrayList<>(Baselines.run(plan, s, progress));
    progress.finish();
    int copyDevice = localMem.equals("gpu") ? gpuDevice : warm.remoteGpu();
    if (gpu != null && copyDevice >= 0) {
      // the target's device for a peer copy only when it is on this machine (a spawned target)
      int peerDevice = localTarget && localMem.equals("gpu") && warm.remoteGpu() >= 0 ? warm.remoteGpu() : -1;
      long copySize = Math.min(Math.max(plan.points().stream().mapToLong(SweepPlan.Point::msgSize).max().orElse(0), GPU_COPY_SIZE), sweep.maxBuffer);
      rows.addAll(GpuCopyBaseline.run(gpu, copyDevice, peerDevice, copySize, sweep.iters, sweep.warmupIters, sweep.warmupNanos()));
    }
    out.print(ResultTable.renderBaselines("Baselines (same run" + label(", ", round) + ")", rows));
    out.flush();
    return rows;
  }

  /**
   * The round's ratios, each computed once: GPU rows against the CPU rows of the same round (with --compare-cpu), and
   * the NIO/iperf3/UCX ratios, which are CPU<->CPU references, against the CPU rows when there are some.
   */
  private List<Comparison.Ratio> ratios(TcpBenchPass.EngineRun run, List<BaselineRow> base) {
    List<Comparison.Ratio> out = new ArrayList<>();
    boolean gpuRun = gpuRun(run);
    if (gpuRun && compareCpu) out.addAll(Comparison.gpuRatios(run.rows(), run.cpuRows()));
    if (!baselines) return out;
    String scope = gpuRun ? (compareCpu ? "cpu<->cpu " : "gpu ") : "";
    for (Comparison.Ratio r : Comparison.ratios(compareCpu ? run.cpuRows() : run.rows(), base)) out.add(r.in(scope));
    return out;
  }

  private static boolean gpuRun(TcpBenchPass.EngineRun run) {
    return !run.localWhere().equals("cpu") || !run.remoteWhere().equals("cpu");
  }

  /** " [round k of N]"-style label with the given brackets, or "" for a single run. */
  private String label(String open, int round, String close) {
    return rounds > 1 ? open + "round " + round + " of " + rounds + close : "";
  }

  private String label(String open, int round) {
    return label(open, round, "");
  }

  String title(String localWhere, String remoteWhere) {
    String mem = localWhere.equals("cpu") && remoteWhere.equals("cpu") ? "cpu memory" : localWhere + " <-> target " + remoteWhere + " memory";
    return sweep.title(mem);
  }

  /**
   * A single run writes the files it always wrote; with rounds every row and baseline carries its 1-based
   * {@code round}, and the paired ratios go to {@code <json>.paired.json}.
   */
  private void writeJson(List<Round> done, List<PairedRatios> paired, String op) throws IOException {
    List<Path> also = new ArrayList<>();
    if (rounds == 1) {
      Round r = done.getFirst();
      JsonRows.write(json, JsonRows.rowsToJson(r.run().rows()));
      if (compareCpu) write(also, JsonRows.cpuRowsPath(json), JsonRows.rowsToJson(r.run().cpuRows()));
      if (baselines) write(also, JsonRows.baselinesPath(json), JsonRows.baselinesToJson(r.base()));
    } else {
      List<ObjectNode> rows = new ArrayList<>(), cpu = new ArrayList<>(), base = new ArrayList<>();
      for (Round r : done) {
        for (ResultRow x : r.run().rows()) rows.add(inRound(r.round(), JsonRows.rowObject(x)));
        for (ResultRow x : r.run().cpuRows()) cpu.add(inRound(r.round(), JsonRows.rowObject(x)));
        for (BaselineRow x : r.base()) base.add(inRound(r.round(), JsonRows.baselineObject(x)));
      }
      JsonRows.write(json, JsonRows.objectsToJson(rows));
      if (compareCpu) write(also, JsonRows.cpuRowsPath(json), JsonRows.objectsToJson(cpu));
      write(also, JsonRows.baselinesPath(json), JsonRows.objectsToJson(base));
      write(also, pairedPath(json), PairedRatios.toJson(paired, op));
    }
    System.err.println("wrote " + json + (also.isEmpty() ? "" : " and " + String.join(", ", also.stream().map(Path::toString).toList())));
  }

  /** Where {@code --rounds} puts the paired ratios ({@code run.json} -> {@code run.paired.json}). */
  static Path pairedPath(Path main) {
    String name = main.getFileName().toString();
    String stem = name.endsWith(".json") ? name.substring(0, name.length() - 5) : name;
    return main.resolveSibling(stem + ".paired.json");
  }

  private static void write(List<Path> also, Path file, String text) throws IOException {
    JsonRows.write(file, text);
    also.add(file);
  }

  private static ObjectNode inRound(int round, ObjectNode row) {
    ObjectNode o = JsonRows.object();
    o.put("round", round);
    o.setAll(row);
    return o;
  }

  /** Every round's rows and baselines in one plot: a size's points of several rounds show the spread between rounds. */
  private void drawPlot(List<Round> done, GpuRuntime gpu) throws IOException {
    TcpBenchPass.EngineRun first = done.getFirst().run();
    boolean gpuRun = gpuRun(first);
    String where = gpuRun ? "mori4j " + first.localWhere() + "<->" + first.remoteWhere() : "mori4j";
    List<ResultRow> rows = done.stream().flatMap(r -> r.run().rows().stream()).toList();
    List<ResultRow> cpuRows = done.stream().flatMap(r -> r.run().cpuRows().stream()).toList();
    List<BaselineRow> base = done.stream().flatMap(r -> r.base().stream()).toList();
    String title = title(first.localWhere(), first.remoteWhere()) + (rounds > 1 ? " [" + rounds + " rounds]" : "");
    new BenchPlot().measured(where, rows).measured("mori4j cpu<->cpu", cpuRows).baselines(base)
        .write(plot, title, gpu != null && gpuRun ? gpu.name() + " " + gpu.version() : null);
  }
}
