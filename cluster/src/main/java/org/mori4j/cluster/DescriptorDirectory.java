package org.mori4j.cluster;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.SortedMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.pekko.Done;
import org.apache.pekko.actor.InvalidActorNameException;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.ddata.Key;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.LWWMapKey;
import org.apache.pekko.pattern.StatusReply;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.IoEngineProtocol;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.StatusCode;

/**
 * The cluster's named descriptor directory for one engine: {@link #publish} puts one of the engine's
 * registered regions under a name, {@link #lookup} finds a name published by any engine of the cluster,
 * {@link #subscribe} follows the names under a prefix, {@link #unpublish} takes a name back. This is what a
 * KV-cache manager uses to find another node's blocks. The names live in one Distributed Data
 * {@code LWWMap} (name to {@link DirectoryEntry}) replicated to every member; an entry records its owner's
 * member and incarnation and is removed by every member's directory once that owner has left, been downed or
 * removed. The calls answer asynchronously and never block the caller; the actor behind them
 * ({@link #actorRef()}, protocol {@link Command}) can be used directly by application actors.
 *
 * <p>Lookups wait: a name that is not in this member's replica yet is first read from a majority of members
 * (so a lookup made after a publish with the default {@code majority} write consistency completed finds it),
 * then awaited until the lookup's timeout ({@code mori4j.cluster.directory.lookup-timeout}, or per call) -
 * a reader that learns a name from another channel right after it was published on another node needs no
 * retry loop. A timeout of zero only reads. A failed lookup is an {@link IoEngineException}
 * {@code ERR_NOT_FOUND} naming the name and how long it waited.
 */
public final class DescriptorDirectory {

  /** The replicated map every directory of the cluster shares. */
  static final Key<LWWMap<String, DirectoryEntry>> KEY = LWWMapKey.create("mori4j-directory");

  private static final AtomicLong LISTENERS = new AtomicLong();

  /** Every message the directory actor accepts; all of them come from the same ActorSystem. */
  public interface Command {}

