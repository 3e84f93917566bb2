package org.mori4j.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.mori4j.bench.plot.Plot;
import org.mori4j.bench.plot.PlotSeries;
import org.mori4j.bench.plot.RunInfo;
import org.mori4j.bench.plot.SvgPlot;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code mori4j plot}: the SVG of {@code bench --plot} drawn again from a run's recorded JSON, so that runs
 * recorded before plots existed get theirs without being run again. {@code --json FILE} takes a main results file
 * and its siblings of the same run when they exist ({@code FILE.baselines.json}, {@code FILE.cpu.json},
 * {@code FILE.tcp.json}); several {@code --json} overlay their runs, each series prefixed by its file's name.
 * {@code --dir FOLDER} writes {@code <name>.svg} beside every main results file of a recording. The subtitle comes
 * from the recording's {@code machine.txt} (else its folder's name), the title from the table title in
 * {@code <name>.txt} (else the file's name).
 */
@Command(name = "plot", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Draw bandwidth and latency by size from recorded bench JSON as an SVG (what bench --plot draws).")
public final class PlotCommand implements Callable<Integer> {
  /** Measured siblings first, so that mori4j's series come before the baselines in the legend and take the first colours. */
  private static final List<String> SIBLINGS = List.of("cpu", "tcp", "baselines");

  @Spec CommandSpec spec;

  @Option(names = "--json", paramLabel = "FILE", description = "A results file written by --json (its .baselines/.cpu/.tcp siblings are added); repeatable.")
  List<Path> json;

  @Option(names = "--out", paramLabel = "FILE.svg", description = "With --json: the SVG to write.")
  Path out;

  @Option(names = "--dir", paramLabel = "FOLDER", description = "Instead of --json: an SVG beside every main results file of FOLDER.")
  Path dir;

  @Option(names = "--title", description = "With --json: the plot's title (default: the table title of FILE's .txt, else the file's name).")
  String title;

  @Override
  public Integer call() throws IOException {
    if ((json == null) == (dir == null)) throw usage("give either --json FILE (with --out) or --dir FOLDER");
    if (dir != null) {
      if (out != null || title != null) throw usage("--out and --title go with --json; --dir names each SVG after its JSON");
      if (!Files.isDirectory(dir)) throw usage("--dir is not a folder: " + dir);
      return plotFolder();
    }
    if (out == null) throw usage("--json needs --out FILE.svg");
    BenchPlot.check(out, this::usage);
    for (Path f : json) if (!Files.isRegularFile(f)) throw usage("--json: no such file: " + f);
    List<PlotSeries> series = new ArrayList<>();
    for (Path f : json) {
      try {
        for (PlotSeries s : seriesOf(f)) series.add(json.size() == 1 ? s : new PlotSeries(stem(f) + ": " + s.name(), s.kind(), s.points(), s.note()));
      } catch (IllegalArgumentException e) {
        throw usage("--json " + e.getMessage());
      }
    }
    Path first = json.getFirst();
    SvgPlot.write(new Plot(title != null ? title : titleOf(first), RunInfo.fromRecording(folderOf(first)), series), out);
    System.err.println("wrote " + out);
    return 0;
  }

  private ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }

  /** Every main results file of the folder; files that are no results (a JMH report) are named and left out. */
  private int plotFolder() throws IOException {
    List<Path> mains;
    try (Stream<Path> files = Files.list(dir)) {
      mains = files.filter(f -> f.getFileName().toString().endsWith(".json") && !isSibling(f)).sorted().toList();
    }
    int written = 0;
    for (Path f : mains) {
      List<PlotSeries> series;
      try {
        series = seriesOf(f);
      } catch (IllegalArgumentException e) {
        System.err.println("skipped " + e.getMessage());
        continue;
      }
      Path svg = f.resolveSibling(stem(f) + ".svg");
      SvgPlot.write(new Plot(titleOf(f), RunInfo.fromRecording(folderOf(f)), series), svg);
      System.err.println("wrote " + svg);
      written++;
    }
    if (written == 0) {
      System.err.println("mori4j plot: no results file in " + dir);
      return 1;
    }
    return 0;
  }

  /** The series of one run: the file's rows (or named series) and those of its siblings that exist. */
  static List<PlotSeries> seriesOf(Path main) throws IOException {
    List<PlotSeries> out = new ArrayList<>(seriesOfFile(main, ""));
    for (String kind : SIBLINGS) {
      Path sibling = main.resolveSibling(stem(main) + "." + kind + ".json");
      if (!isSibling(main) && Files.isRegularFile(sibling)) out.addAll(seriesOfFile(sibling, kind));
    }
    return out;
  }

  private static List<PlotSeries> seriesOfFile(Path f, String kind) throws IOException {
    List<JsonRows.Entry> entries = JsonRows.read(f);
    if (entries.isEmpty()) return List.of();
    if (entries.getFirst().series() != null) {
      // named series: a baselines file, or shmem-bench's single file, where the shmem rows are mori4j's own
      List<PlotSeries> out = new ArrayList<>();
      for (PlotSeries s : PlotSeries.baselines(entries.stream().map(JsonRows.Entry::baseline).toList())) {
        boolean ours = !kind.equals("baselines") && s.name().startsWith("shmem ");
        out.add(ours ? new PlotSeries(s.name(), PlotSeries.Kind.MEASURED, s.points(), s.note()) : s);
      }
      return out;
    }
    JsonRows.Entry e = entries.getFirst();
    String name;
    if (e.backend() != null) {
      name = e.backend().equals("rdma") ? "rdma (" + e.provider() + " provider" + (Boolean.TRUE.equals(e.emulation()) ? ": emulation" : "") + ")" : e.backend();
    } else {
      name = kind.equals("cpu") ? "mori4j cpu<->cpu" : "mori4j";
    }
    return PlotSeries.measured(name, entries.stream().map(JsonRows.Entry::row).toList());
  }

  private static boolean isSibling(Path f) {
    String n = f.getFileName().toString();
    // bench --rounds' paired ratios (FILE.paired.json) are no rows: never a main file of --dir
    return SIBLINGS.stream().anyMatch(k -> n.endsWith("." + k + ".json")) || n.endsWith(".paired.json");
  }

  static String stem(Path f) {
    String n = f.getFileName().toString();
    return n.endsWith(".json") ? n.substring(0, n.length() - 5) : n;
  }

  private static Path folderOf(Path f) {
    Path parent = f.toAbsolutePath().getParent();
    return parent != null ? parent : Path.of(".");
  }

  /** The first table title in the run's printed output ({@code <name>.txt}), else "mori4j bench: <name>". */
  static String titleOf(Path main) {
    Path txt = main.resolveSibling(stem(main) + ".txt");
    if (Files.isRegularFile(txt)) {
      try {
        List<String> lines = Files.readAllLines(txt, StandardCharsets.UTF_8);
        for (int i = 0; i + 1 < lines.size(); i++) {
          if (lines.get(i).startsWith("+-") && lines.get(i + 1).startsWith("|")) {
            String t = lines.get(i + 1).replaceAll("^\\|\\s*|\\s*\\|?\\s*$", "");
            if (!t.isEmpty()) return t;
          }
        }
      } catch (IOException | java.io.UncheckedIOException e) {
        // an unreadable .txt only costs the title
      }
    }
    return "mori4j bench: " + stem(main);
  }
}
