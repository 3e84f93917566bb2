package org.mori4j.io.internal;

import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.mori4j.transport.CompletionSource;

/**
 * Drives one completion source in a duty cycle on its own pinned thread: work while there is work, spin
 * briefly, yield briefly, then block in the source (select/epoll) until woken or {@code park-max} passes.
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
        while (true) {
          int n;
          try {
            n = source.doWork();
          } catch (RuntimeException e) {
            ctx.getLog().error("completion source {} failed", source.name(), e);
            n = 0;
          }
          long now = System.nanoTime();
          if (n > 0) lastWork = now;
          else {
            long idle = now - lastWork;
            if (idle < s.pollerSpinNanos()) Thread.onSpinWait();
            else if (idle < s.pollerSpinNanos() + s.pollerYieldNanos()) Thread.yield();
            else {
              source.awaitWork(s.pollerParkNanos());
              lastWork = System.nanoTime() - s.pollerSpinNanos(); // after a park, go straight back to parking when idle
              now = System.nanoTime();
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
