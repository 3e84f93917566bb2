package org.mori4j.bench.soak;

import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;
import org.mori4j.io.IoEngine;
import org.mori4j.io.TransferStatus;

/**
 * The target's half of the notification check. For every write an initiator reports as succeeded, this
 * node pops the notification ({@link IoEngine#popInboundTransferStatus}): it must be there and say
 * success (else {@code lost}, after {@value #LOST_AFTER_MS} ms of retries, or {@code wrong}); two seconds
 * later it pops the same uid again, which must find nothing (else {@code duplicated}: the engine recorded
 * the transfer a second time). Reports meant for another incarnation of this node (not our engine incarnation)
 * cannot be checked here and are counted as {@code stale}. All work happens on the caller of {@link #tick}.
 */
final class NotificationChecker {
  static final long LOST_AFTER_MS = 5000;
  private static final long RECHECK_AFTER_MS = 2000;

  private record Pending(String from, long uid, long sinceNanos) {}

  private final IoEngine engine;
  private final long myIncarnation;
  private final Consumer<String> events;
  private final ConcurrentLinkedQueue<Pending> incoming = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedQueue<Pending> forget = new ConcurrentLinkedQueue<>();
  private final ArrayDeque<Pending> retry = new ArrayDeque<>();
  private final ArrayDeque<Pending> recheck = new ArrayDeque<>();
  private volatile long ok, lost, duplicated, wrong, stale;
  private volatile int outstanding;

  NotificationChecker(IoEngine engine, long myIncarnation, Consumer<String> events) {
    this.engine = engine;
    this.myIncarnation = myIncarnation;
    this.events = events;
  }

  /** An {@code EXPECT <from> <incarnation> <ok> <uids>} line from the driver (the initiator's {@code LANDED}). */
  void expect(String from, long incarnation, boolean succeeded, long[] uids) {
    long now = System.nanoTime();
    if (incarnation != myIncarnation) {
      if (succeeded) stale += uids.length;
      return;
    }
    for (long u : uids) (succeeded ? incoming : forget).add(new Pending(from, u, now));
  }

  /** Pops what is due; called every 100 ms by one thread. */
  synchronized void tick() {
    long now = System.nanoTime();
    for (Pending p; (p = forget.poll()) != null; ) engine.popInboundTransferStatus(p.from(), p.uid());
    for (Pending p; (p = incoming.poll()) != null; ) retry.add(p);
    int n = retry.size();
    for (int i = 0; i < n; i++) {
      Pending p = retry.poll();
      Optional<TransferStatus> s = engine.popInboundTransferStatus(p.from(), p.uid());
      if (s.isPresent()) {
        if (s.get().succeeded()) ok++;
        else {
          wrong++;
          events.accept("NOTIF-WRONG from=" + p.from() + " uid=" + p.uid() + " status=" + s.get().code() + " " + s.get().message());
        }
        recheck.add(new Pending(p.from(), p.uid(), now));
      } else if (now - p.sinceNanos() > LOST_AFTER_MS * 1_000_000) {
        lost++;
        events.accept("NOTIF-LOST from=" + p.from() + " uid=" + p.uid());
      } else {
        retry.add(p);
      }
    }
    while (!recheck.isEmpty() && now - recheck.peek().sinceNanos() > RECHECK_AFTER_MS * 1_000_000) {
      Pending p = recheck.poll();
      if (engine.popInboundTransferStatus(p.from(), p.uid()).isPresent()) {
        duplicated++;
        events.accept("NOTIF-DUP from=" + p.from() + " uid=" + p.uid());
      }
    }
    outstanding = retry.size() + recheck.size() + incoming.size();
  }

  /** Nothing left to pop or re-check (as of the last tick). */
  boolean idle() {
    return outstanding == 0 && incoming.isEmpty();
  }

  String line() {
    return "NOTIF ok=" + ok + " lost=" + lost + " dup=" + duplicated + " wrong=" + wrong + " stale=" + stale + " outstanding=" + outstanding;
  }
}
