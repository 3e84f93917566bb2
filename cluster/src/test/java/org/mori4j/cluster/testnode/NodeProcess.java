package org.mori4j.cluster.testnode;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A {@link TestNode} in a child JVM (the same java binary and class path as the test's), optionally started
 * through a prefix such as {@code ip netns exec <ns>}: its output lines are kept with the time they were
 * read, and the test waits for lines, sends commands, and kills it.
 */
public final class NodeProcess implements AutoCloseable {
  /** One output line and when the test read it (epoch ms). */
  public record Line(long readAt, String text) {
    public String[] words() {
      return text.split(" ");
    }

    /** The time a node line carries (its second word), epoch ms. */
    public long at() {
      return Long.parseLong(words()[1]);
    }
  }

  public final String name;
  public final long launchedAt;
  private final Process process;
  private final Writer in;
  private final List<Line> lines = new ArrayList<>();
  private boolean eof; // guarded by lines

  private NodeProcess(String name, long launchedAt, Process process) {
    this.name = name;
    this.launchedAt = launchedAt;
    this.process = process;
    this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    Thread reader = new Thread(this::drain, "node-output-" + name);
    reader.setDaemon(true);
    reader.start();
  }

  /**
   * Starts a node. {@code prefix} runs before the java command (empty for none); {@code env} adds to the
   * child's environment (failure-detector overrides, for instance).
   */
  public static NodeProcess start(String name, List<String> prefix, Map<String, String> env, String host, int port, String key,
                                  int index, List<String> seeds) throws IOException {
    String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
    List<String> cmd = new ArrayList<>(prefix);
    cmd.addAll(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx192m", "-XX:+UseSerialGC", "-Xss1m",
        "-cp", System.getProperty("java.class.path"), TestNode.class.getName(),
        "--host", host, "--port", String.valueOf(port), "--key", key, "--index", String.valueOf(index)));
    for (String s : seeds) cmd.addAll(List.of("--seed", s));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().putAll(env);
    long t = System.currentTimeMillis();
    return new NodeProcess(name, t, pb.start());
  }

  private void drain() {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      String s;
      while ((s = r.readLine()) != null) {
        synchronized (lines) {
          lines.add(new Line(System.currentTimeMillis(), s));
          lines.notifyAll();
        }
      }
    } catch (IOException ignored) {
      // the process is gone
    } finally {
      synchronized (lines) {
        eof = true;
        lines.notifyAll();
      }
    }
  }

  public long pid() {
    return process.pid();
  }

  public Process process() {
    return process;
  }

  public void send(String command) {
    try {
      in.write(command + "\n");
      in.flush();
    } catch (IOException e) {
      throw new IllegalStateException("node " + name + " does not take commands any more: " + e.getMessage(), e);
    }
  }

  /** Every line so far that starts with {@code prefix + " "}. */
  public List<Line> lines(String prefix) {
    synchronized (lines) {
      List<Line> out = new ArrayList<>();
      for (Line l : lines) if (l.text().startsWith(prefix + " ")) out.add(l);
      return out;
    }
  }

  /** The first line so far that matches, if any. */
  public Optional<Line> first(Predicate<String> match) {
    synchronized (lines) {
      for (Line l : lines) if (match.test(l.text())) return Optional.of(l);
    }
    return Optional.empty();
  }

  /** Waits for the first line (from the beginning of the output) that matches; fails with the output's tail. */
  public Line await(Predicate<String> match, Duration limit, String what) throws InterruptedException {
    return awaitFrom(0, match, limit, what);
  }

  /** Waits for a matching line at index {@code from} or later of the output. */
  public Line awaitFrom(int from, Predicate<String> match, Duration limit, String what) throws InterruptedException {
    long deadline = System.nanoTime() + limit.toNanos();
    synchronized (lines) {
      int i = from;
      while (true) {
        for (; i < lines.size(); i++) if (match.test(lines.get(i).text())) return lines.get(i);
        long left = deadline - System.nanoTime();
        if (left <= 0 || (eof && i >= lines.size()))
          throw new AssertionError("node " + name + ": " + what + " did not happen within " + limit.toSeconds() + " s"
              + (eof ? " (its output ended" + (process.isAlive() ? "" : ", exit status " + process.exitValue()) + ")" : "") + "; its last output:\n" + tail(60));
        lines.wait(Math.max(1, Math.min(200, left / 1_000_000)));
      }
    }
  }

  /** How many lines so far (an index for {@link #awaitFrom}). */
  public int size() {
    synchronized (lines) {
      return lines.size();
    }
  }

  /** Sends {@code stats} and returns the STATS lines of its answer. */
  public List<Line> stats(Duration limit) throws InterruptedException {
    int from = size();
    send("stats");
    Line end = awaitFrom(from, s -> s.startsWith("STATS-END "), limit, "answer to stats");
    List<Line> out = new ArrayList<>();
    synchronized (lines) {
      for (int i = from; i < lines.size() && lines.get(i) != end; i++)
        if (lines.get(i).text().startsWith("STATS ")) out.add(lines.get(i));
    }
    return out;
  }

  public String tail(int n) {
    synchronized (lines) {
      StringBuilder sb = new StringBuilder();
      for (int i = Math.max(0, lines.size() - n); i < lines.size(); i++) sb.append("  [").append(name).append("] ").append(lines.get(i).text()).append('\n');
      return sb.toString();
    }
  }

  /** SIGKILL (what {@link Process#destroyForcibly()} sends on Linux); returns the exit status (137 = 128 + 9). */
  public int kill() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(10, TimeUnit.SECONDS)) throw new AssertionError("node " + name + " did not die within 10 s of SIGKILL");
    return process.exitValue();
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      process.destroyForcibly();
      try {
        process.waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
