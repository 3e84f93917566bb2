package org.mori4j.bench.kv;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * kv-bench's line protocol with its target process: control answers ({@code READY}, {@code REGISTERED},
 * {@code SUM}, {@code FILLED}) in order, and the receiver's "layers landed" news ({@code LANDED <request> <from>
 * <to> <nanoTime>}) counted per request. Waiters block on a monitor rather than spin: on a 2-core host a spinning
 * waiter takes a core from the I/O threads it is timing.
 */
final class KvBenchLink implements AutoCloseable {
  private final PrintWriter out;
  private final BlockingQueue<String> control = new LinkedBlockingQueue<>();
  /** Per request: [layers landed, latest landing nanoTime]. Guarded by itself. */
  private final Map<String, long[]> landed = new HashMap<>();

  KvBenchLink(Process p) {
    this.out = new PrintWriter(p.getOutputStream(), true, StandardCharsets.UTF_8);
    Thread t = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        for (String l; (l = r.readLine()) != null; ) {
          if (l.startsWith("LANDED ")) {
            String[] f = l.split(" ");
            synchronized (landed) {
              long[] a = landed.computeIfAbsent(f[1], k -> new long[2]);
              a[0] += Integer.parseInt(f[3]) - Integer.parseInt(f[2]);
              a[1] = Math.max(a[1], Long.parseLong(f[4]));
              landed.notifyAll();
            }
          } else if (!l.isBlank()) control.add(l);
        }
      } catch (java.io.IOException e) {
        // the target ended
      } finally {
        control.add("EOF the kv-bench target's output ended");
      }
    }, "kv-bench-target-reader");
    t.setDaemon(true);
    t.start();
  }

  /** The next control line, which must start with {@code prefix}. */
  String next(String prefix, int seconds) throws InterruptedException {
    String l = control.poll(seconds, TimeUnit.SECONDS);
    if (l == null || !l.startsWith(prefix)) throw new IllegalStateException("kv-bench target: expected " + prefix + " within " + seconds + " s, got " + l);
    return l;
  }

  void send(String line) {
    out.println(line);
  }

  /** Waits until {@code layers} layers of {@code request} landed; the latest landing time, or -1 on timeout. */
  long awaitLanded(String request, int layers, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (landed) {
      while (true) {
        long[] a = landed.get(request);
        if (a != null && a[0] >= layers) return a[1];
        long left = deadline - System.nanoTime();
        if (left <= 0) return -1;
        TimeUnit.NANOSECONDS.timedWait(landed, left);
      }
    }
  }

  /** Drops what both sides know of {@code request}. */
  void forget(String request) {
    synchronized (landed) {
      landed.remove(request);
    }
    send("FORGET " + request);
  }

  @Override
  public void close() {
    out.close();
  }
}
