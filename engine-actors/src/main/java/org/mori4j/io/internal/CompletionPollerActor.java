package org.mori4j.io.internal;

import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.mori4j.transport.CompletionSource;

/**
 * Drives one completion source in a duty cycle on its own pinned thread: work while there is work; while
 * the source has requests of this process in flight (or had a moment ago), spin briefly, then yield
 * briefly; otherwise block in the source (select/epoll) until woken or {@code park-max} passes.
 * Each {@link Poll} message runs for at most {@code max-run} and then re-sends itself, so the actor's
 * mailbox (and a stop) still gets its turn, yet a busy poller does not allocate a message per completion.
 */
public final class CompletionPollerActor {
  /** The only message: run the next stretch of the duty cycle. */
  public enum Poll { INSTANCE }

  private CompletionPollerActor() {}

  public static Behavior<Poll> create(CompletionSource source, EngineSettings s) {
    return Behaviors.setup(ctx -> {
      ctx.getSelf().tell(Poll.INSTANCE);
      return Behaviors.receive(Poll.class).onMessage(Poll.class, p -> {
        if (source.isClosed()) return Behaviors.stopped();
        long start = System.nanoTime();
        long lastWork = start;
        long lastInFlight = source.inFlight() > 0 ? start : Long.MIN_VALUE / 2;
        while (true) {
          int n;
          try {
            n = source.doWork();
          } catch (RuntimeException e) {
            ctx.getLog().error("completion source {} failed", source.name(), e);
            n = 0;
          }
          long now = System.nanoTime();
          if (source.inFlight() > 0) lastInFlight = now;
          if (n > 0) lastWork = now;
          else {
            // spin only while own requests are (or just were) outstanding and work came recently
            long sinceWork = now - lastWork;
            boolean ours = now - lastInFlight < s.pollerSpinNanos() + s.pollerYieldNanos();
            if (ours && sinceWork < s.pollerSpinNanos()) Thread.onSpinWait();
            else if (ours && sinceWork < s.pollerSpinNanos() + s.pollerYieldNanos()) Thread.yield();
            else {
              int done = source.awaitWork(s.pollerParkNanos());
              now = System.nanoTime();
              // woken by work: keep the duty cycle hot; woken by nothing: park again at once
              lastWork = done > 0 ? now : now - s.pollerSpinNanos() - s.pollerYieldNanos();
              if (source.inFlight() > 0 || done > 0 && lastInFlight > now - 1_000_000L) lastInFlight = now;
            }
          }
          if (source.isClosed()) return Behaviors.stopped();
          if (now - start > s.pollerMaxRunNanos()) break;
        }
        ctx.getSelf().tell(Poll.INSTANCE);
        return Behaviors.same();
      }).build();
    });
  }
}
