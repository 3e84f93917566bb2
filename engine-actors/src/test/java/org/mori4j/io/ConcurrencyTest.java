package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.io.Bytes.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Eight threads share one engine and move bytes at once, each in its own slice of the local and remote
 * buffers, with every kind of transfer; every transfer is checked, and at the end both buffers must equal
 * the shadow copies the threads kept, so no thread's bytes leaked into another's slice.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConcurrencyTest {
  private static final int THREADS = 8;
  private static final long SLICE = 2L << 20;
  private EnginePair p;
  private final Arena arena = Arena.ofShared();
  private MemorySegment shadowLocal, shadowRemote;

  @BeforeAll
  void start() {
    p = new EnginePair(THREADS * SLICE);
    shadowLocal = arena.allocate(THREADS * SLICE, 8);
    shadowRemote = arena.allocate(THREADS * SLICE, 8);
  }

  @AfterAll
  void stop() {
    if (p != null) p.close();
    arena.close();
  }

  /** One worker: owns [base, base + SLICE) on both sides. */
  private final class Worker {
    final int id;
    final long base;
    final SplittableRandom rnd;
    final IoEngineSession session;
    long seed;
    int transfers;

    Worker(int id) {
      this.id = id;
      this.base = id * SLICE;
      this.rnd = new SplittableRandom(1000 + id);
      this.session = p.initiator.createSession(p.local, p.remote).orElseThrow();
      this.seed = 1_000_000L * (id + 1);
    }

    long size() {
      return switch (rnd.nextInt(4)) {
        case 0 -> 1 + rnd.nextInt(64);
        case 1 -> 1 + rnd.nextInt(8192);
        case 2 -> 1 + rnd.nextInt(256 * 1024);
        default -> 1 + rnd.nextInt((int) (SLICE / 2));
      };
    }

    long offset(long size) {
      return base + rnd.nextLong(SLICE - size + 1);
    }

    void freshLocal(long off, long len) {
      long s = seed++;
      randomize(p.localBuf, off, len, s);
      randomize(shadowLocal, off, len, s);
    }

    void freshRemote(long off, long len) {
      long s = seed++;
      randomize(p.remoteBuf, off, len, s);
      randomize(shadowRemote, off, len, s);
    }

    void run(int iterations) {
      for (int it = 0; it < iterations; it++) {
        String what = "thread " + id + " iteration " + it;
        switch (rnd.nextInt(6)) {
          case 0, 1 -> { // write, through the engine or the session
            long size = size(), lo = offset(size), ro = offset(size);
            freshLocal(lo, size);
            boolean sess = rnd.nextBoolean();
            long uid = p.initiator.allocateTransferUid();
            assertSucceeds(sess ? session.write(lo, ro, size, uid) : p.initiator.write(p.local, lo, p.remote, ro, size, uid), what);
            MemorySegment.copy(shadowLocal, lo, shadowRemote, ro, size);
            assertRangeEquals(p.localBuf, lo, p.remoteBuf, ro, size, what + " write");
          }
          case 2, 3 -> { // read
            long size = size(), lo = offset(size), ro = offset(size);
            freshRemote(ro, size);
            boolean sess = rnd.nextBoolean();
            long uid = p.initiator.allocateTransferUid();
            assertSucceeds(sess ? session.read(lo, ro, size, uid) : p.initiator.read(p.local, lo, p.remote, ro, size, uid), what);
            MemorySegment.copy(shadowRemote, ro, shadowLocal, lo, size);
            assertRangeEquals(p.localBuf, lo, p.remoteBuf, ro, size, what + " read");
          }
          case 4 -> { // batch of 32 scattered blocks inside the slice, write or read
            int n = 32;
            long slot = SLICE / n;
            long[] lo = new long[n], ro = new long[n], sz = new long[n];
            for (int i = 0; i < n; i++) {
              sz[i] = 1 + rnd.nextLong(slot - 1);
              lo[i] = base + i * slot + rnd.nextLong(slot - sz[i]);
              ro[i] = base + (n - 1 - i) * slot + rnd.nextLong(slot - sz[i]);
            }
            boolean write = rnd.nextBoolean();
            for (int i = 0; i < n; i++) if (write) freshLocal(lo[i], sz[i]); else freshRemote(ro[i], sz[i]);
            TransferStatus st = rnd.nextBoolean()
                ? (write ? session.batchWrite(lo, ro, sz, 7) : session.batchRead(lo, ro, sz, 7))
                : (write ? p.initiator.batchWrite(List.of(p.local), List.of(lo), List.of(p.remote), List.of(ro), List.of(sz), new long[] {7})
                    : p.initiator.batchRead(List.of(p.local), List.of(lo), List.of(p.remote), List.of(ro), List.of(sz), new long[] {7})).get(0);
            assertSucceeds(st, what + " batch");
            for (int i = 0; i < n; i++) {
              if (write) MemorySegment.copy(shadowLocal, lo[i], shadowRemote, ro[i], sz[i]);
              else MemorySegment.copy(shadowRemote, ro[i], shadowLocal, lo[i], sz[i]);
              assertRangeEquals(p.localBuf, lo[i], p.remoteBuf, ro[i], sz[i], what + " batch block " + i);
            }
          }
          default -> { // 16 writes in flight at once, then wait for all
            int n = 16;
            long slot = SLICE / n;
            List<TransferStatus> st = new ArrayList<>();
            long[] lo = new long[n], ro = new long[n], sz = new long[n];
            for (int i = 0; i < n; i++) {
              sz[i] = 1 + rnd.nextLong(slot);
              lo[i] = base + i * slot;
              ro[i] = base + (n - 1 - i) * slot + rnd.nextLong(slot - sz[i] + 1);
              freshLocal(lo[i], sz[i]);
              st.add(p.initiator.write(p.local, lo[i], p.remote, ro[i], sz[i], p.initiator.allocateTransferUid()));
            }
            assertEquals(StatusCode.SUCCESS, p.initiator.waitAll(st, Duration.ofSeconds(60)), what + ": " + st);
            for (int i = 0; i < n; i++) {
              MemorySegment.copy(shadowLocal, lo[i], shadowRemote, ro[i], sz[i]);
              assertRangeEquals(p.localBuf, lo[i], p.remoteBuf, ro[i], sz[i], what + " pipelined write " + i);
            }
          }
        }
        transfers++;
      }
    }
  }

  @Test
  void eightThreadsMovingBytesAtOnceAllLandIntact() throws Exception {
    randomize(p.localBuf, 1);
    randomize(p.remoteBuf, 2);
    shadowLocal.copyFrom(p.localBuf);
    shadowRemote.copyFrom(p.remoteBuf);
    ExecutorService pool = Executors.newFixedThreadPool(THREADS + 1);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Integer>> results = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        int id = t;
        results.add(pool.submit(() -> {
          Worker w = new Worker(id);
          go.await();
          w.run(120);
          return w.transfers;
        }));
      }
      // a ninth thread registers, uses and deregisters memory while the others run: route changes must not
      // disturb transfers in flight
      Future<Integer> churn = pool.submit(() -> {
        go.await();
        int n = 0;
        for (int i = 0; i < 25; i++) {
          MemorySegment seg = arena.allocate(4096, 8);
          MemoryDesc d = p.target.registerMemory(seg);
          assertSucceeds(p.initiator.write(p.local, 0, d, 0, 4096, 5), "churn write " + i);
          p.target.deregisterMemory(d);
          n++;
        }
        return n;
      });
      go.countDown();
      int total = 0;
      for (Future<Integer> f : results) total += f.get(120, TimeUnit.SECONDS);
      assertEquals(25, churn.get(120, TimeUnit.SECONDS));
      assertEquals(THREADS * 120, total);
    } finally {
      pool.shutdownNow();
      assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
    }
    assertSameBytes(shadowRemote, p.remoteBuf, "remote buffer against the threads' shadows");
    assertSameBytes(shadowLocal, p.localBuf, "local buffer against the threads' shadows");
  }

  @Test
  void concurrentUidAllocationNeverRepeats() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try {
      List<Future<long[]>> fs = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) fs.add(pool.submit(() -> {
        long[] u = new long[20_000];
        for (int i = 0; i < u.length; i++) u[i] = p.initiator.allocateTransferUid();
        return u;
      }));
      java.util.HashSet<Long> seen = new java.util.HashSet<>();
      for (Future<long[]> f : fs) for (long u : f.get(60, TimeUnit.SECONDS)) assertTrue(seen.add(u), "uid " + u + " handed out twice");
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void manyThreadsAwaitingOneTransferAreAllReleased() throws Exception {
    TransferStatus s = p.initiator.write(p.local, 0, p.remote, 0, 8L << 20, 1);
    int waiters = 16;
    ExecutorService pool = Executors.newFixedThreadPool(waiters);
    try {
      List<Future<Boolean>> fs = new ArrayList<>();
      for (int i = 0; i < waiters; i++) {
        boolean timed = i % 2 == 0;
        fs.add(pool.submit(() -> timed ? s.await(Duration.ofSeconds(30)) : s.await().succeeded()));
      }
      for (Future<Boolean> f : fs) assertTrue(f.get(30, TimeUnit.SECONDS), "a waiter was not released with success");
      assertTrue(s.succeeded(), s.toString());
      assertTrue(s.completion().toCompletableFuture().isDone());
    } finally {
      pool.shutdownNow();
    }
  }
}
