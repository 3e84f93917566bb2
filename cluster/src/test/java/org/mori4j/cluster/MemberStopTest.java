package org.mori4j.cluster;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;

/** A member may exit when its system terminates, and also when termination hangs past the last phase's timeout. */
class MemberStopTest {
  private static ActorSystem<Void> system(String name) {
    return ActorSystem.create(Behaviors.empty(), name, ConfigFactory.parseString("""
        pekko.coordinated-shutdown.phases.actor-system-terminate.timeout = 1s
        pekko.coordinated-shutdown.run-by-jvm-shutdown-hook = off
        """).withFallback(ConfigFactory.load()));
  }

  @Test
  void aSystemThatTerminatesIsStoppedAtOnce() throws Exception {
    ActorSystem<Void> sys = system("member-stop-clean");
    CompletableFuture<?> stopped = MemberStop.whenStopped(sys, Duration.ofSeconds(30)).toCompletableFuture();
    assertFalse(stopped.isDone());
    sys.terminate();
    stopped.get(10, TimeUnit.SECONDS);
    assertTrue(sys.getWhenTerminated().toCompletableFuture().isDone());
  }

  @Test
  void aSystemWhoseTerminationHangsIsStoppedAfterTheLastPhasesTimeout() throws Exception {
    ActorSystem<Void> sys = system("member-stop-hung");
    CompletableFuture<Void> release = new CompletableFuture<>();
    // an actor that does not let its system terminate (as Artery waiting on a peer behind a partition)
    sys.systemActorOf(Behaviors.receive(Object.class).onSignal(PostStop.class, s -> {
      release.get(60, TimeUnit.SECONDS);
      return Behaviors.same();
    }).build(), "stuck", org.apache.pekko.actor.typed.Props.empty());
    CompletableFuture<?> stopped = MemberStop.whenStopped(sys).toCompletableFuture();
    long t0 = System.nanoTime();
    CoordinatedShutdown.get(sys).runAll(CoordinatedShutdown.unknownReason());
    try {
      stopped.get(30, TimeUnit.SECONDS);
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertFalse(sys.getWhenTerminated().toCompletableFuture().isDone(), "the system is still terminating");
      assertTrue(ms >= 1000 + MemberStop.GRACE.toMillis() - 200, "gave up only after the phase timeout and the grace: " + ms + " ms");
    } finally {
      release.complete(null);
      sys.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }
}
