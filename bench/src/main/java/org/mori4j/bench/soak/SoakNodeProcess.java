package org.mori4j.bench.soak;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * One incarnation of a soak node as the driver sees it: the child JVM ({@link SoakNodeMain}, behind
 * {@code ip netns exec} when the soak has namespaces), its stderr in a log file, the last {@code STATS},
 * {@code NOTIF} and {@code RES} lines it printed, and every other line passed to the driver. Commands go to
 * its stdin. {@link #close()} asks it to exit and kills it when it does not within a bound; a SIGKILL is the
 * chaos loop's crash. Child JVMs get Native Memory Tracking so {@link ResourceSample} can read it.
 */
final class SoakNodeProcess implements AutoCloseable {
  final int index;
  final int incarnation;
  private final Process process;
  private final OutputStream stdin;
  private final Path log;
  private volatile boolean ready;
  private volatile long engineIncarnation;
  private volatile Map<String, String> stats = Map.of();
  private volatile Map<String, String> notif = Map.of();
  private volatile Map<String, String> res;
  private volatile long downedAt;
  private volatile boolean reportedExit;
  private final List<String> replies = new ArrayList<>();

  private SoakNodeProcess(int index, int incarnation, Process process, Path log) {
    this.index = index;
    this.incarnation = incarnation;
    this.process = process;
    this.stdin = process.getOutputStream();
    this.log = log;
  }

  static SoakNodeProcess start(int index, int incarnation, List<String> prefix, String host, int port, long soakSeed, List<String> seeds,
                               Path logDir, BiConsumer<SoakNodeProcess, String> lines) throws IOException {
    String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
    List<String> cmd = new ArrayList<>(prefix);
    cmd.addAll(List.of(java, "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
        "-XX:NativeMemoryTracking=summary", "-Xmx256m", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
        SoakNodeMain.class.getName(), Integer.toString(index), host, Integer.toString(port), Long.toString(soakSeed)));
    cmd.addAll(seeds);
    Path log = logDir.resolve("node-" + index + "-" + incarnation + ".log");
    Process p = new ProcessBuilder(cmd).redirectError(log.toFile()).start();
    SoakNodeProcess n = new SoakNodeProcess(index, incarnation, p, log);
    Thread.ofPlatform().daemon().name("soak-node-" + index + "-" + incarnation).start(() -> n.read(lines));
    return n;
  }

  private void read(BiConsumer<SoakNodeProcess, String> lines) {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        String head = line.indexOf(' ') > 0 ? line.substring(0, line.indexOf(' ')) : line;
        switch (head) {
          case "SOAK-READY" -> {
            engineIncarnation = Long.parseLong(kv(line).get("inc"));
            ready = true;
          }
          case "STATS" -> stats = kv(line);
          case "NOTIF" -> notif = kv(line);
          case "RES" -> res = kv(line);
          case "DOWNED" -> downedAt = System.nanoTime();
          case "EXIT" -> reportedExit = true;
          default -> { }
        }
        if (head.equals("PAUSED") || head.equals("STOPPED") || head.equals("FLUSHED") || head.equals("RES")) {
          synchronized (replies) {
            replies.add(line);
            replies.notifyAll();
          }
        }
        lines.accept(this, line);
      }
    } catch (IOException e) {
      // the process is gone
    }
  }

  static Map<String, String> kv(String line) {
    Map<String, String> m = new HashMap<>();
    for (String w : line.split(" ")) {
      int eq = w.indexOf('=');
      if (eq > 0) m.put(w.substring(0, eq), w.substring(eq + 1));
    }
    return m;
  }

  /** Sends {@code command} and waits for the reply line starting with {@code reply}; null when none within {@code timeout}. */
  String ask(String command, String reply, Duration timeout) throws InterruptedException {
    synchronized (replies) {
      replies.clear();
    }
    if (!send(command)) return null;
    long end = System.nanoTime() + timeout.toNanos();
    synchronized (replies) {
      while (true) {
        for (String l : replies) if (l.startsWith(reply)) return l;
        long left = end - System.nanoTime();
        if (left <= 0 || !process.isAlive()) return null;
        replies.wait(Math.max(1, Math.min(200, TimeUnit.NANOSECONDS.toMillis(left))));
      }
    }
  }

  /** Writes one command line; false when the process no longer reads. */
  boolean send(String command) {
    synchronized (stdin) {
      try {
        stdin.write((command + "\n").getBytes(StandardCharsets.UTF_8));
        stdin.flush();
        return true;
      } catch (IOException e) {
        return false;
      }
    }
  }

  boolean awaitReady(Duration timeout) throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    while (!ready) {
      if (System.nanoTime() > end || !process.isAlive()) return false;
      Thread.sleep(100);
    }
    return true;
  }

  boolean alive() {
    return process.isAlive();
  }

  /** Its engine's incarnation (from its READY line; its pid where the descriptor states none), or 0 before it is ready. */
  long engineIncarnation() {
    return engineIncarnation;
  }

  long pid() {
    return process.pid();
  }

  Path log() {
    return log;
  }

  Map<String, String> stats() {
    return stats;
  }

  Map<String, String> notif() {
    return notif;
  }

  /** The last RES line's sample, or null. */
  ResourceSample resources() {
    Map<String, String> r = res;
    return r == null ? null : ResourceSample.parse(r);
  }

  /**
   * The node's threads, printed by the JDK's {@code jcmd PID Thread.print} into {@code node-I-INC-threads.txt} beside
   * its log: taken before a node that should have exited is killed, so that what held it shows afterwards. Returns
   * the file, or why there is none (no jcmd in this Java, or it failed within 20 s).
   */
  String threadDump() throws InterruptedException {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    if (!java.nio.file.Files.isExecutable(jcmd)) return "no thread dump: " + jcmd + " is not in this Java";
    Path out = log.resolveSibling(log.getFileName().toString().replace(".log", "-threads.txt"));
    try {
      Process j = new ProcessBuilder(jcmd.toString(), Long.toString(process.pid()), "Thread.print").redirectErrorStream(true)
          .redirectOutput(out.toFile()).start();
      if (!j.waitFor(20, TimeUnit.SECONDS)) {
        j.destroyForcibly();
        return "no thread dump: jcmd did not finish in 20 s";
      }
      return j.exitValue() == 0 ? "thread dump " + out : "no thread dump: jcmd exit " + j.exitValue() + " (" + out + ")";
    } catch (IOException e) {
      return "no thread dump: " + e.getMessage();
    }
  }

  /** SIGKILL: the crash of the chaos loop. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(10, TimeUnit.SECONDS);
  }

  /** SIGSTOP or SIGCONT through {@code kill(1)}: the whole JVM stops reading (and doing anything else). */
  void signal(String sig) throws IOException, InterruptedException {
    Process k = new ProcessBuilder("kill", "-" + sig, Long.toString(process.pid())).redirectErrorStream(true).start();
    k.getInputStream().readAllBytes();
    if (!k.waitFor(10, TimeUnit.SECONDS) || k.exitValue() != 0) throw new IOException("kill -" + sig + " " + process.pid() + " failed");
  }

  /** Waits for the exit; true when it exited within {@code timeout}. */
  boolean awaitExit(Duration timeout) throws InterruptedException {
    return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** When it said its member was downed ({@link System#nanoTime()}), or 0. */
  long downedAt() {
    return downedAt;
  }

  /** Whether it printed its final counters and {@code EXIT} line (what remains is stopping its ActorSystem). */
  boolean reportedExit() {
    return reportedExit;
  }

  int exitCode() {
    return process.exitValue();
  }

  /** Asks it to exit without waiting: SIGCONT in case it was stopped, EXIT, then stdin's end. */
  void requestExit() {
    if (!process.isAlive()) return;
    try {
      signal("CONT"); // a stall the chaos loop could not end (it failed or was interrupted) must not keep it from exiting
    } catch (IOException e) {
      // gone already
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      send("EXIT");
      stdin.close();
    } catch (IOException ignored) {
      // already closed
    }
  }

  /** {@link #requestExit()}, then SIGKILL when it has not exited within 60 s. */
  @Override
  public void close() {
    if (!process.isAlive()) return;
    requestExit();
    try {
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
