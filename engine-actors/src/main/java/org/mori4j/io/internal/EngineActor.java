package org.mori4j.io.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.pattern.StatusReply;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.IoEngineProtocol.*;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TransferStatus;
import org.mori4j.transport.InboundNotifications;
import org.mori4j.transport.LongTable;
import org.mori4j.transport.TransferOp;

/**
 * The engine actor: owns the registrations, the remote engines, the backends and the sessions of one
 * engine, allocates ids, and publishes the {@link Routes} snapshot that the data path reads. Every change
 * goes through this actor, one message at a time, so the state needs no locks; blocking work is sent to
 * the backend actors and their results come back as messages. Its concerns live in classes it delegates to on
 * its own thread: {@link Registrations} (memory registration), {@link RemoteEngines} (remote engines, handshakes,
 * incarnations, peer loss) and {@link BackendLifecycle} (backends from creation to removal).
 */
public final class EngineActor extends AbstractBehavior<Command> {
  /** What the engine needs to describe itself. */
  public record Identity(String key, String nodeId, String host, int port, long pid) {}

  private final Identity id;
  private final EngineSettings settings;
  private final TransferPath path;
  private final EnumMap<BackendType, Routes.Backend> backends = new EnumMap<>(BackendType.class);
  private final LongTable<Routes.Local> locals = new LongTable<>();
  private final Map<String, MemoryDesc> published = new HashMap<>();
  private final Map<ActorRef<SessionActor.Command>, EngineMessages.OpenSession> sessions = new HashMap<>();
  private boolean closed;
  /** The engine's GPU runtime (selected on first need) and the staging its TCP backend uses for GPU memory. */
  private final GpuStaging gpu;
  /** XGMI's control traffic: confirming remote regions, revoking this engine's regions from their importers. */
  private final XgmiControl xgmi;
  /** This engine's incarnation and the ones its peers stated. */
  private final PeerIncarnations incarnations;
  /** Memory registration, single and bulk, with its range cache and timing. */
  private final Registrations registrations;
  /** Remote engines: registration, handshakes, incarnations, peer loss; owns the peers and the lost keys. */
  private final RemoteEngines remotes;
  /** Backends from creation to removal. */
  private final BackendLifecycle lifecycle;

  public static Behavior<Command> create(Identity id, EngineSettings settings, TransferPath path, String bindHost) {
    return Behaviors.setup(ctx -> new EngineActor(ctx, id, settings, path, bindHost));
  }

