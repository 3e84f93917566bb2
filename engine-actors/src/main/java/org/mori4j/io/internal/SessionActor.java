package org.mori4j.io.internal;

import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.mori4j.io.StatusCode;

/**
 * One actor per session: the session's pre-resolved route stays valid until the engine tells this actor
 * otherwise (its peer was lost or deregistered, its memory deregistered, the engine closed). The session's
 * transfers themselves go straight to the backend; this actor owns the session's life, not its data.
 */
public final class SessionActor {
  private SessionActor() {}

  /** What the actor controls in the session object. */
  public interface Handle {
    /** From now on the session's transfers fail with {@code code} and {@code reason}. */
    void invalidate(StatusCode code, String reason);
  }

  public sealed interface Command permits Invalidate {}

  /**
   * The route is gone; transfers on the session fail from now on with {@code code} ({@code ERR_PEER_LOST} when
   * the peer was lost, {@code ERR_BAD_STATE} otherwise) and {@code reason}.
   */
  public record Invalidate(StatusCode code, String reason) implements Command {}

  public static Behavior<Command> create(Handle session) {
    return Behaviors.receive(Command.class).onMessage(Invalidate.class, m -> {
      session.invalidate(m.code(), m.reason());
      return Behaviors.stopped();
    }).build();
  }
}
