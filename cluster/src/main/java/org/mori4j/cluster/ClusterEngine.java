package org.mori4j.cluster;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.pekko.Done;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.remote.FailureDetectorRegistry;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.IoEngineProtocol;
import org.mori4j.io.StatusCode;

/**
 * Makes an engine embedded in a clustered ActorSystem a member of the cluster's transfer mesh: the actor
 * announces the engine under {@link #SERVICE_KEY} with the Receptionist, asks every other announced engine
 * for its {@link EngineDesc} and registers it with its own engine, and declares an engine lost
 * ({@link IoEngineProtocol.MarkPeerLost}) as soon as the Receptionist stops listing it as reachable (its
 * member left, was removed, or the failure detector marked it unreachable; an engine that only other members
 * cannot reach, while this member's own failure detector still hears it, is kept): from then on every transfer to
 * it, in flight or new, ends in {@code ERR_PEER_LOST} with a message naming the member and why, until it is
 * registered again (it becomes reachable again, or a restarted node with the same engine key joins). Start it
 * with {@link #start(IoEngine)} after the engine's backends exist, since an engine connects only the backends
 * it has when it registers a peer.
 *
 * <p>The node's own end: {@link #start(IoEngine)} also adds a {@link CoordinatedShutdown} task (phase
 * {@code service-stop}) that closes the engine, so that when this member is downed (by the Split Brain
 * Resolver on the minority side of a partition, for instance; {@code pekko.cluster.run-coordinated-shutdown-when-down}
 * is on by default), leaves, or its ActorSystem terminates, every transfer still in flight ends with a clear
 * status and the engine's sockets and threads are released before the system stops. An application that
 * turns coordinated shutdown off for downing must close the engine itself.
 *
 * <p>Why the Receptionist and not Distributed Data: the Receptionist already ties a registration to the
 * lifetime of the registering actor and its member, and its reachable listing follows the failure detector,
 * which is exactly the lifecycle an engine registration needs; a Distributed Data map would need its own
 * cleanup of entries whose owner died. The descriptor itself is not put in the registration (a
 * registration carries only an ActorRef): each peer is asked for it once with {@link DescribeEngine}.
 *
 * <p>Talking to the local engine goes through its actor protocol ({@link IoEngineProtocol}) with {@code ask},
 * never through the blocking {@link IoEngine} facade, so this actor's thread never waits for a handshake.
 */
public final class ClusterEngine extends AbstractBehavior<ClusterEngine.Command> {

  /** The Receptionist key under which every engine of the cluster is announced. */
  public static final ServiceKey<Command> SERVICE_KEY = ServiceKey.create(Command.class, "mori4j-engine");

  /** Every message this actor accepts, local or remote. */
  public interface Command {}

  /**
   * Asks an engine's cluster actor for its descriptor; sent between members, so it is serialized with CBOR.
   */
  public record DescribeEngine(ActorRef<EngineDescribed> replyTo) implements Command, CborSerializable {}

  /**
   * The answer to {@link DescribeEngine}: the descriptor in {@link EngineDesc#toBytes()} form, so that the
   * receiving side validates it with {@link EngineDesc#fromBytes(byte[])} exactly like any other descriptor
   * that arrives from outside the process.
   */
  public record EngineDescribed(byte[] descriptor) implements CborSerializable {}

  /**
   * Asks for the keys of the remote engines this actor has registered with its engine, for monitoring and
   * tests; local only.
   */
  public record GetRegisteredEngines(ActorRef<Set<String>> replyTo) implements Command {}

  private record ListingChanged(Receptionist.Listing listing) implements Command {}

  private record Described(ActorRef<Command> peer, EngineDesc desc, String failure) implements Command {}

  private record Registered(ActorRef<Command> peer, EngineDesc desc, String failure) implements Command {}

  private record Retry(ActorRef<Command> peer) implements Command {}

  private record MarkedLost(String key, String failure) implements Command {}

  /** Looks again at the peers held because only other members found them unreachable. */
  private enum Recheck implements Command { INSTANCE }

