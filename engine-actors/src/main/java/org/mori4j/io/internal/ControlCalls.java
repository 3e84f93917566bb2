package org.mori4j.io.internal;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.pattern.StatusReply;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.IoEngineProtocol;
import org.mori4j.io.StatusCode;

/**
 * The blocking edge of the facade: every control call of {@code IoEngine} is an {@code ask} to its engine actor (or
 * to another engine's control actor) with the engine's ask timeout, and every way an ask can end (a failed
 * {@link StatusReply}, no answer in time, an interrupt, a closed engine) becomes one {@link IoEngineException}
 * with a code and a message naming who did not answer. Kept apart from the facade so that {@code IoEngine} reads as
 * the list of what users can call, and so that the timeout and error mapping are written once.
 */
public final class ControlCalls {
  private final String key;
  private final ActorSystem<?> system;
  private final ActorRef<IoEngineProtocol.Command> engine;
  private final EngineSettings settings;
  private final BooleanSupplier closed;

  /** {@code closed} is the facade's flag: once it reads true, every call fails with {@code ERR_BAD_STATE}. */
  public ControlCalls(String key, ActorSystem<?> system, ActorRef<IoEngineProtocol.Command> engine,
                      EngineSettings settings, BooleanSupplier closed) {
    this.key = key;
    this.system = system;
    this.engine = engine;
    this.settings = settings;
    this.closed = closed;
  }

  /** Asks this engine's actor and returns its answer. */
  public <T> T ask(Function<ActorRef<T>, IoEngineProtocol.Command> make) {
    return askOther(engine, make, "engine '" + key + "'");
  }

  /** Asks {@code target} (another engine's control actor, named {@code who} in errors) and returns its answer. */
  public <T> T askOther(ActorRef<IoEngineProtocol.Command> target, Function<ActorRef<T>, IoEngineProtocol.Command> make, String who) {
    failIfClosed();
    try {
      return AskPattern.ask(target, make::apply, settings.askTimeout(), system.scheduler())
          .toCompletableFuture().get(settings.askTimeout().toMillis() + 1000, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new IoEngineException(StatusCode.ERR_TIMEOUT, "no answer from " + who + " within " + settings.askTimeout().toMillis() + " ms", e.getCause());
    } catch (TimeoutException e) {
      throw new IoEngineException(StatusCode.ERR_TIMEOUT, "no answer from " + who + " within " + settings.askTimeout().toMillis() + " ms", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IoEngineException(StatusCode.ERR_BAD_STATE, "interrupted while waiting for " + who, e);
    }
  }

  /**
   * Asks this engine's actor for a {@link StatusReply}: its value, or its error as an {@link IoEngineException}
   * (the engine's own code when it sent one, else {@code ERR_BAD_STATE}).
   */
  public <T> T askStatus(Function<ActorRef<StatusReply<T>>, IoEngineProtocol.Command> make) {
    failIfClosed();
    StatusReply<T> reply = ask(make);
    if (reply.isSuccess()) return reply.getValue();
    Throwable err = reply.getError();
    // a fresh exception: the engine's was made on the actor's thread, its stack says nothing to the caller
    if (err instanceof IoEngineException ie) throw new IoEngineException(ie.code(), ie.getMessage());
    throw new IoEngineException(StatusCode.ERR_BAD_STATE, err.getMessage(), err);
  }

  /** The control actor at {@code path} (a Pekko actor path); {@code ERR_INVALID_ARGS} when it cannot be parsed. */
  public ActorRef<IoEngineProtocol.Command> resolve(String path) {
    try {
      return ActorRefResolver.get(system).resolveActorRef(path);
    } catch (RuntimeException e) {
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "cannot resolve control address '" + path + "': " + e.getMessage(), e);
    }
  }

  /**
   * Asks the engine actor to fail what is in flight and stop, waiting at most the ask timeout; false when it did not
   * answer (gone or stuck), which the caller may ignore: stopping the system releases the same resources.
   */
  public boolean shutdown() {
    try {
      AskPattern.ask(engine, (ActorRef<Done> r) -> new EngineMessages.Shutdown(r), settings.askTimeout(), system.scheduler())
          .toCompletableFuture().get(settings.askTimeout().toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // the caller's close goes on; its thread keeps the interrupt it was given
      return false;
    } catch (Exception e) {
      return false;
    }
  }

  private void failIfClosed() {
    if (closed.getAsBoolean()) throw new IoEngineException(StatusCode.ERR_BAD_STATE, "engine '" + key + "' is closed");
  }
}
