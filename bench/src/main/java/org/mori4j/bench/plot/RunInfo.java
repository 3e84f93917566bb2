package org.mori4j.bench.plot;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * When, where and from which commit a run was made, for a plot's subtitle: {@link #current} for the run this
 * process is making, {@link #fromRecording} for a folder of {@code bench/results} (its {@code machine.txt},
 * else the folder's name {@code <UTC>-<commit>-...}). A figure without its machine and commit cannot be compared
 * with another, so the subtitle always names all three, "unknown" where they are.
 *
 * @param date    e.g. {@code 2026-11-24 12:40 UTC}
 * @param machine e.g. {@code Linux x86_64, 2 CPUs, AMD EPYC}
 * @param commit  short commit id
 */
public record RunInfo(String date, String machine, String commit) {
  private static final DateTimeFormatter DATE = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'", Locale.ROOT).withZone(ZoneOffset.UTC);
  private static final Pattern FOLDER = Pattern.compile("(\\d{8}T\\d{4})Z-([0-9a-f]{7,40})(?:-.*)?");

  /** One line: date, machine, commit. */
  public String subtitle() {
    return date + " \u00b7 " + machine + " \u00b7 commit " + commit;
  }

  /**
   * This run: the time now, this machine (OS, architecture, CPUs and CPU model, plus {@code extra} such as the
   * GPU when not blank) and the commit from {@code MORI4J_COMMIT} (what the record scripts set), else
   * {@code git rev-parse} in the working directory, else "unknown".
   */
  public static RunInfo current(String extra) {
    String machine = System.getProperty("os.name") + " " + System.getProperty("os.arch") + ", " + Runtime.getRuntime().availableProcessors()
        + " CPUs" + cpuModel().map(m -> ", " + m).orElse("") + (extra == null || extra.isBlank() ? "" : ", " + extra);
    return new RunInfo(DATE.format(Instant.now().truncatedTo(ChronoUnit.MINUTES)), machine, currentCommit());
  }

  /** The run recorded in {@code dir}; "unknown" for what neither machine.txt nor the folder's name says. */
  public static RunInfo fromRecording(Path dir) {
    Map<String, String> fields = new LinkedHashMap<>();
    StringBuilder gpus = new StringBuilder();
    Path machineTxt = dir.resolve("machine.txt");
    if (Files.isRegularFile(machineTxt)) {
      try {
        for (String line : Files.readAllLines(machineTxt, StandardCharsets.UTF_8)) {
          Matcher m = Pattern.compile("^(date|commit|host):\\s*(.+)$").matcher(line);
          if (m.matches()) fields.putIfAbsent(m.group(1), m.group(2).trim());
          Matcher g = Pattern.compile("^GPU \\d+: (.+?) \\(UUID.*$").matcher(line);
          if (g.matches()) gpus.append(gpus.isEmpty() ? "" : ", ").append(g.group(1));
        }
      } catch (IOException e) {
        // the folder's name still says when and which commit
      }
    }
    Matcher f = FOLDER.matcher(dir.toAbsolutePath().normalize().getFileName() == null ? "" : dir.toAbsolutePath().normalize().getFileName().toString());
    boolean named = f.matches();
    String date = readableDate(fields.getOrDefault("date", named ? f.group(1) : "unknown date"));
    String commit = fields.getOrDefault("commit", named ? f.group(2) : "unknown");
    String machine = fields.getOrDefault("host", "unknown machine") + (gpus.isEmpty() ? "" : ", " + gpus);
    return new RunInfo(date, machine, commit.length() > 7 ? commit.substring(0, 7) : commit);
  }

  /** {@code 2026-11-23T17:49:27Z} (machine.txt) and {@code 20261123T1749} (a folder's name) as {@code 2026-11-23 17:49 UTC}. */
  static String readableDate(String d) {
    Matcher iso = Pattern.compile("(\\d{4}-\\d{2}-\\d{2})T(\\d{2}:\\d{2})(:\\d{2}(\\.\\d+)?)?Z").matcher(d);
    if (iso.matches()) return iso.group(1) + " " + iso.group(2) + " UTC";
    Matcher compact = Pattern.compile("(\\d{4})(\\d{2})(\\d{2})T(\\d{2})(\\d{2})").matcher(d);
    if (compact.matches()) return compact.group(1) + "-" + compact.group(2) + "-" + compact.group(3) + " " + compact.group(4) + ":" + compact.group(5) + " UTC";
    return d;
  }

  private static java.util.Optional<String> cpuModel() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"), StandardCharsets.UTF_8)) {
        if (line.startsWith("model name")) return java.util.Optional.of(line.substring(line.indexOf(':') + 1).trim());
      }
    } catch (IOException | RuntimeException e) {
      // not Linux, or not readable: the OS and CPU count still describe the machine
    }
    return java.util.Optional.empty();
  }

  private static String currentCommit() {
    String env = System.getenv("MORI4J_COMMIT");
    if (env != null && !env.isBlank()) return env.trim().length() > 7 ? env.trim().substring(0, 7) : env.trim();
    try {
      Process p = new ProcessBuilder(List.of("git", "rev-parse", "--short=7", "HEAD")).redirectErrorStream(true).start();
      p.getOutputStream().close();
      // bounded: a plot never waits long for its subtitle
      if (!p.waitFor(5, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return "unknown";
      }
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      return p.exitValue() == 0 && out.matches("[0-9a-f]{7,40}") ? out : "unknown";
    } catch (IOException e) {
      return "unknown"; // no git
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "unknown";
    }
  }
}