  /** Where a listed peer stands: its descriptor once known, and whether the local engine has registered it. */
  private static final class Peer {
    EngineDesc desc;
    boolean registered;
    boolean busy;
    /** Out of the reachable listing, but this member still hears it (see {@link #onListing}). */
    boolean held;
  }

  /** How often held peers are looked at again. */
  private static final Duration RECHECK = Duration.ofMillis(250);

  private final ActorRef<IoEngineProtocol.Command> engine;
  private final EngineDesc self;
  private final TimerScheduler<Command> timers;
  private final Duration askTimeout;
  private final Duration retryDelay;
  private final Map<ActorRef<Command>, Peer> peers = new HashMap<>();
  /** The last listing: reachable instances, and all of them. */
  private Set<ActorRef<Command>> listed = Set.of(), listedAll = Set.of();
  /** This member's own failure detector (the listing's reachability is the union of every member's). */
  private final FailureDetectorRegistry<Address> ownDetector;

  private ClusterEngine(ActorContext<Command> ctx, TimerScheduler<Command> timers, ActorRef<IoEngineProtocol.Command> engine,
                        EngineDesc self) {
    super(ctx);
    this.engine = engine;
    this.self = self;
    this.timers = timers;
    var conf = ctx.getSystem().settings().config().getConfig("mori4j.cluster");
    this.askTimeout = conf.getDuration("ask-timeout");
    this.retryDelay = conf.getDuration("retry-delay");
    this.ownDetector = Cluster.get(Adapter.toClassic(ctx.getSystem())).failureDetector();
    ctx.getSystem().receptionist().tell(Receptionist.register(SERVICE_KEY, ctx.getSelf()));
    ActorRef<Receptionist.Listing> adapter = ctx.messageAdapter(Receptionist.Listing.class, ListingChanged::new);
    ctx.getSystem().receptionist().tell(Receptionist.subscribe(SERVICE_KEY, adapter));
  }

