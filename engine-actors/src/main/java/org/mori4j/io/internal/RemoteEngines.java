package org.mori4j.io.internal;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.pattern.StatusReply;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.IoEngineProtocol.Command;
import org.mori4j.io.IoEngineProtocol.DeregisterRemoteEngine;
import org.mori4j.io.IoEngineProtocol.MarkPeerLost;
import org.mori4j.io.IoEngineProtocol.RegisterRemoteEngine;
import org.mori4j.io.StatusCode;
import org.mori4j.transport.TransportError;

/**
 * The engine actor's remote engines: registering and deregistering them (connecting every backend both
 * sides share, with fallback when a faster path cannot connect), the handshakes other engines' backends
 * send here, peer incarnations (a restarted engine replaces its old self at once), and peer loss (declared
 * by the caller, or a backend's path failing). It owns the registered peers and the bounded memory of lost
 * ones that the {@link Routes} snapshot carries. Runs on the engine actor's thread only.
 */
final class RemoteEngines {
  /** Ends the engine's sessions that {@code which} selects with {@code code} and {@code reason}. */
  @FunctionalInterface
  interface SessionInvalidation {
    void invalidate(Predicate<EngineMessages.OpenSession> which, StatusCode code, String reason);
  }

  private final ActorContext<Command> ctx;
  private final String engineKey;
  private final EngineSettings settings;
  private final TransferPath path;
  private final Map<BackendType, Routes.Backend> backends;
  private final XgmiControl xgmi;
  private final PeerIncarnations incarnations;
  private final BooleanSupplier closed;
  private final Runnable publish;
  private final SessionInvalidation sessions;
  private final Map<String, Routes.Peer> peers = new HashMap<>();
  /** Engines declared lost (key to reason), oldest first, until registered again; bounded (see EngineSettings). */
  private final LinkedHashMap<String, String> lost;