  /**
   * Publishes {@code desc} under {@code name}; answered with success once the entry is replicated as
   * {@code write-consistency} says, or with an {@link IoEngineException}: {@code ERR_INVALID_ARGS} for a bad
   * name or a name already published with another descriptor, {@code ERR_NOT_FOUND} when {@code desc} is not
   * memory registered with this directory's engine, {@code ERR_TIMEOUT} when replication was not confirmed in
   * time (the entry is kept and spreads; publishing the same descriptor again is safe and succeeds).
   */
  public record Publish(String name, MemoryDesc desc, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /**
   * Looks {@code name} up, waiting up to {@code timeout} (null: the configured {@code lookup-timeout}) for it to
   * appear; answered with the descriptor or an {@link IoEngineException}.
   */
  public record Lookup(String name, Duration timeout, ActorRef<StatusReply<MemoryDesc>> replyTo) implements Command {}

  /**
   * Removes {@code name}, which this directory's engine must have published ({@code ERR_NOT_FOUND} when the
   * name is not published, {@code ERR_INVALID_ARGS} when another engine or member owns it).
   */
  public record Unpublish(String name, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /**
   * Subscribes {@code subscriber} (an actor of this ActorSystem) to the names starting with {@code prefix}
   * ("" for all): it gets a {@link DirectoryEvent.Published} for each name already listed, then every change.
   * A bad prefix is logged and ignored here (there is no reply); {@link #subscribe(String, ActorRef)} checks it
   * and throws. A subscriber that stops is dropped.
   */
  public record Subscribe(String prefix, ActorRef<DirectoryEvent> subscriber) implements Command {}

  /** Ends every subscription of {@code subscriber}. */
  public record Unsubscribe(ActorRef<DirectoryEvent> subscriber) implements Command {}

  /** Asks for the names starting with {@code prefix} that this member's replica lists now, with their descriptors. */
  public record GetEntries(String prefix, ActorRef<SortedMap<String, MemoryDesc>> replyTo) implements Command {}

  /** A listener subscription from {@link #subscribe(String, Consumer)}; closing it ends the subscription. */
  public interface Subscription extends AutoCloseable {
    @Override
    void close();
  }

  private final ActorSystem<?> system;
  private final ActorRef<Command> actor;
  private final DirectorySettings settings;
  private final String engineKey;

  private DescriptorDirectory(ActorSystem<?> system, ActorRef<Command> actor, DirectorySettings settings, String engineKey) {
    this.system = system;
    this.actor = actor;
    this.settings = settings;
    this.engineKey = engineKey;
  }

  /**
   * The behavior for an application that spawns the directory actor itself: {@code engine} is the actor of
   * the engine whose memory it publishes, {@code engineKey} that engine's key.
   */
  public static Behavior<Command> create(ActorRef<IoEngineProtocol.Command> engine, String engineKey, DirectorySettings settings) {
    Objects.requireNonNull(engine, "engine");
    Objects.requireNonNull(engineKey, "engineKey");
    Objects.requireNonNull(settings, "settings");
    return DirectoryActor.create(engine, engineKey, settings);
  }

  /**
   * Starts the directory of an engine embedded in a clustered ActorSystem (provider {@code cluster}); it
   * stops with that system, and when the engine closes it unpublishes the engine's names and stops.
   */
  public static DescriptorDirectory start(IoEngine engine) {
    Objects.requireNonNull(engine, "engine");
    ActorSystem<?> system = engine.actorSystem();
    String provider = system.settings().config().getString("pekko.actor.provider");
    if (!"cluster".equals(provider) && !provider.endsWith("ClusterActorRefProvider"))
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "engine '" + engine.key() + "' runs in ActorSystem '" + system.name()
          + "' with provider '" + provider + "'; the descriptor directory needs pekko.actor.provider = cluster");
    DirectorySettings settings = DirectorySettings.fromConfig(system.settings().config());
    String name = "mori4j-directory-" + URLEncoder.encode(engine.key(), StandardCharsets.UTF_8);
    try {
      ActorRef<Command> ref = system.systemActorOf(create(engine.actorRef(), engine.key(), settings), name, Props.empty());
      return new DescriptorDirectory(system, ref, settings, engine.key());
    } catch (InvalidActorNameException e) {
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "a descriptor directory already runs for engine '" + engine.key()
          + "' in ActorSystem '" + system.name() + "'", e);
    }
  }

  /** See {@link Publish}. */
  public CompletionStage<Done> publish(String name, MemoryDesc desc) {
    try {
      settings.checkName("name", name, false);
    } catch (IoEngineException e) {
      return CompletableFuture.failedStage(e);
    }
    Duration limit = settings.askTimeout().plus(settings.readTimeout()).plus(settings.writeTimeout()).plus(settings.askTimeout());
    return ask(r -> new Publish(name, desc, r), limit, "publish of '" + DirectorySettings.shorten(name) + "'");
  }

  /** {@link #lookup(String, Duration)} with the configured {@code lookup-timeout}. */
  public CompletionStage<MemoryDesc> lookup(String name) {
    return lookup(name, settings.lookupTimeout());
  }