  /**
   * The behavior for an application that spawns the actor itself: {@code engine} is the engine's actor and
   * {@code self} its descriptor (both from the {@link IoEngine} embedded in the same ActorSystem).
   */
  public static Behavior<Command> create(ActorRef<IoEngineProtocol.Command> engine, EngineDesc self) {
    return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> new ClusterEngine(ctx, timers, engine, self)));
  }

  /**
   * Starts the cluster actor for an engine embedded with {@code IoEngine.create(system, key, config)} in a
   * system whose provider is {@code cluster}; it stops with that system. Fetches the descriptor on the
   * caller's thread (a blocking facade call) before the actor exists.
   */
  public static ActorRef<Command> start(IoEngine engine) {
    var system = engine.actorSystem();
    String provider = system.settings().config().getString("pekko.actor.provider");
    if (!"cluster".equals(provider) && !provider.endsWith("ClusterActorRefProvider"))
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS,
          "engine '" + engine.key() + "' runs in ActorSystem '" + system.name() + "' with provider '" + provider
              + "'; ClusterEngine needs pekko.actor.provider = cluster");
    String name = "mori4j-cluster-" + java.net.URLEncoder.encode(engine.key(), java.nio.charset.StandardCharsets.UTF_8);
    // Pekko's reference.conf leaves downing off, and it wins over ours when Pekko's jars come first on the class
    // path; without downing a crashed member stays unreachable forever and its directory entries are never dropped.
    if (system.settings().config().getString("pekko.cluster.downing-provider-class").isBlank())
      system.log().warn("ActorSystem '{}' has no downing provider (pekko.cluster.downing-provider-class is empty): "
          + "engines of unreachable members are marked lost, but a crashed member is never removed from the cluster. "
          + "Build the configuration with ClusterSettings, or set the key in application.conf "
          + "(org.apache.pekko.cluster.sbr.SplitBrainResolverProvider)", system.name());
    ActorRef<Command> ref = system.systemActorOf(create(engine.actorRef(), engine.engineDesc()), name, org.apache.pekko.actor.typed.Props.empty());
    closeOnShutdown(engine);
    return ref;
  }

  /**
   * Closes the engine in the {@code service-stop} phase of the system's coordinated shutdown, which runs when
   * this member is downed or leaves and when the system terminates: in-flight transfers end (closed engine)
   * and the backends release their sockets and threads while the system can still answer the engine actor.
   */
  private static void closeOnShutdown(IoEngine engine) {
    var system = engine.actorSystem();
    CoordinatedShutdown cs = CoordinatedShutdown.get(system);
    cs.addTask(CoordinatedShutdown.PhaseServiceStop(), "mori4j-close-engine", () -> CompletableFuture.runAsync(() -> {
      String why = cs.getShutdownReason().map(Object::toString).orElse("unknown");
      system.log().info("engine '{}' closes: coordinated shutdown of {} ({})", engine.key(), system.address(), why);
      engine.close();
    }, r -> {
      // IoEngine.close() blocks until the engine actor has stopped its backends: not on a dispatcher thread
      Thread t = new Thread(r, "mori4j-close-" + engine.key());
      t.setDaemon(true);
      t.start();
    }).thenApply(v -> Done.getInstance()));
  }

  @Override
  public org.apache.pekko.actor.typed.javadsl.Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(DescribeEngine.class, m -> {
          m.replyTo().tell(new EngineDescribed(self.toBytes()));
          return this;
        })
        .onMessage(ListingChanged.class, this::onListing)
        .onMessage(Recheck.class, m -> {
          dropUnlisted();
          return this;
        })
        .onMessage(Described.class, this::onDescribed)
        .onMessage(Registered.class, this::onRegistered)
        .onMessage(Retry.class, m -> {
          Peer p = peers.get(m.peer());
          if (p != null && !p.registered && !p.busy) advance(m.peer(), p);
          return this;
        })
        .onMessage(MarkedLost.class, m -> {
          if (m.failure() != null) getContext().getLog().warn("engine '{}': declaring '{}' lost failed: {}", self.key(), m.key(), m.failure());
          return this;
        })
        .onMessage(GetRegisteredEngines.class, m -> {
          Set<String> keys = new TreeSet<>();
          for (Peer p : peers.values()) if (p.registered) keys.add(p.desc.key());
          m.replyTo().tell(Set.copyOf(keys));
          return this;
        })
        .build();
  }

  private Behavior<Command> onListing(ListingChanged m) {
    listed = m.listing().getServiceInstances(SERVICE_KEY);
    listedAll = m.listing().getAllServiceInstances(SERVICE_KEY);
    for (ActorRef<Command> ref : listed) {
      if (ref.equals(getContext().getSelf())) continue;
      Peer known = peers.get(ref);
      if (known != null) {
        known.held = false; // reachable again for everyone: it never stopped being registered here
        continue;
      }
      Peer p = new Peer();
      peers.put(ref, p);
      advance(ref, p);
    }
    dropUnlisted();
    return this;
  }

  /**
   * Declares lost the peers that left the reachable listing (so transfers to them fail with ERR_PEER_LOST at
   * once instead of after the TCP peer timeout; they are registered again if they come back), except one that
   * is still a member and that this member's own failure detector still hears: the listing counts a member
   * unreachable as soon as any member cannot reach it, and a member that returns from a partition brings its
   * stale view of everyone else. Such a peer is held, still registered, and looked at again every
   * {@link #RECHECK} until it is listed again, leaves, or this member stops hearing it too.
   */
  private void dropUnlisted() {
    boolean anyHeld = false;
    for (var it = peers.entrySet().iterator(); it.hasNext(); ) {
      var e = it.next();
      if (listed.contains(e.getKey())) continue;
      Peer p = e.getValue();
      var address = e.getKey().path().address();
      if (p.registered && listedAll.contains(e.getKey()) && ownDetector.isMonitoring(address) && ownDetector.isAvailable(address)) {
        if (!p.held) getContext().getLog().info("engine '{}' keeps engine '{}': another member finds {} unreachable, this one still hears it",
            self.key(), p.desc.key(), address);
        p.held = true;
        anyHeld = true;
        continue;
      }
      it.remove();
      timers.cancel(e.getKey());
      // a registration still in flight is declared lost again when its answer finds the peer gone (onRegistered);
      // a peer whose descriptor never came has no key the engine could know
      if (p.desc != null) markLost(p.desc, whyGone(e.getKey(), listedAll));
    }
    if (anyHeld) {
      if (!timers.isTimerActive(Recheck.INSTANCE)) timers.startTimerWithFixedDelay(Recheck.INSTANCE, Recheck.INSTANCE, RECHECK);
    } else {
      timers.cancel(Recheck.INSTANCE);
    }
  }

  /** Why a peer left the reachable listing, in words that name its member. */
  private String whyGone(ActorRef<Command> peer, Set<ActorRef<Command>> stillListed) {
    var address = peer.path().address();
    if (stillListed.contains(peer)) return "member " + address + " unreachable";
    for (var member : org.apache.pekko.cluster.typed.Cluster.get(getContext().getSystem()).state().getMembers()) {
      if (member.address().equals(address)) return "member " + address + " is " + member.status() + " (left the cluster or was downed)";
    }
    return "member " + address + " was removed from the cluster";
  }

  /** Takes the peer's next step: learn its descriptor, then register it. */
  private void advance(ActorRef<Command> ref, Peer p) {
    p.busy = true;
    if (p.desc == null) {
      getContext().ask(EngineDescribed.class, ref, askTimeout, DescribeEngine::new, (r, err) -> {
        if (err != null) return new Described(ref, null, err.toString());
        try {
          return new Described(ref, EngineDesc.fromBytes(r.descriptor()), null);
        } catch (IllegalArgumentException bad) {
          return new Described(ref, null, "malformed descriptor: " + bad.getMessage());
        }
      });
    } else {
      EngineDesc d = p.desc;
      getContext().ask(castReply(), engine, askTimeout, r -> new IoEngineProtocol.RegisterRemoteEngine(d, r),
          (r, err) -> new Registered(ref, d, err != null ? err.toString() : r.isError() ? r.getError().getMessage() : null));
    }
  }

  @SuppressWarnings("unchecked")
  private static Class<StatusReply<Done>> castReply() {
    return (Class<StatusReply<Done>>) (Class<?>) StatusReply.class;
  }

  private Behavior<Command> onDescribed(Described m) {
    Peer p = peers.get(m.peer());
    if (p == null) return this;
    p.busy = false;
    if (m.failure() != null) return retryLater(m.peer(), "cannot get the descriptor of " + m.peer().path() + ": " + m.failure());
    p.desc = m.desc();
    advance(m.peer(), p);
    return this;
  }

  private Behavior<Command> onRegistered(Registered m) {
    Peer p = peers.get(m.peer());
    if (m.failure() != null) {
      if (p == null) return this;
      p.busy = false;
      return retryLater(m.peer(), "cannot register engine '" + m.desc().key() + "': " + m.failure());
    }
    if (p == null) {
      // the peer disappeared while its handshake ran, and the registration cleared its loss: declare it again
      markLost(m.desc(), "member " + m.peer().path().address() + " dropped out of the cluster while it was being registered");
      return this;
    }
    p.busy = false;
    p.registered = true;
    getContext().getLog().info("engine '{}' registered engine '{}' ({}:{})", self.key(), m.desc().key(), m.desc().host(), m.desc().port());
    return this;
  }

  private Behavior<Command> retryLater(ActorRef<Command> peer, String why) {
    getContext().getLog().warn("engine '{}': {}; retrying in {}", self.key(), why, retryDelay);
    timers.startSingleTimer(peer, new Retry(peer), retryDelay);
    return this;
  }

  private void markLost(EngineDesc desc, String why) {
    getContext().getLog().info("engine '{}' declares engine '{}' lost: {}", self.key(), desc.key(), why);
    getContext().ask(castReply(), engine, askTimeout, r -> new IoEngineProtocol.MarkPeerLost(desc.key(), desc.incarnation(), why, r),
        (r, err) -> new MarkedLost(desc.key(), err != null ? err.toString() : r.isError() ? r.getError().getMessage() : null));
  }
}
