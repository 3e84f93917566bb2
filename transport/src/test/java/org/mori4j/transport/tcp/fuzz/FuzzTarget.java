package org.mori4j.transport.tcp.fuzz;

import static org.junit.jupiter.api.Assertions.*;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.tcp.LoopDrivers;
import org.mori4j.transport.tcp.RecordingOp;
import org.mori4j.transport.tcp.TcpBackend;
import org.mori4j.transport.tcp.TcpSettings;
import org.slf4j.LoggerFactory;

/**
 * A live TCP target for the raw-wire fuzzer, and the checks every case ends with.
 *
 * <p>The target's memory is one native slab: guard pages around four registrations ({@code open}, which an
 * authenticated fuzzer may legitimately write; {@code sealed}, which it only ever names with a wrong key,
 * address or bounds; {@code readOnly}, registered read-only; {@code served}, the well-behaved peer's) and an
 * unregistered stretch. Everything but {@code open} and {@code served} is filled from a seed and must be
 * byte-identical after every case. A second backend, the well-behaved peer, writes and reads back random
 * blocks of {@code served} on its own thread throughout, checking every byte; the case fails if it errs or
 * stops progressing. After a case the target's sockets (file descriptors of this JVM, which holds both ends)
 * and its direct memory must return to their baselines, and the target must have logged each reason it
 * closed connections for once (rate-limited), naming it.
 */
final class FuzzTarget implements AutoCloseable {
  static final long GUARD = 4096;
  static final long OPEN_SIZE = 4L << 20;
  static final long SEALED_SIZE = 64 * 1024;
  static final long RO_SIZE = 64 * 1024;
  static final long SERVED_SIZE = 1L << 20;
  static final long UNREGISTERED = 64 * 1024;
  static final long OPEN_ID = 11, SEALED_ID = 12, RO_ID = 13, SERVED_ID = 14;
  static final String FUZZER = "fuzzer";
  static final Duration PEER_TIMEOUT = Duration.ofMillis(1500);
  static final Duration HELLO_TIMEOUT = Duration.ofMillis(1500);

  final long seed;
  private final Arena arena = Arena.ofShared();
  private final MemorySegment slab;
  /** Slices of the slab that no attack may change, and their contents before it. */
  private final List<MemorySegment> canaries = new ArrayList<>();
  private final List<byte[]> canaryBytes = new ArrayList<>();
  final LocalRegion open, sealed, readOnly, served;
  final TcpBackend target;
  private final TcpBackend good;
  private final Object goodPeer;
  private final LocalRegion goodOut, goodBack;
  private final List<Thread> threads = new ArrayList<>();
  private final LoopDrivers drivers = new LoopDrivers();
  private volatile boolean stop;
  final AtomicLong goodRounds = new AtomicLong();
  final AtomicReference<String> goodError = new AtomicReference<>();
  private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
  private final Logger targetLog = (Logger) LoggerFactory.getLogger("org.mori4j.transport.tcp.TargetConnection");
  final long baselineFds;
  final long baselineDirect;

  FuzzTarget(long seed) throws Exception {
    this(seed, HELLO_TIMEOUT);
  }

