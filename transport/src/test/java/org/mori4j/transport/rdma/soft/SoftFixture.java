package org.mori4j.transport.rdma.soft;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.natives.verbs.VerbsConstants.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.mori4j.natives.verbs.VerbsQueuePair.InitAttributes;
import org.mori4j.natives.verbs.VerbsQueuePair.RtrAttributes;
import org.mori4j.natives.verbs.VerbsQueuePair.RtsAttributes;
import org.mori4j.transport.rdma.verbs.CompletionQueue;
import org.mori4j.transport.rdma.verbs.Completions;
import org.mori4j.transport.rdma.verbs.MemoryRegion;
import org.mori4j.transport.rdma.verbs.ProtectionDomain;
import org.mori4j.transport.rdma.verbs.QueuePair;
import org.mori4j.transport.rdma.verbs.QueuePairSpec;
import org.mori4j.transport.rdma.verbs.VerbsDevice;

/**
 * Two software RDMA devices in this JVM over loopback, each with a PD and one CQ, and helpers to bring queue
 * pairs up exactly as a verbs application does (RTR toward the peer's GID and QP number) and to collect
 * completions. Everything it creates is closed in reverse order by {@link #close()}.
 */
final class SoftFixture implements AutoCloseable {
  static final int ALL = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  /** Short ACK timeout (4.096 us x 2^10 = 4 ms) and 3 retries, RNR retry forever: fast failure tests. */
  static final RtsAttributes FAST = new RtsAttributes(0, 10, 3, 7, 16);
  /** What MORI and perftest use: ACK timeout 14 (67 ms), 7 retries, RNR retry forever. */
  static final RtsAttributes NORMAL = RtsAttributes.defaults(0);

  final SoftwareVerbsProvider provider;
  final VerbsDevice a;
  final VerbsDevice b;
  final ProtectionDomain pdA;
  final ProtectionDomain pdB;
  final CompletionQueue cqA;
  final CompletionQueue cqB;
  final Arena arena = Arena.ofShared();
  private final Deque<AutoCloseable> owned = new ArrayDeque<>();
  private int nextPsn = 100;

  /** Default settings (a 2 s floor under the retry budget): for tests that move data. */
  SoftFixture() {
    this(new SoftwareVerbsProvider(), 4096);
  }

  /** No floor under the retry budget, so that the QP's own timeout and retry count decide: for failure tests. */
  static SoftFixture nicTimers(int cqEntries) {
    return new SoftFixture(new SoftwareVerbsProvider("127.0.0.1", null, SoftSettings.defaults().withMinimumRetryBudget(Duration.ZERO)),
        cqEntries);
  }

  SoftFixture(SoftwareVerbsProvider provider, int cqEntries) {
    this.provider = provider;
    a = own(provider.open("soft0"));
    b = own(provider.open("soft0"));
    pdA = own(a.allocateProtectionDomain());
    pdB = own(b.allocateProtectionDomain());
    cqA = own(a.createCompletionQueue(cqEntries, null));
    cqB = own(b.createCompletionQueue(cqEntries, null));
  }

  <T extends AutoCloseable> T own(T resource) {
    owned.push(resource);
    return resource;
  }

  /** Closes {@code resource} now instead of at the end. */
  void closeNow(AutoCloseable resource) throws Exception {
    owned.remove(resource);
    resource.close();
  }

  MemorySegment memory(long bytes) {
    return arena.allocate(bytes, 64);
  }

  MemoryRegion register(ProtectionDomain pd, MemorySegment memory, int access) {
    return own(pd.registerMemory(memory, access));
  }

  QueuePair queuePair(ProtectionDomain pd, CompletionQueue cq, int maxSend, int maxReceive) {
    return own(pd.createQueuePair(new QueuePairSpec(cq, cq, maxSend, maxReceive)));
  }

  /** A connected pair: {@code [0]} on device a, {@code [1]} on device b, both in RTS. */
  QueuePair[] connected(int maxSend, int maxReceive, RtsAttributes rts) {
    QueuePair qa = queuePair(pdA, cqA, maxSend, maxReceive);
    QueuePair qb = queuePair(pdB, cqB, maxSend, maxReceive);
    connect(qa, a, qb, b, ALL, rts);
    return new QueuePair[] {qa, qb};
  }

