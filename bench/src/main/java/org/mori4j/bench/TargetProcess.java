package org.mori4j.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The target engine of {@code mori4j bench} in a child JVM: the same java binary and class path as this
 * process, running {@code serve} (or {@code node}, for {@code cluster-bench}). A separate process, not a second engine in this JVM, because the
 * benchmark's claim is cross-process transfer, and two engines in one JVM would share GC, JIT and the
 * scheduler. The child's stderr is kept (last lines) and printed with a "[target]" prefix when it fails; it
 * is ended when {@link #close()} runs, which a shutdown hook also does on Ctrl-C.
 */
public final class TargetProcess implements AutoCloseable {
  static final String SERVE_CLASS = "org.mori4j.bench.Mori4jCommand";
  private static final int STDERR_LINES = 40;

  private final Process process;
  private final ReadyLine ready;
  private final Deque<String> stderrTail;
  private final Thread hook;
  private volatile boolean shuttingDown;

  private TargetProcess(Process process, ReadyLine ready, Deque<String> stderrTail) {
    this.process = process;
    this.ready = ready;
    this.stderrTail = stderrTail;
    this.hook = new Thread(() -> {
      shuttingDown = true;
      kill();
    }, "mori4j-target-kill");
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /** The command line of the child: {@code mori4j <subcommand> args}. */
  static List<String> command(String subcommand, List<String> args) {
    return command(List.of(), subcommand, args);
  }

  /** The command line of the child with extra JVM flags ({@code -Dkey=value}) before the main class. */
  static List<String> command(List<String> jvmArgs, String subcommand, List<String> args) {
    String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
    List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"));
    cmd.addAll(jvmArgs);
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), SERVE_CLASS, subcommand));
    cmd.addAll(args);
    return cmd;
  }

  /**
   * Starts {@code serve serveArgs} and waits for its READY line.
   *
   * @throws IOException when it cannot start, exits, or is not ready within {@code timeout}; the message
   *                     contains the child's stderr
   */
  public static TargetProcess start(List<String> serveArgs, Duration timeout, PrintStream err) throws IOException {
    return start("serve", serveArgs, timeout, err);
  }

  /**
   * Starts {@code mori4j subcommand args} ({@code serve}, or {@code node}, which prints the same READY line)
   * and waits for its READY line; failures as {@link #start(List, Duration, PrintStream)}.
   */
  public static TargetProcess start(String subcommand, List<String> args, Duration timeout, PrintStream err) throws IOException {
    return start(List.of(), subcommand, args, timeout, err);
  }

  /**
   * As {@link #start(String, List, Duration, PrintStream)}, with {@code jvmArgs} given to the child's JVM: the
   * settings its engine reads from its configuration (the RDMA provider, {@code -Dmori4j.rdma.provider=...}).
   */
  public static TargetProcess start(List<String> jvmArgs, String subcommand, List<String> args, Duration timeout, PrintStream err)
      throws IOException {
    Process p = new ProcessBuilder(command(jvmArgs, subcommand, args)).start();
    Deque<String> tail = new ArrayDeque<>();
    Thread.ofPlatform().daemon().name("target-stderr").start(() -> keepTail(p.getErrorStream(), tail));
    CompletableFuture<ReadyLine> ready = new CompletableFuture<>();
    Thread.ofPlatform().daemon().name("target-stdout").start(() -> readReady(p.getInputStream(), ready));
    try {
      ReadyLine line = ready.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      return new TargetProcess(p, line, tail);
    } catch (TimeoutException | ExecutionException | InterruptedException e) {
      if (e instanceof InterruptedException) Thread.currentThread().interrupt();
      destroy(p);
      String why = e instanceof TimeoutException ? "was not ready within " + timeout.toSeconds() + " s"
          : e instanceof ExecutionException ? e.getCause().getMessage() : "interrupted";
      throw new IOException("target process " + why + prefixed(tail), e);
    }
  }

  private static void readReady(InputStream in, CompletableFuture<ReadyLine> ready) {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        if (!ready.isDone() && line.startsWith(ReadyLine.PREFIX)) {
          try {
            ready.complete(ReadyLine.parse(line));
          } catch (IllegalArgumentException e) {
            ready.completeExceptionally(e);
          }
        }
      }
      ready.completeExceptionally(new IOException("exited before printing " + ReadyLine.PREFIX));
    } catch (IOException e) {
      ready.completeExceptionally(e);
    }
  }

  private static void keepTail(InputStream in, Deque<String> tail) {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        synchronized (tail) {
          tail.addLast(line);
          if (tail.size() > STDERR_LINES) tail.removeFirst();
        }
      }
    } catch (IOException ignored) {
      // the child is gone; its last lines are kept
    }
  }

  private static String prefixed(Deque<String> tail) {
    synchronized (tail) {
      if (tail.isEmpty()) return " (no stderr output)";
      StringBuilder sb = new StringBuilder(":");
      for (String l : tail) sb.append("\n[target] ").append(l);
      return sb.toString();
    }
  }

  public ReadyLine ready() {
    return ready;
  }

  /** True once the JVM is shutting down (Ctrl-C, SIGTERM) and the target is being stopped on purpose. */
  public boolean shuttingDown() {
    return shuttingDown;
  }

  public boolean alive() {
    return process.isAlive();
  }

  /** The child's last stderr lines, each prefixed with "[target] ". */
  public String stderrTail() {
    return prefixed(stderrTail);
  }

  private void kill() {
    destroy(process);
  }

  private static void destroy(Process p) {
    try {
      // closing stdin is serve's orderly stop; SIGTERM, then SIGKILL, if it does not go
      p.getOutputStream().close();
    } catch (IOException ignored) {
      // already closed
    }
    try {
      if (!p.waitFor(5, TimeUnit.SECONDS)) {
        p.destroy();
        if (!p.waitFor(3, TimeUnit.SECONDS)) p.destroyForcibly().waitFor(3, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    kill();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException ignored) {
      // the JVM is already shutting down and runs the hook itself
    }
  }
}
