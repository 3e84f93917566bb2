package org.mori4j.bench.kv;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * kv-bench's line protocol with its target process ({@link KvBenchTarget}): control answers ({@code READY},
 * {@code REGISTERED}, {@code SUM}, {@code FILLED}) in order, and the receiver's "layers landed" news
 * ({@code LANDED <request> <from> <to> <nanoTime> <lastWriteNanoTime>}) counted per request, and when the
 * receiver's backend recorded a given write ({@code WROTE <uid>}, answered {@code WROTE <nanoTime>}). Waiters block rather than spin: on a
 * 2-core host a spinning waiter takes a core from the I/O threads it is timing.
 */
final class KvBenchLink implements KvBenchReceiver {
  private final PrintWriter out;
  private final BlockingQueue<String> control = new LinkedBlockingQueue<>();
  private final Landings landings = new Landings();

  KvBenchLink(Process p) {
    this.out = new PrintWriter(p.getOutputStream(), true, StandardCharsets.UTF_8);
    Thread t = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        for (String l; (l = r.readLine()) != null; ) {
          if (l.startsWith("LANDED ")) {
            String[] f = l.split(" ");
            landings.landed(f[1], Integer.parseInt(f[2]), Integer.parseInt(f[3]), Long.parseLong(f[4]), f.length > 5 ? Long.parseLong(f[5]) : 0);
          } else if (l.startsWith("READY ") || l.equals("REGISTERED") || l.equals("FILLED") || l.startsWith("SUM ") || l.startsWith("WROTE ")) control.add(l);
          // anything else is the target's logging, when its logback configuration writes to stdout
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

  @Override
  public long awaitLanded(String request, int layers, Duration timeout) throws InterruptedException {
    return landings.await(request, layers, timeout);
  }

  @Override
  public long layerLandedAt(String request, int layer) {
    return landings.layerAt(request, layer);
  }

  @Override
  public long layerWriteLandedAt(String request, int layer) {
    return landings.wireAt(request, layer);
  }

  @Override
  public long writeLandedAt(long uid) throws InterruptedException {
    send("WROTE " + uid);
    return Long.parseLong(next("WROTE", 60).split(" ")[1]);
  }

  @Override
  public void forget(String request) {
    landings.forget(request);
    send("FORGET " + request);
  }

  @Override
  public void fill(long seed, int[] blocks) throws InterruptedException {
    send("FILL " + seed + " " + KvBenchCheck.csv(blocks));
    next("FILLED", 300);
  }

  @Override
  public long sum(int[] blocks) throws InterruptedException {
    send("SUM " + KvBenchCheck.csv(blocks));
    return Long.parseLong(next("SUM", 300).split(" ")[1]);
  }

  @Override
  public void close() {
    out.close();
  }
}