  /** See {@link Lookup}: the descriptor published under {@code name}, waiting up to {@code timeout} for it. */
  public CompletionStage<MemoryDesc> lookup(String name, Duration timeout) {
    try {
      settings.checkName("name", name, false);
      if (timeout == null || timeout.isNegative())
        throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "timeout must be zero or positive: " + timeout + " (name '" + name + "')");
    } catch (IoEngineException e) {
      return CompletableFuture.failedStage(e);
    }
    Duration limit = timeout.plus(settings.readTimeout()).plus(settings.askTimeout());
    return ask(r -> new Lookup(name, timeout, r), limit, "lookup of '" + DirectorySettings.shorten(name) + "'");
  }

  /** See {@link Unpublish}. */
  public CompletionStage<Done> unpublish(String name) {
    try {
      settings.checkName("name", name, false);
    } catch (IoEngineException e) {
      return CompletableFuture.failedStage(e);
    }
    Duration limit = settings.writeTimeout().plus(settings.askTimeout());
    return ask(r -> new Unpublish(name, r), limit, "unpublish of '" + DirectorySettings.shorten(name) + "'");
  }

  /** See {@link GetEntries}. */
  public CompletionStage<SortedMap<String, MemoryDesc>> entries(String prefix) {
    try {
      settings.checkName("prefix", prefix, true);
    } catch (IoEngineException e) {
      return CompletableFuture.failedStage(e);
    }
    return AskPattern.<Command, SortedMap<String, MemoryDesc>>ask(actor, r -> new GetEntries(prefix, r), settings.askTimeout(),
        system.scheduler()).exceptionallyCompose(e -> failed(e, settings.askTimeout(), "listing of '" + prefix + "'"));
  }

  /** See {@link Subscribe}; throws {@link IoEngineException} for a bad prefix or subscriber. */
  public void subscribe(String prefix, ActorRef<DirectoryEvent> subscriber) {
    settings.checkName("prefix", prefix, true);
    if (subscriber == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "subscriber must not be null (prefix '" + prefix + "')");
    actor.tell(new Subscribe(prefix, subscriber));
  }

  /** See {@link Unsubscribe}. */
  public void unsubscribe(ActorRef<DirectoryEvent> subscriber) {
    if (subscriber != null) actor.tell(new Unsubscribe(subscriber));
  }

  /**
   * Calls {@code listener} with the events under {@code prefix} (see {@link Subscribe}) until the returned
   * subscription is closed. Calls come one at a time from one actor of this ActorSystem, in order; a listener
   * must not block (it holds up its own later events), and an exception it throws is logged and skipped.
   */
  public Subscription subscribe(String prefix, Consumer<DirectoryEvent> listener) {
    settings.checkName("prefix", prefix, true);
    if (listener == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "listener must not be null (prefix '" + prefix + "')");
    Object stop = new Object();
    ActorRef<Object> ref = system.systemActorOf(Behaviors.setup(ctx -> Behaviors.receive(Object.class)
            .onMessage(DirectoryEvent.class, e -> {
              try {
                listener.accept(e);
              } catch (RuntimeException ex) {
                ctx.getLog().warn("directory listener for prefix '{}' threw on {}: {}", prefix, e, ex.toString());
              }
              return Behaviors.same();
            })
            .onMessageEquals(stop, Behaviors::stopped)
            .build()),
        "mori4j-directory-listener-" + LISTENERS.incrementAndGet(), Props.empty());
    ActorRef<DirectoryEvent> events = ref.narrow();
    actor.tell(new Subscribe(prefix, events));
    return () -> {
      actor.tell(new Unsubscribe(events));
      ref.tell(stop);
    };
  }

  /** The directory actor, for application actors that use the {@link Command} protocol. */
  public ActorRef<Command> actorRef() {
    return actor;
  }

  /** The settings this directory was started with. */
  public DirectorySettings settings() {
    return settings;
  }

  /** The key of the engine whose memory this directory publishes. */
  public String engineKey() {
    return engineKey;
  }

  private <T> CompletionStage<T> ask(org.apache.pekko.japi.function.Function<ActorRef<StatusReply<T>>, Command> request, Duration limit,
                                     String what) {
    return AskPattern.<Command, T>askWithStatus(actor, request, limit, system.scheduler())
        .exceptionallyCompose(e -> failed(e, limit, what));
  }

  private <T> CompletionStage<T> failed(Throwable e, Duration limit, String what) {
    Throwable c = e;
    while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) c = c.getCause();
    if (c instanceof TimeoutException)
      // the actor always answers before this limit; silence means it is gone (its engine closed or its system stopped)
      c = new IoEngineException(StatusCode.ERR_TIMEOUT, what + ": the directory of engine '" + engineKey + "' did not answer within "
          + limit + " (stopped with its engine or ActorSystem?)", c);
    return CompletableFuture.failedStage(c);
  }
}