  /** A target that closes connections without a valid hello after {@code helloTimeout} (its connect timeout). */
  FuzzTarget(long seed, Duration helloTimeout) throws Exception {
    this.seed = seed;
    SplittableRandom rnd = new SplittableRandom(seed);
    long openAt = GUARD, sealedAt = openAt + OPEN_SIZE + GUARD, roAt = sealedAt + SEALED_SIZE + GUARD;
    long unregAt = roAt + RO_SIZE + GUARD, servedAt = unregAt + UNREGISTERED + GUARD;
    long total = servedAt + SERVED_SIZE + GUARD;
    slab = arena.allocate(total, 4096);
    fill(slab, rnd);
    open = new LocalRegion(OPEN_ID, rnd.nextLong(), slab.asSlice(openAt, OPEN_SIZE), false, -1);
    sealed = new LocalRegion(SEALED_ID, rnd.nextLong(), slab.asSlice(sealedAt, SEALED_SIZE), false, -1);
    readOnly = new LocalRegion(RO_ID, rnd.nextLong(), slab.asSlice(roAt, RO_SIZE).asReadOnly(), false, -1);
    served = new LocalRegion(SERVED_ID, rnd.nextLong(), slab.asSlice(servedAt, SERVED_SIZE), false, -1);
    // everything outside open and served: the guards, sealed, read-only and the unregistered stretch
    canary(0, openAt);
    canary(openAt + OPEN_SIZE, servedAt - (openAt + OPEN_SIZE));
    canary(servedAt + SERVED_SIZE, GUARD);

    logged.start();
    targetLog.addAppender(logged);
    target = new TcpBackend("target", new TcpSettings("127.0.0.1", 0, 1, 1, 4L << 20, 0, PEER_TIMEOUT, helloTimeout,
        1024, false, 64 * 1024));
    target.start(BackendListener.NONE);
    drivers.drive(target);
    for (LocalRegion r : List.of(open, sealed, readOnly, served)) target.registerMemory(r);

    good = new TcpBackend("good", new TcpSettings("127.0.0.1", 0, 2, 1, 4L << 20, 0, Duration.ofSeconds(10),
        Duration.ofSeconds(5), 1024, false, 64 * 1024));
    good.start(BackendListener.NONE);
    drivers.drive(good);
    goodOut = new LocalRegion(1, 1, arena.allocate(SERVED_SIZE, 4096), false, -1);
    goodBack = new LocalRegion(2, 2, arena.allocate(SERVED_SIZE, 4096), false, -1);
    good.registerMemory(goodOut);
    good.registerMemory(goodBack);
    goodPeer = good.connect("target", target.acceptHandshake("good", good.handshakeRequest("target")));
    assertNull(goodRound(new SplittableRandom(seed), 10), "the well-behaved peer's first round trip");
    Thread t = new Thread(this::serveWell, "well-behaved-peer");
    t.setDaemon(true);
    t.start();
    threads.add(t);
    awaitGoodRounds(3, 10_000);
    baselineFds = settledFds();
    baselineDirect = settledDirect();
  }

  private void canary(long at, long len) {
    MemorySegment s = slab.asSlice(at, len);
    canaries.add(s);
    canaryBytes.add(s.toArray(ValueLayout.JAVA_BYTE));
  }

