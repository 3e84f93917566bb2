package org.mori4j.transport;

import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class OpQueueTest {
  @Test
  void emptyQueuePollsNull() {
    OpQueue q = new OpQueue();
    assertTrue(q.isEmpty());
    assertNull(q.poll());
    assertNull(q.poll());
    assertTrue(q.isEmpty());
  }

  @Test
  void singleProducerGetsFifoOrder() {
    OpQueue q = new OpQueue();
    List<TestOp> ops = new ArrayList<>();
    for (int i = 0; i < 1000; i++) ops.add(new TestOp(0, i));
    for (TestOp op : ops) q.offer(op);
    assertFalse(q.isEmpty());
    for (int i = 0; i < 1000; i++) assertSame(ops.get(i), q.poll(), "element " + i);
    assertNull(q.poll());
    assertTrue(q.isEmpty());
  }

  @Test
  void singleElementCanBeOfferedAndPolledRepeatedly() {
    // the last element is handed out through the stub re-insertion path; the queue must stay usable after it
    OpQueue q = new OpQueue();
    TestOp a = new TestOp(0, 0);
    for (int round = 0; round < 100; round++) {
      q.offer(a);
      assertSame(a, q.poll(), "round " + round);
      assertNull(q.poll(), "round " + round);
      assertTrue(q.isEmpty(), "round " + round);
    }
  }

  @Test
  void interleavedOfferAndPollKeepOrder() {
    OpQueue q = new OpQueue();
    long next = 0, expect = 0;
    java.util.SplittableRandom r = new java.util.SplittableRandom(3);
    List<TestOp> made = new ArrayList<>();
    for (int step = 0; step < 100_000; step++) {
      if (r.nextInt(3) > 0) {
        TestOp op = new TestOp(0, next++);
        made.add(op);
        q.offer(op);
      } else {
        TransferOp got = q.poll();
        if (expect < next) {
          assertNotNull(got, "queue lost element " + expect);
          assertEquals(expect++, ((TestOp) got).seq);
        } else assertNull(got);
      }
    }
    TransferOp got;
    while ((got = q.poll()) != null) assertEquals(expect++, ((TestOp) got).seq);
    assertEquals(next, expect);
  }

  @Test
  void fourProducersLoseNothingAndKeepPerProducerOrder() {
    assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
      final int producers = 4, perProducer = 100_000;
      OpQueue q = new OpQueue();
      TestOp[][] ops = new TestOp[producers][perProducer];
      for (int p = 0; p < producers; p++) for (int i = 0; i < perProducer; i++) ops[p][i] = new TestOp(p, i);
      CountDownLatch start = new CountDownLatch(1);
      List<Thread> threads = new ArrayList<>();
      for (int p = 0; p < producers; p++) {
        int me = p;
        Thread t = new Thread(() -> {
          try {
            start.await();
          } catch (InterruptedException e) {
            return;
          }
          for (int i = 0; i < perProducer; i++) q.offer(ops[me][i]);
        }, "producer-" + p);
        t.start();
        threads.add(t);
      }
      start.countDown();
      long[] nextSeq = new long[producers];
      boolean[][] seen = new boolean[producers][perProducer];
      int total = 0;
      while (total < producers * perProducer) {
        TransferOp got = q.poll();
        if (got == null) {
          Thread.onSpinWait();
          continue;
        }
        TestOp op = (TestOp) got;
        assertFalse(seen[op.producer][(int) op.seq], "duplicate " + op.producer + "/" + op.seq);
        seen[op.producer][(int) op.seq] = true;
        assertEquals(nextSeq[op.producer], op.seq, "order of producer " + op.producer);
        nextSeq[op.producer]++;
        total++;
      }
      for (Thread t : threads) t.join();
      assertNull(q.poll(), "more elements than were offered");
      for (int p = 0; p < producers; p++) assertEquals(perProducer, nextSeq[p]);
    });
  }
}
