package org.mori4j.bench.baseline;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * An external baseline tool (iperf3, ucx_perftest) run with a hard time limit: its merged stdout and stderr
 * are collected line by line on a daemon thread, callers can wait for a line (a server saying it listens) or
 * for the exit, and {@link #close()} always ends the process and its children. Nothing the tool does can hang
 * the bench or outlive it.
 */
public final class BoundedProcess implements AutoCloseable {
  private final Process process;
  private final String name;
  private final List<String> lines = new ArrayList<>();
  private final Thread reader;

  private BoundedProcess(Process process, String name) {
    this.process = process;
    this.name = name;
    this.reader = Thread.ofPlatform().daemon().name("out-" + name).start(this::drain);
  }

  /** Starts {@code command} with {@code env} added to this process's environment. */
  public static BoundedProcess start(List<String> command, Map<String, String> env) throws IOException {
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectInput(ProcessBuilder.Redirect.PIPE);
    pb.environment().putAll(env);
    Process p = pb.start();
    p.getOutputStream().close(); // the tools read no input; EOF right away rather than a pipe nobody writes
    return new BoundedProcess(p, Path.of(command.getFirst()).getFileName().toString());
  }

  /** The executable {@code name} on PATH, if any. */
  public static Optional<Path> onPath(String name) {
    String path = System.getenv("PATH");
    if (path == null) return Optional.empty();
    for (String dir : path.split(File.pathSeparator)) {
      if (dir.isEmpty()) continue;
      Path p = Path.of(dir, name);
      if (Files.isRegularFile(p) && Files.isExecutable(p)) return Optional.of(p);
    }
    return Optional.empty();
  }

  private void drain() {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        synchronized (lines) {
          lines.add(line);
          lines.notifyAll();
        }
      }
    } catch (IOException ignored) {
      // the process was killed; what was read is kept
    } finally {
      synchronized (lines) {
        lines.notifyAll();
      }
    }
  }

  /** Waits until a line matching {@code test} was printed; false on timeout or when the process ended first. */
  public boolean awaitLine(Predicate<String> test, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (lines) {
      while (true) {
        for (String l : lines) if (test.test(l)) return true;
        long left = deadline - System.nanoTime();
        if (left <= 0 || (!reader.isAlive() && !process.isAlive())) return false;
        lines.wait(Math.max(1, Math.min(100, TimeUnit.NANOSECONDS.toMillis(left))));
      }
    }
  }

  /** Waits for the exit; the exit code, or empty on timeout (the process is then killed). */
  public Optional<Integer> awaitExit(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      close();
      return Optional.empty();
    }
    reader.join(2000); // let the last lines arrive
    return Optional.of(process.exitValue());
  }

  /** Everything printed so far. */
  public List<String> lines() {
    synchronized (lines) {
      return List.copyOf(lines);
    }
  }

  /** The last {@code n} lines, for error messages. */
  public String tail(int n) {
    List<String> all = lines();
    return String.join("\n", all.subList(Math.max(0, all.size() - n), all.size()));
  }

  public ProcessHandle handle() {
    return process.toHandle();
  }

  public String name() {
    return name;
  }

  @Override
  public void close() {
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroy();
    try {
      if (!process.waitFor(2, TimeUnit.SECONDS)) process.destroyForcibly().waitFor(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
