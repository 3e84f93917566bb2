package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The child JVMs of the peer-kill tests ({@link TargetProcessMain} on loopback): starting one, reading its output, and
 * watching its process state through /proc, split out of {@link PeerKillTest}.
 */
final class ChildTargets {
  private ChildTargets() {}

  static Process startChild(String key, long size) throws Exception {
    String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
    List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx256m"));
    cmd.addAll(TestBackends.childJvmFlags());
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), TargetProcessMain.class.getName(), key, String.valueOf(size)));
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.redirectErrorStream(true);
    return pb.start();
  }

  /** Reads the child's output until READY; afterwards keeps draining it (for the last lines on failure). */
  static String[] awaitReady(Process child, ConcurrentLinkedQueue<String> log) throws Exception {
    BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    AtomicReference<String> ready = new AtomicReference<>();
    CountDownLatch seen = new CountDownLatch(1);
    Thread drain = new Thread(() -> {
      try {
        String line;
        while ((line = out.readLine()) != null) {
          if (log.size() < 500) log.add(line);
          if (line.startsWith("READY ") && ready.get() == null) {
            ready.set(line);
            seen.countDown();
          }
        }
      } catch (java.io.IOException ignored) {
        // the child is gone
      } finally {
        seen.countDown();
      }
    }, "child-output");
    drain.setDaemon(true);
    drain.start();
    if (!seen.await(60, TimeUnit.SECONDS) || ready.get() == null)
      fail("child target did not print READY within 60 s; its output:\n" + String.join("\n", log));
    return ready.get().split(" ");
  }

  /**
   * Waits (at most 5 s) until every thread of process {@code pid} is stopped: state {@code T} in each
   * /proc/pid/task/tid/stat. The state is the field after the command name, which is in parentheses and may hold
   * spaces or parentheses itself, hence the last ')'.
   */
  static void awaitStopped(long pid) throws InterruptedException {
    java.nio.file.Path tasks = java.nio.file.Path.of("/proc/" + pid + "/task");
    long end = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    String running = "no thread read";
    for (int i = 0; i < 5_000 && System.nanoTime() < end; i++) {
      running = null;
      try (var dirs = java.nio.file.Files.list(tasks)) {
        for (java.nio.file.Path t : (Iterable<java.nio.file.Path>) dirs::iterator) {
          String stat;
          try {
            stat = java.nio.file.Files.readString(t.resolve("stat"));
          } catch (java.io.IOException gone) {
            continue; // a thread that exited meanwhile
          }
          char state = stat.charAt(stat.lastIndexOf(')') + 2);
          if (state != 'T') {
            running = "thread " + t.getFileName() + " in state " + state;
            break;
          }
        }
      } catch (java.io.IOException e) {
        running = e.toString();
      }
      if (running == null) return;
      Thread.sleep(1);
    }
    fail("process " + pid + " did not stop within 5 s of SIGSTOP: " + running);
  }

  /** The State line of /proc/pid/status (T: stopped), for a failure's message. */
  static String childState(long pid) {
    try {
      return java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/" + pid + "/status")).stream()
          .filter(l -> l.startsWith("State:")).findFirst().orElse("no State line");
    } catch (java.io.IOException e) {
      return e.toString();
    }
  }

  /** The first line of the child's output that starts with {@code prefix}, waiting at most {@code limit}. */
  static String awaitLine(ConcurrentLinkedQueue<String> log, String prefix, Duration limit) throws InterruptedException {
    long end = System.nanoTime() + limit.toNanos();
    while (System.nanoTime() < end) {
      for (String line : log) if (line.startsWith(prefix)) return line;
      Thread.sleep(10);
    }
    return fail("no line starting with '" + prefix + "' from the child within " + limit + "; its output:\n" + String.join("\n", log));
  }
}