  /** Brings {@code x} (on {@code dx}) and {@code y} (on {@code dy}) to RTS toward each other. */
  void connect(QueuePair x, VerbsDevice dx, QueuePair y, VerbsDevice dy, int access, RtsAttributes rts) {
    int px = nextPsn++, py = nextPsn++;
    x.toInit(new InitAttributes(1, 0, access));
    y.toInit(new InitAttributes(1, 0, access));
    x.toReadyToReceive(rtr(y.qpNumber(), dy.queryGid(1, 0), py));
    y.toReadyToReceive(rtr(x.qpNumber(), dx.queryGid(1, 0), px));
    x.toReadyToSend(new RtsAttributes(px, rts.timeout(), rts.retryCount(), rts.rnrRetry(), rts.maxRdAtomic()));
    y.toReadyToSend(new RtsAttributes(py, rts.timeout(), rts.retryCount(), rts.rnrRetry(), rts.maxRdAtomic()));
  }

  static RtrAttributes rtr(int destQpn, byte[] gid, int receivePsn) {
    return new RtrAttributes(IBV_MTU_4096, destQpn, receivePsn, 16, 12, 1, 0, 0, gid, 0, 64, 0, 0);
  }

  /** Polls {@code cq} until {@code n} completions arrived (fails after 10 s or on a surplus). */
  static List<Wc> poll(CompletionQueue cq, int n) {
    return poll(cq, n, Duration.ofSeconds(10));
  }

  static List<Wc> poll(CompletionQueue cq, int n, Duration timeout) {
    List<Wc> got = new ArrayList<>();
    Completions c = new Completions(64);
    long deadline = System.nanoTime() + timeout.toNanos();
    while (got.size() < n) {
      int k = cq.poll(c);
      for (int i = 0; i < k; i++) got.add(Wc.of(c, i));
      if (k == 0) {
        if (System.nanoTime() > deadline) fail("only " + got.size() + " of " + n + " completions within " + timeout + ": " + got);
        Thread.onSpinWait();
      }
    }
    assertEquals(n, got.size(), "more completions than expected: " + got);
    return got;
  }

  /** Asserts that {@code cq} stays empty for {@code millis}. */
  static void assertQuiet(CompletionQueue cq, long millis) throws InterruptedException {
    Completions c = new Completions(16);
    long end = System.nanoTime() + millis * 1_000_000;
    while (System.nanoTime() < end) {
      int k = cq.poll(c);
      if (k > 0) fail("unexpected completion " + Wc.of(c, 0));
      Thread.sleep(2);
    }
  }

  static void fill(MemorySegment m, long seed) {
    java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
    long n = m.byteSize();
    long i = 0;
    for (; i + 8 <= n; i += 8) m.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
    for (; i < n; i++) m.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) r.nextInt());
  }

  static void assertSameBytes(MemorySegment expected, MemorySegment actual) {
    assertEquals(expected.byteSize(), actual.byteSize());
    long at = expected.mismatch(actual);
    assertEquals(-1, at, "bytes differ at offset " + at);
  }

  @Override
  public void close() {
    RuntimeException first = null;
    while (!owned.isEmpty()) {
      try {
        owned.pop().close();
      } catch (Exception e) {
        if (first == null) first = new RuntimeException("closing the fixture", e);
      }
    }
    arena.close();
    if (first != null) throw first;
  }

  /** One work completion, copied out of {@link Completions}. */
  record Wc(long wrId, int status, int opcode, int byteLength, int immediate, int qpNumber, int flags) {
    static Wc of(Completions c, int i) {
      return new Wc(c.wrId(i), c.status(i), c.opcode(i), c.byteLength(i), c.immediate(i), c.qpNumber(i), c.wcFlags(i));
    }

    @Override
    public String toString() {
      return "wc{id " + wrId + ", " + Completions.statusName(status) + ", op " + opcode + ", len " + byteLength + "}";
    }
  }
}
