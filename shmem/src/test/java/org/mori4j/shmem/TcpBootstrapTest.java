package org.mori4j.shmem;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The unique-id bootstrap on loopback: steps gather every rank's bytes in rank order; a PE that goes away
 * fails the others' waits at once, naming it; a PE that never comes fails them after the timeout; strangers
 * are refused.
 */
class TcpBootstrapTest {
  /** Each rank blocks in join or a step: one thread each (the common pool has a single thread on a 2-core machine). */
  private static final java.util.concurrent.ExecutorService THREADS =
      java.util.concurrent.Executors.newCachedThreadPool(r -> Thread.ofPlatform().daemon().unstarted(r));

  private static UniqueId freshId() throws Exception {
    ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    int port = s.getLocalPort();
    s.close();
    return UniqueId.fresh(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
  }

  private static List<TcpBootstrap> group(UniqueId id, int n, Duration timeout) throws Exception {
    List<CompletableFuture<TcpBootstrap>> joining = new ArrayList<>();
    // the others first: they must wait for rank 0 to come up
    for (int r = n - 1; r >= 0; r--) {
      int rank = r;
      joining.add(0, CompletableFuture.supplyAsync(() -> TcpBootstrap.join(id, rank, n, timeout, null), THREADS));
    }
    List<TcpBootstrap> out = new ArrayList<>();
    for (var f : joining) out.add(f.get(30, TimeUnit.SECONDS));
    return out;
  }

  @Test
  void aStepGathersEveryRanksBytesInRankOrder() throws Exception {
    List<TcpBootstrap> g = group(freshId(), 4, Duration.ofSeconds(20));
    try {
      for (int step = 0; step < 30; step++) {
        int s = step;
        List<CompletableFuture<byte[][]>> all = new ArrayList<>();
        for (TcpBootstrap b : g) all.add(CompletableFuture.supplyAsync(() -> b.allGather(new byte[] {(byte) b.rank(), (byte) s}, false), THREADS));
        for (var f : all) assertArrayEquals(new byte[][] {{0, (byte) s}, {1, (byte) s}, {2, (byte) s}, {3, (byte) s}}, f.get(10, TimeUnit.SECONDS));
      }
    } finally {
      g.forEach(TcpBootstrap::close);
    }
  }

  /**
   * The race seen on a GPU machine: two ranks of one process, the other rank took the reserved socket and had not
   * closed it yet when rank 0 bound the id's address itself. Rank 0 now waits for the address instead of failing.
   */
  @Test
  void rankZeroWaitsForTheIdsAddressWhileAnotherSocketStillHoldsIt() throws Exception {
    ServerSocket holder = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    UniqueId id = UniqueId.fresh(new InetSocketAddress(InetAddress.getLoopbackAddress(), holder.getLocalPort()));
    CompletableFuture<TcpBootstrap> zero = CompletableFuture.supplyAsync(() -> TcpBootstrap.join(id, 0, 2, Duration.ofSeconds(10), null), THREADS);
    Thread.sleep(300);
    holder.close();
    TcpBootstrap one = TcpBootstrap.join(id, 1, 2, Duration.ofSeconds(10), null);
    try (TcpBootstrap z = zero.get(15, TimeUnit.SECONDS); one) {
      assertEquals(0, z.rank());
      assertEquals(1, one.rank());
    }
  }

  @Test
  void aPeThatGoesAwayFailsTheOthersWaitsNamingIt() throws Exception {
    List<TcpBootstrap> g = group(freshId(), 3, Duration.ofSeconds(60));
    try {
      long start = System.nanoTime();
      var w0 = CompletableFuture.supplyAsync(() -> g.get(0).allGather(new byte[1], false), THREADS);
      var w1 = CompletableFuture.supplyAsync(() -> g.get(1).allGather(new byte[1], false), THREADS);
      Thread.sleep(200);
      g.get(2).close(); // as if its process died: the sockets close
      for (var w : List.of(w0, w1)) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> w.get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof ShmemException && e.getCause().getMessage().contains("PE 2"), e.getCause().toString());
      }
      assertTrue(System.nanoTime() - start < 5_000_000_000L, "failed at once, not after the 60 s timeout");
      // and every later call fails at once with the same reason
      ShmemException later = assertThrows(ShmemException.class, () -> g.get(1).allGather(new byte[1], false));
      assertTrue(later.getMessage().contains("PE 2"), later.getMessage());
    } finally {
      g.forEach(TcpBootstrap::close);
    }
  }

  @Test
  void losingRankZeroFailsEveryoneElse() throws Exception {
    List<TcpBootstrap> g = group(freshId(), 3, Duration.ofSeconds(60));
    try {
      var w1 = CompletableFuture.supplyAsync(() -> g.get(1).allGather(new byte[1], false), THREADS);
      var w2 = CompletableFuture.supplyAsync(() -> g.get(2).allGather(new byte[1], false), THREADS);
      Thread.sleep(200);
      g.get(0).close();
      for (var w : List.of(w1, w2)) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> w.get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause().getMessage().contains("PE 0 disconnected"), e.getCause().getMessage());
      }
    } finally {
      g.forEach(TcpBootstrap::close);
    }
  }

  @Test
  void aPeThatNeverArrivesFailsTheStepAfterTheTimeout() throws Exception {
    List<TcpBootstrap> g = group(freshId(), 2, Duration.ofSeconds(1));
    try {
      long start = System.nanoTime();
      ShmemException e = assertThrows(ShmemException.class, () -> g.get(0).allGather(new byte[1], false));
      long waited = System.nanoTime() - start;
      assertTrue(e.getMessage().contains("PEs [1] did not reach step 0"), e.getMessage());
      assertTrue(waited >= 900_000_000L && waited < 5_000_000_000L, "waited " + waited / 1_000_000 + " ms");
    } finally {
      g.forEach(TcpBootstrap::close);
    }
  }

  @Test
  void aMissingPeFailsInitAfterTheTimeoutNamingIt() throws Exception {
    UniqueId id = freshId();
    var one = CompletableFuture.supplyAsync(() -> TcpBootstrap.join(id, 1, 3, Duration.ofSeconds(2), null), THREADS);
    ShmemException e = assertThrows(ShmemException.class, () -> TcpBootstrap.join(id, 0, 3, Duration.ofSeconds(2), null));
    assertTrue(e.getMessage().contains("PEs [2] did not join"), e.getMessage());
    // PE 1 had been admitted: rank 0 giving up closes its connection, which fails PE 1's group
    TcpBootstrap admitted = one.get(10, TimeUnit.SECONDS);
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (admitted.failure() == null && System.nanoTime() < deadline) Thread.sleep(20);
    assertTrue(String.valueOf(admitted.failure()).contains("PE 0 disconnected"), admitted.failure());
    admitted.close();
  }

  @Test
  void anIdOfAnotherGroupOrAnotherSizeIsRefused() throws Exception {
    UniqueId id = freshId();
    UniqueId other = new UniqueId(id.address(), id.port(), new byte[16]);
    var zero = CompletableFuture.supplyAsync(() -> TcpBootstrap.join(id, 0, 2, Duration.ofSeconds(5), null), THREADS);
    ShmemException wrongNonce = assertThrows(ShmemException.class, () -> TcpBootstrap.join(other, 1, 2, Duration.ofSeconds(5), null));
    assertTrue(wrongNonce.getMessage().contains("nonce does not match"), wrongNonce.getMessage());
    ShmemException wrongSize = assertThrows(ShmemException.class, () -> TcpBootstrap.join(id, 1, 3, Duration.ofSeconds(5), null));
    assertTrue(wrongSize.getMessage().contains("says nPes 3, rank 0 says 2"), wrongSize.getMessage());
    // the right one still gets in afterwards
    TcpBootstrap one = TcpBootstrap.join(id, 1, 2, Duration.ofSeconds(5), null);
    TcpBootstrap z = zero.get(10, TimeUnit.SECONDS);
    assertEquals(1, one.rank());
    one.close();
    z.close();
    assertThrows(IllegalArgumentException.class, () -> TcpBootstrap.join(id, 2, 2, Duration.ofSeconds(1), null));
  }

  @Test
  void afterTheFinalStepClosingIsNotAFailure() throws Exception {
    List<TcpBootstrap> g = group(freshId(), 2, Duration.ofSeconds(10));
    var a = CompletableFuture.supplyAsync(() -> g.get(0).allGather(new byte[0], true), THREADS);
    var b = CompletableFuture.supplyAsync(() -> g.get(1).allGather(new byte[0], true), THREADS);
    a.get(10, TimeUnit.SECONDS);
    b.get(10, TimeUnit.SECONDS);
    g.get(0).close();
    Thread.sleep(200);
    assertEquals(null, g.get(1).failure());
    g.get(1).close();
  }
}
