package org.mori4j.transport.rdma.ibv;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.verbs.Errno;
import org.mori4j.natives.verbs.LibcFds;

/**
 * The EVENT-mode wait of the ibverbs completion channel, run without an RDMA device: a semaphore eventfd
 * stands in for the channel's descriptor (each read takes one event, as each {@code ibv_get_cq_event}
 * does), so timeouts, wake-ups from another thread and the draining of several pending events run on real
 * descriptors and real {@code ppoll}.
 */
class EventWaitTest {
  private int channelFd;
  private EventWait wait;
  private Arena arena;
  private MemorySegment buffer;
  private MemorySegment errno;
  private BooleanSupplier takeOne;
  private int taken;

  @BeforeEach
  void open() {
    channelFd = LibcFds.eventfd(0, LibcFds.EFD_SEMAPHORE | LibcFds.EFD_NONBLOCK | LibcFds.EFD_CLOEXEC);
    wait = new EventWait(channelFd);
    arena = Arena.ofShared();
    buffer = arena.allocate(JAVA_LONG);
    errno = Errno.captureState(arena);
    takeOne = () -> {
      boolean took = LibcFds.read(channelFd, buffer, errno) == 8;
      if (took) taken++;
      return took;
    };
  }

  @AfterEach
  void close() {
    wait.close();
    LibcFds.close(channelFd);
    arena.close();
  }

  private void raise(long events) {
    buffer.set(JAVA_LONG, 0, events);
    assertEquals(8, LibcFds.write(channelFd, buffer, errno));
  }

  @Test
  void timesOutAfterTheAskedTimeWithNoEvent() {
    long start = System.nanoTime();
    assertEquals(0, wait.await(40_000_000L, takeOne));
    long waited = System.nanoTime() - start;
    assertTrue(waited >= 35_000_000L && waited < 2_000_000_000L, "waited " + waited + " ns for a 40 ms timeout");
    long t0 = System.nanoTime();
    assertEquals(0, wait.await(0, takeOne), "a zero timeout only looks");
    assertEquals(0, wait.await(-5, takeOne), "a negative timeout only looks");
    assertTrue(System.nanoTime() - t0 < 1_000_000_000L);
    assertEquals(0, taken);
  }