  private static void fill(MemorySegment s, SplittableRandom rnd) {
    for (long i = 0; i + 8 <= s.byteSize(); i += 8) s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, rnd.nextLong());
  }

  InetSocketAddress address() {
    return target.boundAddress();
  }

  /** A valid token for engine {@code key}, obtained as an initiator does: through the target's handshake. */
  long token(String key) {
    byte[] reply = target.acceptHandshake(key, key.getBytes(StandardCharsets.UTF_8));
    return ByteBuffer.wrap(reply).getLong(reply.length - 8);
  }

  /** A raw connection that has presented a valid hello for {@link #FUZZER}. */
  RawClient authenticated(long token) throws IOException {
    RawClient c = new RawClient(address(), 5000);
    RawClient.Response r = c.presentHello(FUZZER, token);
    assertNotNull(r, "the target closed a hello with a valid token");
    assertEquals(0, r.status(), "hello with a valid token refused: " + r.text());
    return c;
  }

  /** One write of a random block into {@code served} and its read back, checked; null if all went well, else why. */
  private String goodRound(SplittableRandom rnd, int timeoutSeconds) throws InterruptedException {
    long len = 1 + rnd.nextLong(64 * 1024);
    long off = rnd.nextLong(SERVED_SIZE - len + 1);
    MemorySegment out = goodOut.segment().asSlice(off, len);
    fill(out, rnd);
    for (byte kind : new byte[] {TransferOp.WRITE, TransferOp.READ}) {
      RecordingOp op = new RecordingOp();
      LocalRegion local = kind == TransferOp.WRITE ? goodOut : goodBack;
      op.initSingle(kind, local, off, goodPeer, SERVED_ID, served.accessKey(), served.address(), off, len, rnd.nextLong());
      good.submit(op);
      if (!op.done.await(timeoutSeconds, TimeUnit.SECONDS)) return (kind == TransferOp.WRITE ? "write" : "read") + " hung";
      if (op.error != null) return op.error + ": " + op.message;
    }
    long mismatch = out.mismatch(goodBack.segment().asSlice(off, len));
    return mismatch < 0 ? null : "read back differs at byte " + mismatch + " of [" + off + ", " + len + "]";
  }

  private void serveWell() {
    SplittableRandom rnd = new SplittableRandom(seed ^ 0x5eed);
    try {
      while (!stop) {
        String e = goodRound(rnd, 20);
        if (e != null) {
          goodError.compareAndSet(null, e);
          return;
        }
        goodRounds.incrementAndGet();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  void awaitGoodRounds(long more, long millis) throws InterruptedException {
    long until = goodRounds.get() + more;
    long deadline = System.nanoTime() + millis * 1_000_000;
    while (goodRounds.get() < until && goodError.get() == null && System.nanoTime() < deadline) Thread.sleep(5);
    assertNull(goodError.get(), "the well-behaved peer failed (seed " + seed + ")");
    assertTrue(goodRounds.get() >= until, "the well-behaved peer made no progress for " + millis + " ms (seed " + seed + ")");
  }

  static long fds() {
    try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
      return s.count();
    } catch (IOException e) {
      throw new IllegalStateException("cannot count /proc/self/fd", e);
    }
  }

  static long direct() {
    for (BufferPoolMXBean b : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class))
      if (b.getName().equals("direct")) return b.getMemoryUsed();
    throw new IllegalStateException("no direct buffer pool bean");
  }

  /** Direct memory in use once garbage buffers are freed (their cleaners run after a collection). */
  private static long settledDirect() throws InterruptedException {
    long last = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      System.gc();
      Thread.sleep(50);
      long now = direct();
      if (now >= last) return now;
      last = now;
    }
    return last;
  }

  private static long settledFds() throws InterruptedException {
    long a = fds();
    Thread.sleep(100);
    return Math.max(a, fds());
  }

  /** WARN lines the target logged so far. */
  List<String> warnings() {
    synchronized (logged) {
      return logged.list.stream().filter(e -> e.getLevel() == Level.WARN).map(ILoggingEvent::getFormattedMessage).toList();
    }
  }

  /**
   * The checks after every case: the target still serves the well-behaved peer (which never failed, and
   * completes further rounds now; each case also waits for its progress in the middle of the attack), no
   * canary byte moved, its sockets and direct memory are back to the baseline, and it logged each of {@code reasons} exactly once (the rate limit: the case's connections
   * closed for one reason yield one line).
   */
  void assertHealthy(String caseName, String... reasons) throws InterruptedException {
    String where = caseName + " (seed " + seed + ")";
    assertNull(goodError.get(), "the well-behaved peer failed during " + where);
    awaitGoodRounds(2, 10_000);
    for (int i = 0; i < canaries.size(); i++) {
      long at = canaries.get(i).mismatch(MemorySegment.ofArray(canaryBytes.get(i)));
      assertEquals(-1, at, "a byte outside the writable registrations moved during " + where + ": canary " + i + ", byte " + at);
    }
    long deadline = System.nanoTime() + 5_000_000_000L;
    long fds;
    while ((fds = fds()) > baselineFds && System.nanoTime() < deadline) Thread.sleep(20);
    assertTrue(fds <= baselineFds, "file descriptors " + fds + " after " + where + ", " + baselineFds + " before: connections leaked");
    long directNow = settledDirect();
    assertTrue(directNow <= baselineDirect + (16L << 20), "direct memory " + directNow + " B after " + where + ", "
        + baselineDirect + " B before: buffers leaked");
    List<String> w = warnings();
    for (String reason : reasons) {
      long lines = w.stream().filter(l -> l.contains(": " + reason + " (")).count();
      assertEquals(1, lines, "WARN lines naming '" + reason + "' after " + where + ": " + w);
    }
  }

  @Override
  public void close() throws InterruptedException {
    stop = true;
    // the backends close while their drivers still run (a loop that is not driven makes close wait for it)
    good.close();
    target.close();
    for (Thread t : threads) t.join(5000);
    drivers.close();
    targetLog.detachAppender(logged);
    arena.close();
  }
}
