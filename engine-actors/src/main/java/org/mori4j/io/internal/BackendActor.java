package org.mori4j.io.internal;

import java.time.Duration;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.pattern.StatusReply;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngineProtocol;
import org.mori4j.io.internal.metrics.EngineMeters;
import org.mori4j.io.internal.metrics.EngineMeters.Change;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.CompletionSource;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.TransferBackend;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.TransportException;

/**
 * Owns one backend's life on the backend dispatcher, where blocking control work is allowed: start (bind,
 * open devices), memory registration, the handshake with the peer backend through the remote engine
 * actor, connect, disconnect and close. It spawns one {@link CompletionPollerActor} per completion source
 * of its backend. Transfers do not pass through it.
 */
public final class BackendActor extends AbstractBehavior<BackendActor.Command> {
  public sealed interface Command permits Start, Register, RegisterAll, Deregister, Connect, HandshakeDone, AcceptHandshake, Disconnect, Stop {}

  public record Start(ActorRef<StatusReply<Done>> replyTo) implements Command {}

  public record Register(LocalRegion region, ActorRef<StatusReply<byte[]>> replyTo) implements Command {}

  /**
   * Registers {@code regions} in order, {@code parents[i]} (null: none) being a registered region that
   * contains region {@code i} (then {@link TransferBackend#registerView} is used); the reply holds one
   * descriptor blob per region, or the first failure, after the regions registered by this call were dropped.
   */
  public record RegisterAll(java.util.List<LocalRegion> regions, LocalRegion[] parents,
                            ActorRef<StatusReply<java.util.List<byte[]>>> replyTo) implements Command {}

  public record Deregister(LocalRegion region) implements Command {}

  /** Connects to {@code peerKey}; the incarnations go into the handshake (see {@link EngineMessages.BackendHandshake}). */
  public record Connect(String peerKey, ActorRef<IoEngineProtocol.Command> remoteEngine, long ownIncarnation, long peerIncarnation,
                        ActorRef<StatusReply<Object>> replyTo)
      implements Command {}

  /**
   * The end of handshake {@code attempt}: its reply, its failure (no answer within handshake-timeout), or
   * {@code gone}: the peer's process was found gone before either ({@link PeerLiveness}). The first of these wins.
   */
  record HandshakeDone(long attempt, String peerKey, EngineMessages.HandshakeReply reply, Throwable failure, String gone,
                       ActorRef<StatusReply<Object>> replyTo) implements Command {}

  public record AcceptHandshake(String fromKey, byte[] request, ActorRef<EngineMessages.HandshakeReply> replyTo)
      implements Command {}

  /** Drops the peer; what is in flight to it fails with {@code error}. */
  public record Disconnect(String peerKey, org.mori4j.transport.TransportError error, String reason) implements Command {}

  public record Stop(ActorRef<Done> replyTo) implements Command {}

  private final String engineKey;
  private final BackendType type;
  private final TransferBackend backend;
  private final EngineSettings settings;
  private final ActorRef<IoEngineProtocol.Command> engine;
  /** Where the backend hands ops it cannot carry after all. */
  private final TransferPath path;
  /** Probes a peer whose handshake is unanswered, so that one whose process is gone fails the connect fast. */
  private final PeerLiveness liveness;
  /** Handshakes not yet ended (reply, timeout or found gone: the first ends it, the others are dropped). */
  private final java.util.Set<Long> handshakes = new java.util.HashSet<>();
  private long nextHandshake;

  /** {@code liveness}: the engine's probe of silent peers, shared with its region confirmations ({@link XgmiControl}). */
  public static Behavior<Command> create(String engineKey, BackendType type, TransferBackend backend,
                                         EngineSettings settings, ActorRef<IoEngineProtocol.Command> engine, TransferPath path,
                                         PeerLiveness liveness) {
    return Behaviors.setup(ctx -> new BackendActor(ctx, engineKey, type, backend, settings, engine, path, liveness));
  }