  @Test
  void aWakeupFromAnotherThreadEndsALongWait() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CompletableFuture<long[]> result = CompletableFuture.supplyAsync(() -> {
      started.countDown();
      long start = System.nanoTime();
      int n = wait.await(TimeUnit.SECONDS.toNanos(30), takeOne);
      return new long[] {n, System.nanoTime() - start};
    });
    assertTrue(started.await(5, TimeUnit.SECONDS));
    Thread.sleep(100);
    wait.wakeup();
    long[] r = result.get(10, TimeUnit.SECONDS);
    assertEquals(0, r[0], "a wake-up takes no event");
    assertTrue(r[1] < TimeUnit.SECONDS.toNanos(10), "woken after " + r[1] + " ns of a 30 s wait");
  }

  @Test
  void aWakeupBeforeTheWaitMakesItReturnAtOnceAndIsUsedUp() {
    wait.wakeup();
    wait.wakeup();
    assertTimeoutPreemptively(Duration.ofSeconds(10), () -> assertEquals(0, wait.await(TimeUnit.SECONDS.toNanos(30), takeOne)));
    long start = System.nanoTime();
    assertEquals(0, wait.await(30_000_000L, takeOne));
    assertTrue(System.nanoTime() - start >= 25_000_000L, "both wake-ups were drained by the first wait");
  }

  @Test
  void pendingEventsAreAllTakenInOneWait() {
    raise(3);
    assertEquals(3, wait.await(TimeUnit.SECONDS.toNanos(5), takeOne));
    assertEquals(3, taken);
    assertEquals(0, wait.await(10_000_000L, takeOne), "nothing is left");
  }

  @Test
  void oneWaitTakesAtMostItsLimitSoOtherWorkIsNotStarved() {
    raise(EventWait.MAX_EVENTS_PER_AWAIT + 5);
    assertEquals(EventWait.MAX_EVENTS_PER_AWAIT, wait.await(TimeUnit.SECONDS.toNanos(5), takeOne));
    assertEquals(5, wait.await(TimeUnit.SECONDS.toNanos(5), takeOne));
  }

  @Test
  void anEventArrivingDuringTheWaitIsTaken() throws Exception {
    CompletableFuture<Integer> result =
        CompletableFuture.supplyAsync(() -> wait.await(TimeUnit.SECONDS.toNanos(30), takeOne));
    Thread.sleep(100);
    raise(1);
    assertEquals(1, result.get(10, TimeUnit.SECONDS));
  }

  @Test
  void anEventThatIsGoneWhenTakenCountsAsNone() {
    raise(1);
    assertEquals(0, wait.await(TimeUnit.SECONDS.toNanos(5), () -> false));
  }

  @Test
  void aBrokenDescriptorIsReportedNotSpunOn() {
    // A descriptor number far above any this process opens: ppoll reports it POLLNVAL, as a closed one.
    EventWait broken = new EventWait(999_999);
    try {
      NativeException e = assertThrows(NativeException.class, () -> broken.await(1_000_000_000L, takeOne));
      assertTrue(e.getMessage().contains("event descriptor 999999 reports POLLNVAL"), e.getMessage());
    } finally {
      broken.close();
    }
  }

  @Test
  void wakingAndWaitingAllocateNothing() {
    var threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    Runnable round = () -> {
      wait.wakeup();
      if (wait.await(1_000_000_000L, takeOne) != 0) throw new AssertionError("a wake-up takes no event");
      raise(1);
      if (wait.await(1_000_000_000L, takeOne) != 1) throw new AssertionError("the raised event is taken");
    };
    for (int i = 0; i < 20_000; i++) round.run(); // let the JIT compile the wait
    // The least of a few windows, so that a recompilation in one (after an earlier test's deoptimisation)
    // does not count; one object per round would be at least 16 B x 5,000 = 80,000 bytes in every window.
    long least = Long.MAX_VALUE;
    for (int window = 0; window < 5 && least > 0; window++) {
      long before = threads.getCurrentThreadAllocatedBytes();
      for (int i = 0; i < 5_000; i++) round.run();
      least = Math.min(least, threads.getCurrentThreadAllocatedBytes() - before);
    }
    assertTrue(least < 32 * 1024, "5,000 wake/wait/event rounds allocated " + least + " bytes");
  }

  @Test
  void closingIsIdempotentAndAClosedWaitIgnoresWakeups() {
    EventWait other = new EventWait(channelFd);
    other.close();
    other.close();
    other.wakeup(); // nothing left to wake: no error, no write to a descriptor that may be reused
  }

  @Test
  void wakeupsRacingACloseNeitherFailNorStopIt() throws Exception {
    // Platform threads: a virtual thread spinning on downcalls would pin its carrier.
    ExecutorService executor = Executors.newFixedThreadPool(3);
    AtomicBoolean stop = new AtomicBoolean();
    try {
      for (int round = 0; round < 20; round++) {
        EventWait racing = new EventWait(channelFd);
        stop.set(false);
        CountDownLatch running = new CountDownLatch(3);
        List<Future<?>> wakers = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
          wakers.add(executor.submit(() -> {
            racing.wakeup();
            running.countDown();
            while (!stop.get()) racing.wakeup();
          }));
        }
        assertTrue(running.await(10, TimeUnit.SECONDS));
        racing.close(); // succeeds although wake-ups keep coming
        stop.set(true);
        for (Future<?> w : wakers) w.get(10, TimeUnit.SECONDS); // and none of them failed
      }
    } finally {
      stop.set(true);
      executor.shutdownNow();
    }
  }

  @Test
  void closingUnderAWaiterFailsWithNothingFreed() throws Exception {
    EventWait busy = new EventWait(channelFd);
    CompletableFuture<Integer> waiter = CompletableFuture.supplyAsync(() -> busy.await(TimeUnit.SECONDS.toNanos(30), takeOne));
    Thread.sleep(200);
    IllegalStateException e = assertThrows(IllegalStateException.class, busy::close);
    assertTrue(e.getMessage().contains("in use by another thread"), e.getMessage());
    busy.wakeup(); // still open: the wake-up ends the wait
    assertEquals(0, waiter.get(10, TimeUnit.SECONDS));
    busy.close();
  }
}
