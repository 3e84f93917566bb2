package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * A read cancelled while it waits on a peer that answers nothing (over RDMA: the confirmation of the peer's region;
 * over TCP: its response) never writes the caller's buffer afterwards, when the peer answers after all: cancellation
 * hands the buffer back to the caller. The peer is a child JVM on loopback, frozen with SIGSTOP and thawed with
 * SIGCONT; once the thawed peer has served a second read behind the cancelled one, the cancelled read's buffer must
 * still hold what the caller put there (the peer's memory is zeros, the buffer a pattern).
 */
class CancelWhileWaitingTest {
  private static final long SIZE = 1L << 20;

  @Test
  void aReadCancelledWhileItsPeerWasFrozenNeverTouchesItsBuffer() throws Exception {
    Assumptions.assumeFalse("EVENT".equals(System.getProperty("mori4j.test.rdma.poll")),
        "the wait for a confirmation does not depend on the poll mode; run in the default and rdma-polling-qp1 executions");
    String childKey = "cancel-frozen-target-" + ProcessHandle.current().pid();
    ConcurrentLinkedQueue<String> childLog = new ConcurrentLinkedQueue<>();
    Process child = ChildTargets.startChild(childKey, SIZE);
    IoEngine initiator = null;
    Arena arena = Arena.ofShared();
    try {
      String[] ready = ChildTargets.awaitReady(child, childLog);
      initiator = IoEngine.create("cancel-frozen-initiator-" + ProcessHandle.current().pid(), IoEngineConfig.loopback());
      TestBackends.create(initiator);
      EngineDesc remoteEngine = initiator.discover(ready[1], Integer.parseInt(ready[2]));
      MemoryDesc remote = initiator.lookupMemory(remoteEngine, "buf").orElseThrow();
      initiator.registerRemoteEngine(remoteEngine);
      MemorySegment mine = arena.allocate(SIZE, 4096);
      mine.fill((byte) 0x5A);
      MemorySegment pattern = arena.allocate(SIZE, 8);
      pattern.fill((byte) 0x5A);
      MemoryDesc cancelledInto = initiator.registerMemory(mine);
      MemoryDesc laterInto = initiator.registerMemory(arena.allocate(SIZE, 4096));

      assertEquals(0, new ProcessBuilder("kill", "-STOP", String.valueOf(child.pid())).inheritIO().start().waitFor());
      ChildTargets.awaitStopped(child.pid());
      TransferStatus cancelled = initiator.read(cancelledInto, 0, remote, 0, SIZE, initiator.allocateTransferUid());
      Thread.sleep(100);
      assertTrue(cancelled.inProgress(), "the read ended while its peer was frozen: " + cancelled);
      assertTrue(cancelled.cancel(), "cancel() of a read in progress: " + cancelled);
      assertEquals(0, new ProcessBuilder("kill", "-CONT", String.valueOf(child.pid())).inheritIO().start().waitFor());

      TransferStatus later = initiator.read(laterInto, 0, remote, 0, SIZE, initiator.allocateTransferUid());
      assertTrue(later.await(Duration.ofSeconds(15)), "the read after the thaw did not end: " + later);
      assertTrue(later.succeeded(), "the read after the thaw: " + later);
      Thread.sleep(100); // another queue pair may complete the cancelled read's work a little after the later one
      assertEquals(-1, mine.mismatch(pattern), "the cancelled read wrote into its buffer after cancel() returned true ("
          + TestBackends.describe() + ")");
    } finally {
      child.destroyForcibly();
      child.waitFor(10, TimeUnit.SECONDS);
      if (initiator != null) initiator.close();
      arena.close();
    }
  }
}
