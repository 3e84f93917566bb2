package org.mori4j.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.mori4j.natives.gpu.GpuRuntime;

/**
 * The coordinator's side of the {@code xgmi-pairs} engines: one {@link Link} per engine, to a thread of this JVM
 * ({@code --single-process}) or to a child JVM ({@code xgmi-pairs-engine}), all speaking
 * {@link XgmiPairsMemberLoop}'s protocol. It starts them, tells each the others' addresses, gives every row to all
 * of them, releases each iteration with one release time for all ({@link System#nanoTime} a margin ahead; an engine
 * that hears it late starts late, and the lateness stays in the iteration's time and is counted), and collects the
 * checks. Any {@code ERR} or a silent engine ends the run with the engine named.
 */
final class XgmiPairsEngines implements AutoCloseable {
  private static final long SETUP_TIMEOUT_MS = 120_000;
  private static final long ITERATION_TIMEOUT_MS = 60_000;
  /** A start this much after the release is late: the spin that waits for the release ends within a microsecond of it. */
  static final long LATE_NANOS = 20_000;
  private static final long MAX_MARGIN_NANOS = 10_000_000;

  /** One engine as the coordinator sees it. */
  interface Link extends AutoCloseable {
    void send(String line);

    /** The next reply (without the prefix), or an exception naming the engine when none comes in time. */
    String receive(long timeoutMs);

    @Override
    void close();
  }

  private final List<Link> links;
  private final List<String> addresses = new ArrayList<>();
  private final List<Integer> devices;
  private long marginNanos;
  private final long firstMarginNanos;
  private int lateStarts;
  private long latestStart;

  private XgmiPairsEngines(List<Link> links, List<Integer> devices, long marginNanos) {
    this.links = links;
    this.devices = devices;
    this.marginNanos = marginNanos;
    this.firstMarginNanos = marginNanos;
  }

  /**
   * Starts one engine per entry of {@code devices} (in threads of this JVM or in child JVMs), each with buffers of
   * {@code sourceBytes} and {@code destinationBytes}, and connects every engine to every other.
   */
  static XgmiPairsEngines start(List<Integer> devices, boolean singleProcess, GpuRuntime gpu, long sourceBytes, long destinationBytes, String host)
      throws IOException {
    List<Link> links = new ArrayList<>();
    XgmiPairsEngines all = new XgmiPairsEngines(links, devices, singleProcess ? 1_000_000 : 3_000_000);
    try {
      for (int i = 0; i < devices.size(); i++) links.add(singleProcess ? new ThreadLink(i, gpu) : ProcessLink.start(i));
      for (int i = 0; i < devices.size(); i++) links.get(i).send("START " + i + " " + devices.get(i) + " " + sourceBytes + " " + destinationBytes + " " + host);
      for (int i = 0; i < devices.size(); i++) all.addresses.add(all.expect(i, "READY", SETUP_TIMEOUT_MS));
      all.all("PEERS " + String.join(",", all.addresses), SETUP_TIMEOUT_MS);
      return all;
    } catch (IOException | RuntimeException e) {
      all.close();
      throw e;
    }
  }

  /** Gives every engine the row; returns when all have its pattern in their source and a zeroed destination. */
  void row(XgmiPairsLayout layout, long seed) {
    XgmiPairsLayout.Shape s = layout.shape();
    all("ROW " + layout.pattern().name() + " " + layout.engines() + " " + s.blockBytes() + " " + s.blocks() + " " + s.stride() + " " + seed,
        SETUP_TIMEOUT_MS);
  }

  /**
   * One iteration of all engines from one release time: {@code [release, end of engine 0, ..., end of engine N-1]}.
   * A late release (an engine started more than {@link #LATE_NANOS} after it) doubles the margin for the iterations
   * that follow, up to 10 ms.
   */
  long[] iterate() {
    long release = System.nanoTime() + marginNanos;
    for (Link l : links) l.send("GO " + release);
    long[] out = new long[links.size() + 1];
    out[0] = release;
    boolean late = false;
    for (int i = 0; i < links.size(); i++) {
      String[] w = expect(i, "DONE", ITERATION_TIMEOUT_MS).split(" ");
      out[i + 1] = Long.parseLong(w[0]);
      long l = Long.parseLong(w[1]);
      latestStart = Math.max(latestStart, l);
      if (l > LATE_NANOS) late = true;
    }
    if (late) {
      lateStarts++;
      marginNanos = Math.min(marginNanos * 2, MAX_MARGIN_NANOS);
    }
    return out;
  }

  /** Iterations so far in which some engine started after the release time. */
  int lateStarts() {
    return lateStarts;
  }

  /** The latest start after the release of the iterations since {@link #resetLateStarts}, in nanoseconds. */
  long latestStart() {
    return latestStart;
  }

  /** The margin the first iteration was released with: the raw copies use it too, so both rows leave the GPU the same gaps. */
  long firstMarginNanos() {
    return firstMarginNanos;
  }

  void resetLateStarts() {
    lateStarts = 0;
    latestStart = 0;
  }

  /** Every destination's check: the wrong bytes found, one line per engine that found some; empty when all match. */
  List<String> check() {
    for (Link l : links) l.send("CHECK");
    List<String> bad = new ArrayList<>();
    for (int i = 0; i < links.size(); i++) {
      String r = links.get(i).receive(SETUP_TIMEOUT_MS);
      if (r.startsWith("BAD ")) bad.add(r.substring(4));
      else if (!r.equals("OK")) throw failure(i, r);
    }
    return bad;
  }

