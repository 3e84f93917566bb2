package org.mori4j.shmem;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A {@link ShmemPeProcessMain} child JVM and the {@code "@@ "} lines it answers, collected by a reader thread. */
final class ChildPe implements AutoCloseable {
  final Process process;
  private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
  final List<String> all = new ArrayList<>();

  ChildPe(String mode, int rank, int n, byte[] id, long heap, String memoryDir) throws IOException {
    String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
    List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx512m", "-cp",
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")), ShmemPeProcessMain.class.getName(), mode,
        String.valueOf(rank), String.valueOf(n), HexFormat.of().formatHex(id), String.valueOf(heap)));
    if (memoryDir != null) cmd.add(memoryDir);
    process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    Thread.ofPlatform().daemon().name("child-pe-" + rank).start(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        for (String l; (l = in.readLine()) != null; ) {
          if (l.startsWith("@@ ")) lines.add(l.substring(3));
          else System.out.println("[child " + rank + "] " + l);
        }
      } catch (IOException ignored) {
        // the child is gone
      }
      lines.add("EXIT");
    });
  }

  /** The next answer starting with {@code prefix} (earlier other answers are kept in {@link #all}); fails after {@code seconds}. */
  String await(String prefix, int seconds) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (true) {
      String l = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      if (l == null) throw new AssertionError("child PE did not answer " + prefix + " within " + seconds + " s; answers so far " + all);
      all.add(l);
      if (l.startsWith(prefix)) return l;
      if (l.equals("EXIT")) throw new AssertionError("child PE exited before answering " + prefix + "; answers " + all);
    }
  }

  @Override
  public void close() throws InterruptedException {
    if (!process.waitFor(30, TimeUnit.SECONDS)) process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
  }
}
