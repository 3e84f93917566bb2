package org.mori4j.io.internal;

import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * One actor per session: the session's pre-resolved route stays valid until the engine tells this actor
 * otherwise (its peer was lost or deregistered, its memory deregistered, the engine closed). The session's
 * transfers themselves go straight to the backend; this actor owns the session's life, not its data.
 */
public final class SessionActor {
  private SessionActor() {}

  /** What the actor controls in the session object. */
  public interface Handle {
    void invalidate(String reason);
  }

  public sealed interface Command permits Invalidate {}

  /** The route is gone; transfers on the session fail from now on with {@code reason}. */
  public record Invalidate(String reason) implements Command {}

  public static Behavior<Command> create(Handle session) {
    return Behaviors.receive(Command.class).onMessage(Invalidate.class, m -> {
      session.invalidate(m.reason());
      return Behaviors.stopped();
    }).build();
  }
}
