package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.mori4j.io.Bytes.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Misuse by one caller must cost that caller's transfer only: it must not take down the connection to the
 * peer, so the other transfers (and later ones) keep working. Each test starts from a healthy pair; if a
 * previous test broke the pair, it is replaced, so one failure does not spill into the next test. Runs on the
 * suite's data backend ({@link TestBackends}); where RDMA's correct answer differs from TCP's (no wire limit on a
 * batch, a one-sided access the target cannot refuse), the case asserts RDMA's.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ResilienceTest {
  private EnginePair p;

  @BeforeEach
  void healthyPair() {
    if (p != null) {
      TransferStatus probe = p.initiator.write(p.local, 0, p.remote, 0, 64, 1);
      if (probe.await(Duration.ofSeconds(10)) && probe.succeeded()) return;
      p.close();
    }
    p = new EnginePair(4L << 20);
  }

  @AfterAll
  void stop() {
    if (p != null) p.close();
  }

  private void assertPeerStillWorks(String after) {
    randomize(p.localBuf, 0, 65536, 3);
    assertSucceeds(p.initiator.write(p.local, 0, p.remote, 4096, 65536, 2), "a normal write after " + after);
    assertRangeEquals(p.localBuf, 0, p.remoteBuf, 4096, 65536, "after " + after);
  }

  @Test
  void batchWithMoreBlocksThanOneRequestMayCarryFailsAloneAndThePeerSurvives() {
    // reference.conf: mori4j.tcp.max-batch-entries = 1048576; one more non-contiguous block than that
    int n = (1 << 20) + 1;
    long[] lo = new long[n], ro = new long[n], s = new long[n];
    for (int i = 0; i < n; i++) {
      lo[i] = 2L * i;
      ro[i] = 2L * i + 1;
      s[i] = 1;
    }
    randomize(p.localBuf, 0, 2L * n, 5);
    TransferStatus big = p.initiator.batchWrite(List.of(p.local), List.of(lo), List.of(p.remote), List.of(ro), List.of(s),
        new long[] {9}).get(0);
    assertTrue(big.await(Duration.ofSeconds(30)), "oversized batch never ended");
    if (TestBackends.rdma()) {
      // RDMA has no request frame to outgrow: the blocks are work requests posted in chains, so the batch moves
      assertSucceeds(big, "a batch of " + n + " blocks on RDMA");
      for (int i = 0; i < n; i++)
        if (p.localBuf.get(JAVA_BYTE, lo[i]) != p.remoteBuf.get(JAVA_BYTE, ro[i])) fail("block " + i + " of " + n + " did not land");
    } else {
      assertTrue(big.failed(), "a batch larger than the wire allows cannot succeed: " + big);
      assertEquals(StatusCode.ERR_INVALID_ARGS, big.code(), "an oversized batch is bad input, not a lost peer: " + big);
    }
    assertPeerStillWorks("an oversized batch");
  }

  @Test
  void writeFromLocalMemoryWhoseArenaWasClosedFailsAloneAndThePeerSurvives() {
    Arena a = Arena.ofShared();
    MemorySegment seg = a.allocate(65536, 8);
    MemoryDesc d = p.initiator.registerMemory(seg);
    a.close(); // the caller frees memory that is still registered
    TransferStatus s = p.initiator.write(d, 0, p.remote, 0, 65536, 5);
    assertTrue(s.await(Duration.ofSeconds(10)), "write from freed memory never ended");
    assertTrue(s.failed(), "write from freed memory: " + s);
    assertPeerStillWorks("a write from freed local memory");
    p.initiator.deregisterMemory(d);
  }

  @Test
  void readIntoLocalMemoryWhoseArenaWasClosedFailsAloneAndThePeerSurvives() {
    Arena a = Arena.ofShared();
    MemorySegment seg = a.allocate(65536, 8);
    MemoryDesc d = p.initiator.registerMemory(seg);
    a.close();
    TransferStatus s = p.initiator.read(d, 0, p.remote, 0, 65536, 6);
    assertTrue(s.await(Duration.ofSeconds(10)), "read into freed memory never ended");
    assertTrue(s.failed(), "read into freed memory: " + s);
    assertPeerStillWorks("a read into freed local memory");
    p.initiator.deregisterMemory(d);
  }

  @Test
  void writeToTargetMemoryFreedByItsOwnerIsRefusedAndThePeerSurvives() {
    Arena a = Arena.ofShared();
    MemorySegment seg = a.allocate(65536, 8);
    MemoryDesc d = p.target.registerMemory(seg);
    a.close();
    if (TestBackends.rdma()) {
      // one-sided: the target's CPU never sees the request, so its engine cannot refuse it as TCP's does. The
      // software provider treats freed memory as deregistered and the initiator gets the device's remote access
      // error (a NIC would write into the pages its registration still pins, which no longer belong to anyone).
      // The error takes the queue pair out of service (reliable-connection semantics) and the engine connects the
      // peer again; transfers submitted meanwhile wait for the new connection and go on it, so none of them fails
      assertRefusedByTheDevice(p.initiator.write(p.local, 0, d, 0, 65536, 7), "write to freed target memory");
      assertNextTransfersSucceed("a write to freed target memory");
      assertRefusedByTheDevice(p.initiator.read(p.local, 0, d, 0, 65536, 8), "read from freed target memory");
      assertNextTransfersSucceed("a read from freed target memory");
    } else {
      assertFailsWith(p.initiator.write(p.local, 0, d, 0, 65536, 7), "write to freed target memory", StatusCode.ERR_BAD_STATE,
          StatusCode.ERR_NOT_FOUND);
      assertFailsWith(p.initiator.read(p.local, 0, d, 0, 65536, 8), "read from freed target memory", StatusCode.ERR_BAD_STATE,
          StatusCode.ERR_NOT_FOUND);
    }
    assertPeerStillWorks("transfers against freed target memory");
    p.target.deregisterMemory(d);
  }

  private static void assertRefusedByTheDevice(TransferStatus s, String what) {
    assertFailsWith(s, what, StatusCode.ERR_RDMA_OP);
    assertTrue(s.message().contains("IBV_WC_REM_ACCESS_ERR"), what + ": the message should name the completion status: " + s);
  }

  /**
   * RDMA: transfers submitted right after a queue pair left service (its failed transfer already ended, the
   * connection's replacement is under way) are held for the new connection and succeed on their first try, each
   * landing once where it was meant to.
   */
  private void assertNextTransfersSucceed(String after) {
    randomize(p.localBuf, 0, 8 * 4096, 11);
    List<TransferStatus> next = new java.util.ArrayList<>();
    for (int i = 0; i < 8; i++) next.add(p.initiator.write(p.local, i * 4096L, p.remote, 8192 + i * 4096L, 4096, 1000 + i));
    for (int i = 0; i < next.size(); i++) assertSucceeds(next.get(i), "write " + i + " submitted right after " + after);
    assertRangeEquals(p.localBuf, 0, p.remoteBuf, 8192, 8 * 4096, "after " + after);
  }

  @Test
  void refusedRequestsInterleavedWithGoodOnesDoNotDisturbTheStream() {
    // refused writes carry a payload the target must skip; good requests after them must still be framed right
    MemoryDesc forged = new MemoryDesc(p.remote.engineKey(), p.remote.id(), -1, p.remote.address(), p.remote.size(),
        MemoryLocationType.CPU, p.remote.accessKey() + 1, null, p.remote.ownerIncarnation());
    randomize(p.localBuf, 0, 1 << 20, 4);
    java.util.List<TransferStatus> good = new java.util.ArrayList<>(), bad = new java.util.ArrayList<>();
    for (int i = 0; i < 200; i++) {
      long size = 1 + (i * 7919L) % 100_000;
      if (i % 3 == 0) bad.add(p.initiator.write(p.local, 0, forged, 0, size, 100 + i));
      else if (i % 3 == 1) good.add(p.initiator.write(p.local, i * 1000L, p.remote, i * 1000L, 1000, 100 + i));
      else bad.add(p.initiator.read(p.local, 2_000_000, forged, 0, size, 100 + i));
    }
    assertEquals(StatusCode.SUCCESS, p.initiator.waitAll(good, Duration.ofSeconds(30)));
    for (TransferStatus b : bad) assertFailsWith(b, "forged", StatusCode.ERR_NOT_FOUND);
    for (int i = 1; i < 200; i += 3) assertRangeEquals(p.localBuf, i * 1000L, p.remoteBuf, i * 1000L, 1000, "good write " + i);
    assertPeerStillWorks("interleaved refusals");
  }
}