  private BackendActor(ActorContext<Command> ctx, String engineKey, BackendType type, TransferBackend backend,
                       EngineSettings settings, ActorRef<IoEngineProtocol.Command> engine, TransferPath path, PeerLiveness liveness) {
    super(ctx);
    this.path = path;
    this.engineKey = engineKey;
    this.type = type;
    this.backend = backend;
    this.settings = settings;
    this.engine = engine;
    this.liveness = liveness;
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Start.class, this::start)
        .onMessage(Register.class, this::register)
        .onMessage(RegisterAll.class, this::registerAll)
        .onMessage(Deregister.class, m -> {
          backend.deregisterMemory(m.region());
          path.meters().deregistered(type);
          return this;
        })
        .onMessage(Connect.class, this::connect)
        .onMessage(HandshakeDone.class, this::handshakeDone)
        .onMessage(AcceptHandshake.class, this::acceptHandshake)
        .onMessage(Disconnect.class, m -> {
          if (backend.connected(m.peerKey())) path.meters().connection(type, m.peerKey(), Change.DISCONNECTED, m.reason());
          backend.disconnect(m.peerKey(), m.error(), m.reason());
          return this;
        })
        .onMessage(Stop.class, m -> {
          backend.close();
          m.replyTo().tell(Done.getInstance());
          return Behaviors.stopped();
        })
        .build();
  }

  private Behavior<Command> start(Start m) {
    try {
      backend.start(new BackendListener() {
        @Override
        public void peerLost(String peerKey, TransportError error, String reason) {
          path.meters().connection(type, peerKey, Change.LOST, reason);
          engine.tell(new EngineMessages.PeerLost(peerKey, type, reason));
        }

        @Override
        public boolean reroute(TransferOp op, String why) {
          return path.reroute(type, op, why);
        }

        @Override
        public void reconnect(String peerKey, String why) {
          path.meters().connection(type, peerKey, Change.RECONNECT, why);
          engine.tell(new EngineMessages.Reconnect(peerKey, type, why));
        }

        @Override
        public void kernelLaunched() {
          path.meters().kernelLaunched();
        }
      });
    } catch (RuntimeException e) {
      m.replyTo().tell(StatusReply.error(e));
      return Behaviors.stopped();
    }
    path.meters().backendStarted(type);
    int i = 0;
    for (CompletionSource s : backend.completionSources()) {
      getContext().spawn(CompletionPollerActor.create(s, settings), "poller-" + i++,
          DispatcherSelector.fromConfig("mori4j.dispatchers.poller"));
    }
    m.replyTo().tell(StatusReply.success(Done.getInstance()));
    return this;
  }

  private Behavior<Command> register(Register m) {
    EngineMeters.Registration timing = path.meters().beginRegistration(type, m.region().id(), m.region().gpu(), m.region().size());
    try {
      byte[] blob = backend.registerMemory(m.region());
      timing.end(null);
      m.replyTo().tell(StatusReply.success(blob));
    } catch (RuntimeException e) {
      timing.end(String.valueOf(e.getMessage()));
      m.replyTo().tell(StatusReply.error(e));
    }
    return this;
  }

  private Behavior<Command> registerAll(RegisterAll m) {
    java.util.List<byte[]> blobs = new java.util.ArrayList<>(m.regions().size());
    for (int i = 0; i < m.regions().size(); i++) {
      LocalRegion r = m.regions().get(i);
      LocalRegion parent = m.parents()[i];
      EngineMeters.Registration timing = path.meters().beginRegistration(type, r.id(), r.gpu(), r.size());
      try {
        blobs.add(parent == null ? backend.registerMemory(r) : backend.registerView(r, parent));
        timing.end(null);
      } catch (RuntimeException e) {
        timing.end(String.valueOf(e.getMessage()));
        for (int j = 0; j < i; j++) backend.deregisterMemory(m.regions().get(j));
        m.replyTo().tell(StatusReply.error(new TransportException(e instanceof TransportException te ? te.error() : TransportError.BAD_STATE,
            (m.regions().size() > 1 ? "region " + i + " (" + r + "): " : "") + e.getMessage())));
        return this;
      }
    }
    m.replyTo().tell(StatusReply.success(blobs));
    return this;
  }

  private Behavior<Command> connect(Connect m) {
    byte[] request = backend.handshakeRequest(m.peerKey());
    Duration timeout = settings.handshakeTimeout();
    long attempt = ++nextHandshake;
    handshakes.add(attempt);
    java.util.concurrent.CompletableFuture<EngineMessages.HandshakeReply> answer = org.apache.pekko.actor.typed.javadsl.AskPattern
        .<IoEngineProtocol.Command, EngineMessages.HandshakeReply>ask(m.remoteEngine(),
            ref -> new EngineMessages.BackendHandshake(engineKey, type, request, ref, m.ownIncarnation(), m.peerIncarnation()),
            timeout, getContext().getSystem().scheduler())
        .toCompletableFuture();
    getContext().pipeToSelf(answer, (reply, failure) -> new HandshakeDone(attempt, m.peerKey(), reply, failure, null, m.replyTo()));
    // a peer whose process is gone never answers; its refused control port says so long before the timeout
    ActorRef<Command> self = getContext().getSelf();
    liveness.watch(m.remoteEngine().path().address(), answer,
        why -> self.tell(new HandshakeDone(attempt, m.peerKey(), null, null, why, m.replyTo())));
    return this;
  }

  private Behavior<Command> handshakeDone(HandshakeDone m) {
    if (!handshakes.remove(m.attempt())) return this; // ended already (the peer was found gone before its timeout)
    if (m.gone() != null) {
      path.meters().connection(type, m.peerKey(), Change.FAILED, "peer gone");
      m.replyTo().tell(StatusReply.error("engine '" + m.peerKey() + "' is gone: " + m.gone() + "; its " + type
          + " handshake was not answered and is not waited for (handshake-timeout " + settings.handshakeTimeout().toMillis() + " ms)"));
    } else if (m.failure() != null) {
      path.meters().connection(type, m.peerKey(), Change.FAILED, "no handshake answer");
      m.replyTo().tell(StatusReply.error("no handshake answer from engine '" + m.peerKey() + "' within "
          + settings.handshakeTimeout().toMillis() + " ms (" + m.failure().getMessage() + ")"));
    } else if (m.reply().error() != null) {
      path.meters().connection(type, m.peerKey(), Change.FAILED, m.reply().error());
      m.replyTo().tell(StatusReply.error("engine '" + m.peerKey() + "' refused the " + type + " handshake: " + m.reply().error()));
    } else {
      try {
        Object handle = backend.connect(m.peerKey(), m.reply().data());
        path.meters().connection(type, m.peerKey(), Change.CONNECTED, null);
        m.replyTo().tell(StatusReply.success(handle));
      } catch (TransportException e) {
        path.meters().connection(type, m.peerKey(), Change.FAILED, e.getMessage());
        m.replyTo().tell(StatusReply.error(e.getMessage()));
      }
    }
    return this;
  }

  private Behavior<Command> acceptHandshake(AcceptHandshake m) {
    try {
      m.replyTo().tell(new EngineMessages.HandshakeReply(backend.acceptHandshake(m.fromKey(), m.request()), null));
    } catch (TransportException e) {
      m.replyTo().tell(new EngineMessages.HandshakeReply(new byte[0], e.getMessage()));
    }
    return this;
  }
}