  RemoteEngines(ActorContext<Command> ctx, String engineKey, EngineSettings settings, TransferPath path,
                Map<BackendType, Routes.Backend> backends, XgmiControl xgmi, PeerIncarnations incarnations,
                BooleanSupplier closed, Runnable publish, SessionInvalidation sessions) {
    this.ctx = ctx;
    this.engineKey = engineKey;
    this.settings = settings;
    this.path = path;
    this.backends = backends;
    this.xgmi = xgmi;
    this.incarnations = incarnations;
    this.closed = closed;
    this.publish = publish;
    this.sessions = sessions;
    int remembered = settings.lostPeersRemembered();
    this.lost = new LinkedHashMap<>() {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
        return size() > remembered;
      }
    };
  }

  /** The registered peers, for the {@link Routes} snapshot. */
  Map<String, Routes.Peer> peers() {
    return peers;
  }

  /** The engines declared lost (key to reason), for the {@link Routes} snapshot. */
  Map<String, String> lost() {
    return lost;
  }

  /** A backend of {@code type} was removed: no peer keeps a connection handle of it. */
  void dropBackend(BackendType type) {
    peers.replaceAll((k, p) -> {
      Map<BackendType, Object> h = new EnumMap<>(BackendType.class);
      h.putAll(p.handles());
      h.remove(type);
      return new Routes.Peer(p.desc(), Map.copyOf(h));
    });
  }

  private static void fail(ActorRef<StatusReply<Done>> replyTo, StatusCode code, String message) {
    replyTo.tell(StatusReply.error(new IoEngineException(code, message)));
  }

  void register(RegisterRemoteEngine m) {
    if (closed.getAsBoolean()) {
      fail(m.replyTo(), StatusCode.ERR_BAD_STATE, "engine '" + engineKey + "' is closed");
      return;
    }
    EngineDesc d = m.desc();
    if (d == null) {
      fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "remote engine descriptor must not be null");
      return;
    }
    if (d.key().equals(engineKey)) {
      fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "an engine cannot register itself as remote (key '" + d.key() + "')");
      return;
    }
    Routes.Peer found = peers.get(d.key());
    // a descriptor that states no incarnation is not a restart: it is refused below if it differs
    boolean restarted = found != null && d.incarnation() != 0 && found.desc().incarnation() != d.incarnation();
    // the engine was restarted under the same key: its new self replaces the old at once, without waiting for a timeout
    if (restarted) dropReplaced(found.desc(), d);
    Routes.Peer existing = restarted ? null : found;
    if (existing != null && !existing.desc().equals(d)) {
      fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "a different engine with key '" + d.key() + "' is already registered; deregister it first");
      return;
    }
    ActorRef<Command> remote;
    try {
      remote = ActorRefResolver.get(ctx.getSystem()).resolveActorRef(d.controlPath());
    } catch (RuntimeException e) {
      fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "cannot resolve the control address '" + d.controlPath() + "' of engine '" + d.key() + "': " + e.getMessage());
      return;
    }
    List<BackendType> common = new ArrayList<>();
    for (BackendType t : backends.keySet()) {
      if (!d.backends().contains(t)) continue;
      if (existing != null && existing.handles().containsKey(t) && backends.get(t).backend().connected(d.key())) continue;
      if (!backends.get(t).backend().reaches(d.backendData().get(t))) {
        // XGMI and an engine on another host: nothing to connect; the other backends carry its transfers
        ctx.getLog().info("engine '{}': the {} backend cannot reach engine '{}' (another host); its transfers use {}", engineKey, t,
            d.key(), backends.keySet().stream().filter(o -> o != t && d.backends().contains(o)).toList());
        continue;
      }
      common.add(t);
    }
    Map<BackendType, CompletableFuture<StatusReply<Object>>> asks = new EnumMap<>(BackendType.class);
    for (BackendType t : common) {
      asks.put(t, AskPattern.<BackendActor.Command, StatusReply<Object>>ask(backends.get(t).actor(),
          r -> new BackendActor.Connect(d.key(), remote, incarnations.own(), d.incarnation(), r), settings.askTimeout(),
          ctx.getSystem().scheduler())
          .toCompletableFuture());
    }
    if (common.isEmpty() && existing == null)
      ctx.getLog().warn("engine '{}' shares no backend with engine '{}' (it has {}, we have {}); transfers to it will fail",
          d.key(), engineKey, d.backends(), backends.keySet());
    CompletableFuture<Void> all = CompletableFuture.allOf(asks.values().toArray(CompletableFuture[]::new));
    ctx.pipeToSelf(all, (ok, err) -> {
      Map<BackendType, Object> handles = new EnumMap<>(BackendType.class);
      if (existing != null) handles.putAll(existing.handles());
      StringBuilder failures = new StringBuilder();
      Map<BackendType, String> faster = new EnumMap<>(BackendType.class);
      asks.forEach((t, f) -> {
        StatusReply<Object> r = f.isCompletedExceptionally() ? null : f.join();
        String why = r == null ? "no answer from the backend" : r.isSuccess() ? null : r.getError().getMessage();
        path.explainer().connectResult(d.key(), t, why);
        if (why == null) handles.put(t, r.getValue());
        else if (t != BackendType.TCP) faster.put(t, why);
        else failures.append(failures.isEmpty() ? "" : "; ").append(t).append(": ").append(why);
      });
      // XGMI and RDMA are faster paths for transfers TCP carries too: their failure to connect fails the registration
      // only when nothing else connected; otherwise the pair falls back, said once here
      boolean nothingElse = handles.isEmpty() && failures.isEmpty();
      faster.forEach((t, why) -> {
        if (!nothingElse) path.meters().fallback(t, d.key(), why);
        if (nothingElse) failures.append(failures.isEmpty() ? "" : "; ").append(t).append(": ").append(why);
        else ctx.getLog().warn("engine '{}': {} cannot connect to engine '{}' ({}); its transfers use {}", engineKey, t, d.key(),
            why, handles.keySet());
      });
      return new EngineMessages.RemoteConnected(d, handles, failures.isEmpty() ? null : failures.toString(), m.replyTo());
    });
  }

  void connected(EngineMessages.RemoteConnected m) {
    if (m.failure() != null) {
      for (BackendType t : m.handles().keySet()) {
        Routes.Backend b = backends.get(t);
        if (b != null) b.actor().tell(new BackendActor.Disconnect(m.desc().key(), TransportError.BAD_STATE, "registration failed"));
      }
      fail(m.replyTo(), StatusCode.ERR_TRANSPORT, "cannot reach engine '" + m.desc().key() + "': " + m.failure());
      return;
    }
    peers.put(m.desc().key(), new Routes.Peer(m.desc(), Map.copyOf(m.handles())));
    // a registration that succeeds ends a loss: the engine (a restart, or a member that became reachable again) is back
    lost.remove(m.desc().key());
    publish.run();
    m.replyTo().tell(StatusReply.success(Done.getInstance()));
  }

  /**
   * Drops {@code old}, replaced by {@code now} (same key, another incarnation): its transfers in flight and its
   * sessions end with ERR_PEER_LOST naming both incarnations, and every backend disconnects it before the
   * registration of {@code now} connects them again (the backend actors take the two messages in that order).
   */
  private void dropReplaced(EngineDesc old, EngineDesc now) {
    String key = old.key();
    String message = PeerIncarnations.replaced(key, old.incarnation(), now.incarnation());
    ctx.getLog().warn("engine '{}': {}; the old one's transfers and sessions end with ERR_PEER_LOST", engineKey, message);
    peers.remove(key);
    publish.run();
    xgmi.forgetImporter(key);
    sessions.invalidate(s -> s.peerKey().equals(key), StatusCode.ERR_PEER_LOST, message);
    for (Routes.Backend b : backends.values()) b.actor().tell(new BackendActor.Disconnect(key, TransportError.PEER_LOST, message));
  }

  void deregister(DeregisterRemoteEngine m) {
    String key = m.desc() == null ? null : m.desc().key();
    if (key == null || peers.remove(key) == null) {
      fail(m.replyTo(), StatusCode.ERR_NOT_FOUND, "engine '" + key + "' is not registered with engine '" + engineKey + "'");
      return;
    }
    publish.run();
    xgmi.forgetImporter(key);
    sessions.invalidate(s -> s.peerKey().equals(key), StatusCode.ERR_BAD_STATE, "engine '" + key + "' was deregistered");
    for (Routes.Backend b : backends.values())
      b.actor().tell(new BackendActor.Disconnect(key, TransportError.BAD_STATE, "engine '" + key + "' was deregistered"));
    m.replyTo().tell(StatusReply.success(Done.getInstance()));
  }

  /**
   * Drops a peer like a deregistration, but as a failure: its transfers in flight and its sessions end with
   * ERR_PEER_LOST, and the key is remembered so that new transfers to it say why they fail.
   */
  void markLost(MarkPeerLost m) {
    if (closed.getAsBoolean()) {
      fail(m.replyTo(), StatusCode.ERR_BAD_STATE, "engine '" + engineKey + "' is closed");
      return;
    }
    String key = m.engineKey();
    if (key == null || key.isEmpty()) {
      fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "engineKey must not be null or empty: '" + key + "'");
      return;
    }
    if (key.equals(engineKey)) {
      fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "an engine cannot declare itself lost (key '" + key + "')");
      return;
    }
    String reason = m.reason() == null || m.reason().isBlank() ? "no reason given" : m.reason();
    declareLost(key, m.incarnation(), reason, false);
    m.replyTo().tell(StatusReply.success(Done.getInstance()));
  }

  /**
   * Drops {@code key} as lost (see {@link #markLost}) unless a successor of incarnation {@code incarnation} (0: any)
   * is registered; {@code told}: the engine said so itself while closing (logged as news, not as a failure).
   */
  private void declareLost(String key, long incarnation, String reason, boolean told) {
    Routes.Peer current = peers.get(key);
    if (incarnation != 0 && current != null && current.desc().incarnation() != incarnation) {
      // the loss of an old incarnation noticed after its successor was registered: the successor stays
      ctx.getLog().info("engine '{}' keeps engine '{}' (incarnation {}): the loss of incarnation {} came after it ({})", engineKey, key,
          EngineDesc.incarnationText(current.desc().incarnation()), EngineDesc.incarnationText(incarnation), reason);
      return;
    }
    boolean wasRegistered = peers.remove(key) != null;
    lost.remove(key); // the newest loss goes to the young end of the bounded map
    lost.put(key, reason);
    publish.run();
    if (told) ctx.getLog().info("engine '{}': {}; its transfers and sessions here end with ERR_PEER_LOST", engineKey, reason);
    else ctx.getLog().warn("engine '{}' declares engine '{}' lost{}: {}", engineKey, key, wasRegistered ? "" : " (it was not registered)", reason);
    String message = "engine '" + key + "' was lost: " + reason;
    xgmi.forgetImporter(key);
    sessions.invalidate(s -> s.peerKey().equals(key), StatusCode.ERR_PEER_LOST, message);
    for (Routes.Backend b : backends.values()) b.actor().tell(new BackendActor.Disconnect(key, TransportError.PEER_LOST, message));
  }

  /**
   * On close (before any backend stops): tells every registered engine and {@code others} (key to engine actor: the
   * engines that confirmed this one's memory) that this engine is closing. Without it, an engine whose confirmation
   * of a region reaches this one after its actor stopped waits the whole ask timeout for an answer that never comes,
   * and so do the transfers behind it: there is no remote death watch outside Pekko Cluster.
   */
  void tellClosing(Map<String, ActorRef<Command>> others, long incarnation) {
    Map<String, ActorRef<Command>> to = new HashMap<>(others);
    ActorRefResolver resolver = ActorRefResolver.get(ctx.getSystem());
    peers.forEach((key, p) -> {
      if (to.containsKey(key)) return;
      try {
        to.put(key, resolver.resolveActorRef(p.desc().controlPath()));
      } catch (RuntimeException e) {
        ctx.getLog().debug("engine '{}': cannot tell engine '{}' that it closes: {}", engineKey, key, e.toString());
      }
    });
    EngineMessages.PeerClosing notice = new EngineMessages.PeerClosing(engineKey, incarnation);
    to.values().forEach(r -> r.tell(notice));
  }

  /** Another engine said it is closing: it is lost from now on, as if declared lost, until it registers again. */
  void peerClosing(EngineMessages.PeerClosing m) {
    String key = m.engineKey();
    if (closed.getAsBoolean() || key == null || key.isEmpty() || key.equals(engineKey)) return;
    if (!peers.containsKey(key) && lost.containsKey(key)) return;
    declareLost(key, m.incarnation(), "engine '" + key + "' is closing (it said so)", true);
  }

  /** Another engine's backend asks this engine's backend of the same type to accept a connection. */
  void handshake(EngineMessages.BackendHandshake m) {
    Routes.Backend b = backends.get(m.type());
    boolean isClosed = closed.getAsBoolean();
    if (isClosed || b == null) {
      m.replyTo().tell(new EngineMessages.HandshakeReply(new byte[0], "engine '" + engineKey + "' has no " + m.type() + " backend" + (isClosed ? " (closed)" : "")));
      return;
    }
    String refused = incarnations.refusal(engineKey, m.toIncarnation());
    if (refused != null) {
      m.replyTo().tell(new EngineMessages.HandshakeReply(new byte[0], refused));
      return;
    }
    long old = incarnations.initiatorSeen(m.fromKey(), m.fromIncarnation());
    if (old != 0) {
      // the initiator was restarted: its uids start again, so what its old self left must not answer the new one's pops
      ctx.getLog().info("engine '{}': {}; its inbound notifications are dropped", engineKey,
          PeerIncarnations.replaced(m.fromKey(), old, m.fromIncarnation()));
      for (Routes.Backend rb : backends.values()) rb.backend().inbound().forget(m.fromKey());
    }
    b.actor().tell(new BackendActor.AcceptHandshake(m.fromKey(), m.request(), m.replyTo()));
  }

  void reconnect(EngineMessages.Reconnect m) {
    Routes.Peer p = peers.get(m.peerKey());
    if (closed.getAsBoolean() || p == null || lost.containsKey(m.peerKey())) return;
    ctx.getLog().info("engine '{}': connecting {} to engine '{}' again: {}", engineKey, m.type(), m.peerKey(), m.reason());
    // registering the same descriptor again connects exactly the backends that say they are not connected
    ctx.getSelf().tell(new RegisterRemoteEngine(p.desc(), ctx.getSystem().ignoreRef()));
  }

  /** A backend's path to a peer failed: the sessions with that peer end with ERR_PEER_LOST. */
  void pathLost(EngineMessages.PeerLost m) {
    if (!closed.getAsBoolean()) ctx.getLog().warn("engine '{}': {} path to engine '{}' lost: {}", engineKey, m.type(), m.peerKey(), m.reason());
    sessions.invalidate(s -> s.peerKey().equals(m.peerKey()), StatusCode.ERR_PEER_LOST, "engine '" + m.peerKey() + "' lost: " + m.reason());
  }
}