  /** Each engine's path to every other engine's buffer, one line per engine. */
  List<String> paths() {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < links.size(); i++) {
      links.get(i).send("PATHS");
      out.add("engine " + i + " (GPU" + devices.get(i) + ") " + expect(i, "OK", SETUP_TIMEOUT_MS));
    }
    return out;
  }

  private void all(String command, long timeoutMs) {
    for (Link l : links) l.send(command);
    for (int i = 0; i < links.size(); i++) expect(i, "OK", timeoutMs);
  }

  private String expect(int i, String word, long timeoutMs) {
    String r = links.get(i).receive(timeoutMs);
    if (r.equals(word)) return "";
    if (r.startsWith(word + " ")) return r.substring(word.length() + 1);
    throw failure(i, r);
  }

  private IllegalStateException failure(int i, String reply) {
    return new IllegalStateException("engine " + i + " (GPU" + devices.get(i) + "): " + (reply.startsWith("ERR ") ? reply.substring(4) : "unexpected reply '" + reply + "'"));
  }

  @Override
  public void close() {
    for (Link l : links) {
      try {
        l.send("EXIT");
      } catch (RuntimeException ignored) {
        // an engine that is gone already
      }
    }
    for (Link l : links) l.close();
  }

  /** An engine on a thread of this JVM. */
  static final class ThreadLink implements Link {
    private final BlockingQueue<String> commands = new LinkedBlockingQueue<>();
    private final BlockingQueue<String> replies = new LinkedBlockingQueue<>();
    private final Thread thread;
    private final int index;

    ThreadLink(int index, GpuRuntime gpu) {
      this.index = index;
      thread = Thread.ofPlatform().name("xgmi-pairs-engine-" + index).start(() -> XgmiPairsMemberLoop.serve(() -> {
        try {
          return commands.take();
        } catch (InterruptedException e) {
          return null;
        }
      }, replies::add, gpu));
    }

    @Override
    public void send(String line) {
      commands.add(line);
    }

    @Override
    public String receive(long timeoutMs) {
      try {
        String r = replies.poll(timeoutMs, TimeUnit.MILLISECONDS);
        if (r == null) throw new IllegalStateException("engine " + index + " did not answer within " + timeoutMs / 1000 + " s");
        return r.substring(XgmiPairsMemberLoop.PREFIX.length());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted waiting for engine " + index);
      }
    }

    @Override
    public void close() {
      commands.add("EXIT");
      try {
        thread.join(30_000); // the engine closes and frees its buffers before the thread ends
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** An engine in a child JVM: {@code mori4j xgmi-pairs-engine}, same java and class path as this one. */
  static final class ProcessLink implements Link {
    private static final int STDERR_LINES = 30;
    private final int index;
    private final Process process;
    private final PrintWriter stdin;
    private final BlockingQueue<String> replies = new LinkedBlockingQueue<>();
    private final Deque<String> stderr = new ArrayDeque<>();

    private ProcessLink(int index, Process process) {
      this.index = index;
      this.process = process;
      this.stdin = new PrintWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8), true);
      Thread.ofPlatform().daemon().name("xgmi-pairs-stdout-" + index).start(() -> {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
          for (String line; (line = r.readLine()) != null; ) if (line.startsWith(XgmiPairsMemberLoop.PREFIX)) replies.add(line.substring(XgmiPairsMemberLoop.PREFIX.length()));
        } catch (IOException ignored) {
          // the child is gone; receive says so
        }
      });
      Thread.ofPlatform().daemon().name("xgmi-pairs-stderr-" + index).start(() -> {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
          for (String line; (line = r.readLine()) != null; ) {
            synchronized (stderr) {
              stderr.addLast(line);
              if (stderr.size() > STDERR_LINES) stderr.removeFirst();
            }
          }
        } catch (IOException ignored) {
          // the child is gone; its last lines are kept
        }
      });
    }

    static ProcessLink start(int index) throws IOException {
      return new ProcessLink(index, new ProcessBuilder(TargetProcess.command("xgmi-pairs-engine", List.of())).start());
    }

    @Override
    public void send(String line) {
      stdin.println(line);
    }

    @Override
    public String receive(long timeoutMs) {
      try {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000;
        while (true) {
          String r = replies.poll(100, TimeUnit.MILLISECONDS);
          if (r != null) return r;
          if (!process.isAlive() && replies.isEmpty()) throw new IllegalStateException("engine " + index + "'s JVM exited (" + process.exitValue() + ")" + tail());
          if (System.nanoTime() > deadline) throw new IllegalStateException("engine " + index + "'s JVM did not answer within " + timeoutMs / 1000 + " s" + tail());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted waiting for engine " + index);
      }
    }

    private String tail() {
      synchronized (stderr) {
        StringBuilder sb = new StringBuilder();
        for (String l : stderr) sb.append("\n[engine ").append(index).append("] ").append(l);
        return sb.toString();
      }
    }

    /** True once the child JVM has ended. */
    boolean exited() {
      return !process.isAlive();
    }

    @Override
    public void close() {
      stdin.close(); // the end of input closes the engine, then the JVM exits
      try {
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
          process.destroy();
          if (!process.waitFor(5, TimeUnit.SECONDS)) process.destroyForcibly();
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }
}
