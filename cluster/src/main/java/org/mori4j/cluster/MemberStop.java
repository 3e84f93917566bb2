package org.mori4j.cluster;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;

/**
 * When a member process may exit: once its ActorSystem has terminated, or, should termination hang, once
 * coordinated shutdown has reached its last phase and that phase's timeout (plus a grace) has passed. A
 * member cut off by a partition can otherwise wait for ever: terminating the system waits for Artery to
 * close its connections to peers that no longer answer. Every task of the earlier phases (the engine's close
 * among them) has ended or timed out by then, so exiting loses nothing that waiting would have saved.
 */
public final class MemberStop {
  /** Time given to termination beyond the last phase's own timeout. */
  public static final Duration GRACE = Duration.ofSeconds(2);

  private MemberStop() {}

  /** Completes as described above; call it before the system starts shutting down (it adds a shutdown task). */
  public static CompletionStage<Done> whenStopped(ActorSystem<?> system) {
    Duration terminate = system.settings().config().getDuration("pekko.coordinated-shutdown.phases.actor-system-terminate.timeout");
    return whenStopped(system, terminate.plus(GRACE));
  }

  /** {@link #whenStopped(ActorSystem)} waiting {@code wait} after the last phase began before it gives up on termination. */
  static CompletionStage<Done> whenStopped(ActorSystem<?> system, Duration wait) {
    CompletableFuture<Done> stopped = new CompletableFuture<>();
    system.getWhenTerminated().thenRun(() -> stopped.complete(Done.getInstance()));
    CoordinatedShutdown.get(system).addTask(CoordinatedShutdown.PhaseBeforeActorSystemTerminate(), "mori4j-member-stop", () -> {
      // not the system's scheduler: it may be the very thing that does not stop
      CompletableFuture.runAsync(() -> stopped.complete(Done.getInstance()),
          CompletableFuture.delayedExecutor(wait.toMillis(), TimeUnit.MILLISECONDS));
      return CompletableFuture.completedFuture(Done.getInstance());
    });
    return stopped;
  }
}