  private EngineActor(ActorContext<Command> ctx, Identity id, EngineSettings settings, TransferPath path, String bindHost) {
    super(ctx);
    this.id = id;
    this.settings = settings;
    this.path = path;
    this.gpu = new GpuStaging(settings.gpuRuntime(), settings.tcpGpuStagingChunk(), settings.tcpGpuStagingPrewarm(),
        settings.tcpGpuStagingTuning());
    this.xgmi = new XgmiControl(id.key(), ctx.getSystem(), ctx.getSelf(), path, settings.handshakeTimeout());
    this.incarnations = new PeerIncarnations(new java.security.SecureRandom(), settings.lostPeersRemembered());
    this.registrations = new Registrations(ctx, id.key(), settings, gpu, locals, backends, this::publish, () -> closed, path.registrationStats(), incarnations.own());
    this.remotes = new RemoteEngines(ctx, id.key(), settings, path, backends, xgmi, incarnations, () -> closed, this::publish,
        this::invalidateSessions);
    this.lifecycle = new BackendLifecycle(ctx, id.key(), settings, path, bindHost, gpu, xgmi, backends, locals, remotes,
        () -> closed, this::publish, this::invalidateSessions);
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(CreateBackend.class, m -> same(() -> lifecycle.create(m)))
        .onMessage(EngineMessages.BackendStarted.class, m -> same(() -> lifecycle.started(m)))
        .onMessage(RemoveBackend.class, m -> same(() -> lifecycle.remove(m)))
        .onMessage(EngineMessages.BackendRemoved.class, m -> {
          m.replyTo().tell(StatusReply.success(Done.getInstance()));
          return this;
        })
        .onMessage(RegisterRemoteEngine.class, m -> same(() -> remotes.register(m)))
        .onMessage(EngineMessages.RemoteConnected.class, m -> same(() -> remotes.connected(m)))
        .onMessage(DeregisterRemoteEngine.class, m -> same(() -> remotes.deregister(m)))
        .onMessage(MarkPeerLost.class, m -> same(() -> remotes.markLost(m)))
        .onMessage(EngineMessages.PeerClosing.class, m -> same(() -> remotes.peerClosing(m)))
        .onMessage(RegisterMemory.class, m -> {
          registrations.register(m);
          return this;
        })
        .onMessage(RegisterMemories.class, m -> {
          registrations.registerAll(m);
          return this;
        })
        .onMessage(Registrations.Step.class, m -> {
          registrations.handle(m);
          return this;
        })
        .onMessage(DeregisterMemory.class, m -> deregisterMemory(java.util.Arrays.asList(m.desc()), m.replyTo()))
        .onMessage(DeregisterMemories.class, m -> deregisterMemory(m.descs(), m.replyTo()))
        .onMessage(Read.class, m -> reply(path.single(TransferOp.READ, m.localDst(), m.localOffset(), m.remoteSrc(), m.remoteOffset(), m.size(), m.uid()), m.options(), m.replyTo()))
        .onMessage(Write.class, m -> reply(path.single(TransferOp.WRITE, m.localSrc(), m.localOffset(), m.remoteDst(), m.remoteOffset(), m.size(), m.uid()), m.options(), m.replyTo()))
        .onMessage(BatchRead.class, m -> reply(path.batch(TransferOp.READ, m.localDst(), m.localOffsets(), m.remoteSrc(), m.remoteOffsets(), m.sizes(), m.uid()), m.options(), m.replyTo()))
        .onMessage(BatchWrite.class, m -> reply(path.batch(TransferOp.WRITE, m.localSrc(), m.localOffsets(), m.remoteDst(), m.remoteOffsets(), m.sizes(), m.uid()), m.options(), m.replyTo()))
        .onMessage(PopInboundTransferStatus.class, m -> {
          m.replyTo().tell(popInbound(path.routes(), m.remoteEngineKey(), m.uid()));
          return this;
        })
        .onMessage(AllocateTransferUid.class, m -> {
          m.replyTo().tell(path.allocateUid());
          return this;
        })
        .onMessage(GetEngineDesc.class, m -> {
          m.replyTo().tell(desc());
          return this;
        })
        .onMessage(PublishMemory.class, this::publishMemory)
        .onMessage(ExplainPath.class, m -> {
          try {
            m.replyTo().tell(StatusReply.success(path.explainer().explain(m.local(), m.remote())));
          } catch (IoEngineException e) {
            m.replyTo().tell(StatusReply.error(e));
          }
          return this;
        })
        .onMessage(CheckMemory.class, m -> {
          if (m.desc() == null) return fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "desc must be given", this);
          if (!owns(m.desc())) return fail(m.replyTo(), StatusCode.ERR_NOT_FOUND, NOT_OWNED + m.desc(), this);
          m.replyTo().tell(StatusReply.success(Done.getInstance()));
          return this;
        })
        .onMessage(UnpublishMemory.class, m -> {
          if (m.name() == null || m.name().isEmpty()) return fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "name must be given (name '" + m.name() + "')", this);
          m.replyTo().tell(StatusReply.success(published.remove(m.name()) != null));
          return this;
        })
        .onMessage(LookupMemory.class, m -> {
          MemoryDesc d = published.get(m.name());
          m.replyTo().tell(new MemoryLookup(m.name(), d == null ? List.of() : List.of(d)));
          return this;
        })
        .onMessage(EngineMessages.BackendHandshake.class, m -> same(() -> remotes.handshake(m)))
        .onMessage(EngineMessages.PeerLost.class, m -> same(() -> remotes.pathLost(m)))
        .onMessage(EngineMessages.Reconnect.class, m -> same(() -> remotes.reconnect(m)))
        .onMessage(EngineMessages.OpenSession.class, this::openSession)
        .onMessage(EngineMessages.SessionEnded.class, m -> {
          sessions.remove(m.session());
          return this;
        })
        .onMessage(XgmiMessages.Confirm.class, m -> {
          xgmi.confirm(m, locals, closed, incarnations.own());
          return this;
        })
        .onMessage(XgmiMessages.Revoke.class, m -> {
          xgmi.revoked(m, backends.values().stream().map(Routes.Backend::backend).toList());
          return this;
        })
        .onMessage(XgmiMessages.ImporterClosed.class, m -> {
          xgmi.forgetImporter(m.importerKey());
          return this;
        })
        .onMessage(MemoryRevoked.class, m -> {
          m.replyTo().tell(StatusReply.success(Done.getInstance()));
          return this;
        })
        .onMessage(EngineMessages.Shutdown.class, this::shutdown)
        .onMessage(ShutdownDone.class, m -> {
          xgmi.tellOwnersClosed();
          gpu.close(); // the pooled staging buffers (backends stopped: their connections gave theirs back)
          m.replyTo().tell(Done.getInstance());
          return Behaviors.stopped();
        })
        .build();
  }

  private record ShutdownDone(ActorRef<Done> replyTo) implements Internal {}

  /** Every engine that mapped a deregistered region by XGMI has dropped it (or did not answer in time). */
  private record MemoryRevoked(ActorRef<StatusReply<Done>> replyTo) implements Internal {}

  /** The engine's descriptor as of now. */
  private EngineDesc desc() {
    String control = ActorRefResolver.get(getContext().getSystem()).toSerializationFormat(getContext().getSelf());
    Map<BackendType, byte[]> data = new EnumMap<>(BackendType.class);
    backends.forEach((t, b) -> {
      byte[] d = b.backend().engineData();
      if (d.length > 0) data.put(t, d);
    });
    return new EngineDesc(id.key(), id.nodeId(), id.host(), id.port(), id.pid(), control, backends.keySet(), data, incarnations.own());
  }

  private void publish() {
    path.routes = new Routes(locals, Map.copyOf(remotes.peers()), List.copyOf(backends.values()), closed, Map.copyOf(remotes.lost()));
  }

  /** Runs a step of a concern the actor delegates to, which answers its caller itself; the behaviour stays. */
  private Behavior<Command> same(Runnable step) {
    step.run();
    return this;
  }

  private static <T> Behavior<Command> fail(ActorRef<StatusReply<T>> replyTo, StatusCode code, String message, AbstractBehavior<Command> self) {
    replyTo.tell(StatusReply.error(new IoEngineException(code, message)));
    return self;
  }

  private Behavior<Command> reply(TransferStatusImpl st, org.mori4j.io.TransferOptions options, ActorRef<TransferStatus> replyTo) {
    path.withDeadline(st, options);
    st.onDone(replyTo::tell);
    return this;
  }

  public static Optional<TransferStatus> popInbound(Routes r, String remoteKey, long uid) {
    for (Routes.Backend b : r.backends()) {
      InboundNotifications.Outcome o = b.backend().popInbound(remoteKey, uid);
      if (o != null) {
        return Optional.of(o.succeeded() ? TransferStatusImpl.success()
            : TransferStatusImpl.failed(TransferStatusImpl.map(o.error()), o.message()));
      }
    }
    return Optional.empty();
  }

  /** One or more regions (all or none: a list naming an unknown region deregisters nothing); answers once importers dropped them. */
  private Behavior<Command> deregisterMemory(List<MemoryDesc> descs, ActorRef<StatusReply<Done>> replyTo) {
    if (descs == null) return fail(replyTo, StatusCode.ERR_INVALID_ARGS, "descs must not be null", this);
    List<Routes.Local> found = new ArrayList<>(descs.size());
    java.util.Set<Long> ids = new java.util.HashSet<>(); // a descriptor named twice is refused like an unknown one
    for (int i = 0; i < descs.size(); i++) {
      MemoryDesc d = descs.get(i);
      String at = descs.size() > 1 ? "descs[" + i + "]: " : "";
      if (d == null) return fail(replyTo, StatusCode.ERR_INVALID_ARGS, at + "memory descriptor must not be null", this);
      if (!d.engineKey().equals(id.key()))
        return fail(replyTo, StatusCode.ERR_INVALID_ARGS, at + "memory id " + d.id() + " belongs to engine '" + d.engineKey() + "', not '" + id.key() + "'", this);
      Routes.Local l = locals.get(d.id());
      if (l == null || l.desc().accessKey() != d.accessKey() || !ids.add(d.id()))
        return fail(replyTo, StatusCode.ERR_NOT_FOUND, at + "memory id " + d.id() + " is not registered (already deregistered?)", this);
      found.add(l);
    }
    for (Routes.Local l : found) {
      long memId = l.region().id();
      locals.remove(memId);
      registrations.forget(l);
      l.region().kill();
      published.values().removeIf(p -> p.id() == memId);
    }
    publish();
    List<CompletableFuture<Void>> revoked = new ArrayList<>(found.size());
    for (Routes.Local l : found) {
      long memId = l.region().id();
      for (Routes.Backend b : backends.values()) b.actor().tell(new BackendActor.Deregister(l.region()));
      invalidateSessions(s -> s.localId() == memId, StatusCode.ERR_BAD_STATE, "memory id " + memId + " was deregistered");
      // engines that mapped it by XGMI drop their mappings first: the caller may free the memory once this returns
      revoked.add(xgmi.revokeImporters(memId));
    }
    getContext().pipeToSelf(CompletableFuture.allOf(revoked.toArray(CompletableFuture[]::new)), (ok, err) -> new MemoryRevoked(replyTo));
    return this;
  }

  private Behavior<Command> publishMemory(PublishMemory m) {
    if (m.name() == null || m.name().isEmpty() || m.desc() == null)
      return fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "name and desc must be given (name '" + m.name() + "')", this);
    if (!owns(m.desc())) return fail(m.replyTo(), StatusCode.ERR_NOT_FOUND, NOT_OWNED + m.desc(), this);
    published.put(m.name(), m.desc());
    m.replyTo().tell(StatusReply.success(Done.getInstance()));
    return this;
  }

  /** Why {@link PublishMemory} and {@link CheckMemory} refuse a descriptor that {@link #owns} does not accept. */
  private static final String NOT_OWNED = "only memory registered with this engine can be published: ";

  /** Whether {@code d} is memory registered with this engine under its id and access key. */
  private boolean owns(MemoryDesc d) {
    Routes.Local l = locals.get(d.id());
    return d.engineKey().equals(id.key()) && l != null && l.desc().accessKey() == d.accessKey();
  }

  private Behavior<Command> openSession(EngineMessages.OpenSession m) {
    if (closed) {
      m.session().invalidate(StatusCode.ERR_BAD_STATE, "engine '" + id.key() + "' is closed");
    } else {
      ActorRef<SessionActor.Command> s = getContext().spawnAnonymous(SessionActor.create(m.session()));
      getContext().watchWith(s, new EngineMessages.SessionEnded(s));
      sessions.put(s, m);
    }
    m.replyTo().tell(Done.getInstance());
    return this;
  }

  private void invalidateSessions(java.util.function.Predicate<EngineMessages.OpenSession> which, StatusCode code, String reason) {
    // the handle is marked here, before the backend is told to disconnect, so that a session transfer never
    // reaches a half-dropped peer; the first reason stays (a deregistration is not turned into a loss later)
    sessions.forEach((ref, s) -> {
      if (!which.test(s)) return;
      s.session().invalidate(code, reason);
      ref.tell(new SessionActor.Invalidate(code, reason));
    });
  }

  private Behavior<Command> shutdown(EngineMessages.Shutdown m) {
    if (closed) {
      m.replyTo().tell(Done.getInstance());
      return this;
    }
    closed = true;
    publish();
    remotes.tellClosing(xgmi.importerRefs(), incarnations.own());
    sessions.forEach((ref, s) -> s.session().invalidate(StatusCode.ERR_BAD_STATE, "engine '" + id.key() + "' is closed"));
    Duration t = settings.askTimeout();
    List<Routes.Backend> toStop = List.copyOf(backends.values());
    org.apache.pekko.actor.typed.Scheduler scheduler = getContext().getSystem().scheduler();
    // engines that mapped this engine's GPU memory by XGMI drop their mappings before the backends stop
    CompletableFuture<Void> stopped = xgmi.revokeAllImporters().thenCompose(v -> {
      List<CompletableFuture<Done>> stops = new ArrayList<>();
      for (Routes.Backend b : toStop)
        stops.add(AskPattern.ask(b.actor(), BackendActor.Stop::new, t, scheduler).toCompletableFuture());
      return CompletableFuture.allOf(stops.toArray(CompletableFuture[]::new));
    });
    getContext().pipeToSelf(stopped, (ok, err) -> new ShutdownDone(m.replyTo()));
    return this;
  }
}
