package org.mori4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.channels.SelectionKey;
import org.junit.jupiter.api.Test;

/**
 * {@link TcpCallTrace.Tally}: what one end counts for one transfer (the trace itself is off in tests, so nothing is
 * written; the tally's record is read directly). Calls that moved less than offered are short, calls that moved
 * nothing are EAGAIN, the largest call and the first/last byte stamps follow the calls that moved bytes; nothing is
 * counted outside a transfer or for transfers below {@link TcpCallTrace#MIN_BYTES}; a transfer that begins before the
 * previous one ended closes it and says so.
 */
class TcpCallTraceTest {
  @Test
  void countsCallsShortAndEmptyOnesAndWakeUpsOfOneTransfer() {
    TcpCallTrace.Tally t = new TcpCallTrace.Tally();
    t.write(1 << 20, 1 << 20); // before any transfer: not counted
    t.begin(0, true, true, 1 << 20);
    t.write(300_000, 300_000);
    t.write(400_000, 100_000); // short
    t.write(300_000, 0); // EAGAIN
    t.read(32, 32);
    t.wake(SelectionKey.OP_WRITE | SelectionKey.OP_READ);
    t.wake(SelectionKey.OP_READ);
    t.gpuPoll();
    t.end();
    long[] r = t.record();
    assertEquals(1, r[TcpCallTrace.KIND], "gpu");
    assertEquals(1, r[TcpCallTrace.WRITE], "write");
    assertEquals(1 << 20, r[TcpCallTrace.BYTES]);
    assertEquals(3, r[TcpCallTrace.W_CALLS]);
    assertEquals(1, r[TcpCallTrace.W_SHORT]);
    assertEquals(1, r[TcpCallTrace.W_ZERO]);
    assertEquals(300_000, r[TcpCallTrace.W_MAX]);
    assertEquals(1, r[TcpCallTrace.R_CALLS]);
    assertEquals(0, r[TcpCallTrace.R_SHORT]);
    assertEquals(1, r[TcpCallTrace.WAKE_W]);
    assertEquals(2, r[TcpCallTrace.WAKE_R]);
    assertEquals(1, r[TcpCallTrace.GPU_POLLS]);
    assertEquals(Thread.currentThread().threadId(), r[TcpCallTrace.THREAD], "the thread that began it");
    assertTrue(r[TcpCallTrace.FIRST_W] >= r[TcpCallTrace.T0] && r[TcpCallTrace.LAST_W] >= r[TcpCallTrace.FIRST_W]
        && r[TcpCallTrace.T_END] >= r[TcpCallTrace.LAST_W], "stamps in order");
    t.write(1000, 1000); // after the end: not counted
    assertEquals(3, t.record()[TcpCallTrace.W_CALLS]);
  }

  @Test
  void smallTransfersAreNotCountedAndAnOverlapIsMarked() {
    TcpCallTrace.Tally t = new TcpCallTrace.Tally();
    t.begin(1, false, true, TcpCallTrace.MIN_BYTES - 1);
    t.read(100, 100);
    assertEquals(0, t.record()[TcpCallTrace.R_CALLS], "a transfer below the minimum is not counted");
    t.begin(1, false, false, TcpCallTrace.MIN_BYTES);
    t.read(100, 50);
    t.begin(1, false, false, TcpCallTrace.MIN_BYTES); // the previous one never ended
    long[] r = t.record();
    assertEquals(1, r[TcpCallTrace.OVERLAP], "began while the previous one was open");
    assertEquals(0, r[TcpCallTrace.R_CALLS], "a new transfer starts from zero");
    assertEquals(0, r[TcpCallTrace.KIND], "cpu");
    assertEquals(0, r[TcpCallTrace.WRITE], "read");
  }
}
