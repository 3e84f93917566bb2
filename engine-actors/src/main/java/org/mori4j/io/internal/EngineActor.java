package org.mori4j.io.internal;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
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
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.RdmaBackendConfig;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.TransferStatus;
import org.mori4j.io.XgmiBackendConfig;
import org.mori4j.transport.InboundNotifications;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.LongTable;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.tcp.TcpBackend;
import org.mori4j.transport.tcp.TcpSettings;
import org.mori4j.transport.TransferBackend;
import org.mori4j.transport.TransportException;
import org.mori4j.transport.rdma.RdmaBackend;
import org.mori4j.transport.rdma.RdmaProviders;
import org.mori4j.transport.rdma.verbs.VerbsProvider;
import org.mori4j.transport.xgmi.XgmiBackend;
import org.mori4j.transport.xgmi.XgmiSettings;

/**
 * The engine actor: owns the registrations, the remote engines, the backends and the sessions of one
 * engine, allocates ids, and publishes the {@link Routes} snapshot that the data path reads. Every change
 * goes through this actor, one message at a time, so the state needs no locks; blocking work is sent to
 * the backend actors and their results come back as messages.
 */
public final class EngineActor extends AbstractBehavior<Command> {
  /** What the engine needs to describe itself. */
  public record Identity(String key, String nodeId, String host, int port, long pid) {}

  private final Identity id;
  private final EngineSettings settings;
  private final TransferPath path;
  private final String bindHost;
  private final EnumMap<BackendType, Routes.Backend> backends = new EnumMap<>(BackendType.class);
  private final LongTable<Routes.Local> locals = new LongTable<>();
  private final Map<String, Routes.Peer> peers = new HashMap<>();
  private final Map<String, MemoryDesc> published = new HashMap<>();
  private final Map<ActorRef<SessionActor.Command>, EngineMessages.OpenSession> sessions = new HashMap<>();
  /** Engines declared lost (key to reason), oldest first, until registered again; bounded (see EngineSettings). */
  private final java.util.LinkedHashMap<String, String> lost;
  private long backendIncarnation;
  private boolean closed;
  /** The engine's GPU runtime (selected on first need) and the staging its TCP backend uses for GPU memory. */
  private final GpuStaging gpu;
  /** XGMI's control traffic: confirming remote regions, revoking this engine's regions from their importers. */
  private final XgmiControl xgmi;
  /** This engine's incarnation and the ones its peers stated. */
  private final PeerIncarnations incarnations;
  /** Memory registration, single and bulk, with its range cache and timing. */
  private final Registrations registrations;

  public static Behavior<Command> create(Identity id, EngineSettings settings, TransferPath path, String bindHost) {
    return Behaviors.setup(ctx -> new EngineActor(ctx, id, settings, path, bindHost));
  }

  private EngineActor(ActorContext<Command> ctx, Identity id, EngineSettings settings, TransferPath path, String bindHost) {
    super(ctx);
    this.id = id;
    this.settings = settings;
    this.path = path;
    this.bindHost = bindHost;
    this.gpu = new GpuStaging(settings.gpuRuntime(), settings.tcpGpuStagingChunk(), settings.tcpGpuStagingPrewarm());
    this.xgmi = new XgmiControl(id.key(), ctx.getSystem(), ctx.getSelf(), path, settings.handshakeTimeout());
    this.incarnations = new PeerIncarnations(new java.security.SecureRandom(), settings.lostPeersRemembered());
    this.registrations = new Registrations(ctx, id.key(), settings, gpu, locals, backends, this::publish, () -> closed, path.registrationStats(), incarnations.own());
    int remembered = settings.lostPeersRemembered();
    this.lost = new java.util.LinkedHashMap<>() {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
        return size() > remembered;
      }
    };
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(CreateBackend.class, this::createBackend)
        .onMessage(EngineMessages.BackendStarted.class, this::backendStarted)
        .onMessage(RemoveBackend.class, this::removeBackend)
        .onMessage(EngineMessages.BackendRemoved.class, m -> {
          m.replyTo().tell(StatusReply.success(Done.getInstance()));
          return this;
        })
        .onMessage(RegisterRemoteEngine.class, this::registerRemote)
        .onMessage(EngineMessages.RemoteConnected.class, this::remoteConnected)
        .onMessage(DeregisterRemoteEngine.class, this::deregisterRemote)
        .onMessage(MarkPeerLost.class, this::markPeerLost)
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
        .onMessage(EngineMessages.BackendHandshake.class, this::backendHandshake)
        .onMessage(EngineMessages.PeerLost.class, this::peerLost)
        .onMessage(EngineMessages.Reconnect.class, this::reconnect)
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
    path.routes = new Routes(locals, Map.copyOf(peers), List.copyOf(backends.values()), closed, Map.copyOf(lost));
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

  private Behavior<Command> createBackend(CreateBackend m) {
    if (closed) return fail(m.replyTo(), StatusCode.ERR_BAD_STATE, "engine '" + id.key() + "' is closed", this);
    if (m.config() == null) return fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "config must not be null", this);
    BackendType type = m.config().type();
    if (backends.containsKey(type))
      return fail(m.replyTo(), StatusCode.ERR_BAD_STATE, "engine '" + id.key() + "' already has a " + type + " backend", this);
    TransferBackend backend;
    if (m.config() instanceof RdmaBackendConfig r) {
      // the provider is chosen here (cheap: it lists devices); devices open and queues are created by start(), on the backend dispatcher
      RdmaOptions o;
      VerbsProvider provider;
      try {
        o = RdmaOptions.from(getContext().getSystem().settings().config());
        provider = RdmaProviders.select(o.provider(), bindHost, gpu);
      } catch (TransportException e) {
        path.explainer().createFailed(type, StatusCode.ERR_RDMA_OP, e.getMessage());
        return fail(m.replyTo(), e.error() == TransportError.INVALID_ARGS ? StatusCode.ERR_INVALID_ARGS : StatusCode.ERR_RDMA_OP, e.getMessage(), this);
      } catch (RuntimeException e) {
        return fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "RDMA settings: " + e.getMessage(), this);
      }
      backend = new RdmaBackend(id.key(), o.settings(r), provider, xgmi.confirmer(BackendType.RDMA));
    } else if (m.config() instanceof XgmiBackendConfig x) {
      // the GPU runtime is opened, the devices read and the batch kernel compiled by start(), on the backend dispatcher
      backend = new XgmiBackend(id.key(), new XgmiSettings(x.numStreams(), x.numEvents(), settings.xgmiMaxBatchBlocks(),
          settings.xgmiPollNapNanos()), gpu::runtime, xgmi.confirmer(BackendType.XGMI));
    } else if (m.config() instanceof TcpBackendConfig tcp) {
      org.mori4j.transport.tcp.TcpTls tls;
      try {
        tls = TcpTlsSetup.resolve(tcp.tls(), getContext().getSystem().settings().config());
      } catch (RuntimeException e) {
        return fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "TCP TLS settings: " + e.getMessage(), this);
      }
      gpu.enable(); // GPU memory registered from now on gets staging buffers ready (GpuStaging)
      backend = new TcpBackend(id.key(), new TcpSettings(bindHost, settings.tcpPort(), tcp.connectionsPerPeer(),
          tcp.ioThreads(), tcp.stripeThreshold(), tcp.socketBufferBytes(), tcp.peerTimeout(), tcp.connectTimeout(),
          settings.tcpMaxBatchEntries(), tcp.enableNotification(), settings.tcpGpuStagingChunk(), tls), gpu,
          TcpLatencySetup.fromConfig(getContext().getSystem().settings().config().getConfig("mori4j.tcp")));
    } else {
      return fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "the " + type + " backend is not available in this build of mori4j", this);
    }
    backend.inbound().listener(path.inboundLanded());
    ActorRef<BackendActor.Command> actor = getContext().spawn(
        BackendActor.create(id.key(), type, backend, settings, getContext().getSelf(), path),
        // numbered: a removed backend's actor may still be stopping when the same type is created again, and a
        // reused name would fail the spawn (InvalidActorNameException) and with it the whole engine actor
        "backend-" + type.name().toLowerCase() + "-" + (++backendIncarnation),
        DispatcherSelector.fromConfig("mori4j.dispatchers.backend"));
    getContext().askWithStatus(Done.class, actor, settings.askTimeout(), BackendActor.Start::new,
        (ok, err) -> new EngineMessages.BackendStarted(type, backend, actor, err, m.replyTo()));
    return this;
  }

  private Behavior<Command> backendStarted(EngineMessages.BackendStarted m) {
    if (m.failure() != null) {
      // a backend that says why it cannot start (no GPU runtime: GPU_OP) keeps its code
      StatusCode code = m.failure() instanceof TransportException te ? TransferStatusImpl.map(te.error()) : StatusCode.ERR_TRANSPORT;
      path.explainer().createFailed(m.type(), code, String.valueOf(m.failure().getMessage()));
      return fail(m.replyTo(), code, "cannot start the " + m.type() + " backend: " + m.failure().getMessage(), this);
    }
    backends.put(m.type(), new Routes.Backend(m.type(), m.backend(), m.actor()));
    path.explainer().created(m.type());
    // regions registered before this backend existed become reachable through it too
    for (Routes.Local l : locals.values()) m.actor().tell(new BackendActor.Register(l.region(), getContext().getSystem().ignoreRef()));
    publish();
    if (m.type() == BackendType.TCP && !gpu.prewarmedDevices().isEmpty()) {
      // GPU memory registered before the TCP backend: its staging buffers now, off this actor (pinned allocation blocks)
      CompletableFuture.runAsync(gpu::prewarmRegistered, getContext().getSystem().dispatchers().lookup(DispatcherSelector.fromConfig("mori4j.dispatchers.backend")))
          .whenComplete((ok, err) -> {
            if (err != null) org.slf4j.LoggerFactory.getLogger(GpuStaging.class).warn("engine '{}': GPU staging buffers could not be prepared ahead: {}", id.key(), err.toString());
            m.replyTo().tell(StatusReply.success(Done.getInstance()));
          });
      return this;
    }
    m.replyTo().tell(StatusReply.success(Done.getInstance()));
    return this;
  }

  private Behavior<Command> removeBackend(RemoveBackend m) {
    Routes.Backend b = m.type() == null ? null : backends.remove(m.type());
    if (b == null) return fail(m.replyTo(), StatusCode.ERR_NOT_FOUND, "engine '" + id.key() + "' has no " + m.type() + " backend", this);
    peers.replaceAll((k, p) -> {
      Map<BackendType, Object> h = new EnumMap<>(BackendType.class);
      h.putAll(p.handles());
      h.remove(m.type());
      return new Routes.Peer(p.desc(), Map.copyOf(h));
    });
    publish();
    invalidateSessions(s -> true, StatusCode.ERR_BAD_STATE, "the " + m.type() + " backend was removed");
    CompletionStage<Done> stopped = AskPattern.ask(b.actor(), BackendActor.Stop::new, settings.askTimeout(), getContext().getSystem().scheduler());
    getContext().pipeToSelf(stopped, (ok, err) -> new EngineMessages.BackendRemoved(m.type(), m.replyTo()));
    return this;
  }

  private Behavior<Command> registerRemote(RegisterRemoteEngine m) {
    if (closed) return fail(m.replyTo(), StatusCode.ERR_BAD_STATE, "engine '" + id.key() + "' is closed", this);
    EngineDesc d = m.desc();
    if (d == null) return fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "remote engine descriptor must not be null", this);
    if (d.key().equals(id.key())) return fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "an engine cannot register itself as remote (key '" + d.key() + "')", this);
    Routes.Peer found = peers.get(d.key());
    // a descriptor that states no incarnation is not a restart: it is refused below if it differs
    boolean restarted = found != null && d.incarnation() != 0 && found.desc().incarnation() != d.incarnation();
    // the engine was restarted under the same key: its new self replaces the old at once, without waiting for a timeout
    if (restarted) dropReplaced(found.desc(), d);
    Routes.Peer existing = restarted ? null : found;
    if (existing != null && !existing.desc().equals(d))
      return fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "a different engine with key '" + d.key() + "' is already registered; deregister it first", this);
    ActorRef<Command> remote;
    try {
      remote = ActorRefResolver.get(getContext().getSystem()).resolveActorRef(d.controlPath());
    } catch (RuntimeException e) {
      return fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "cannot resolve the control address '" + d.controlPath() + "' of engine '" + d.key() + "': " + e.getMessage(), this);
    }
    List<BackendType> common = new ArrayList<>();
    for (BackendType t : backends.keySet()) {
      if (!d.backends().contains(t)) continue;
      if (existing != null && existing.handles().containsKey(t) && backends.get(t).backend().connected(d.key())) continue;
      if (!backends.get(t).backend().reaches(d.backendData().get(t))) {
        // XGMI and an engine on another host: nothing to connect; the other backends carry its transfers
        getContext().getLog().info("engine '{}': the {} backend cannot reach engine '{}' (another host); its transfers use {}", id.key(), t,
            d.key(), backends.keySet().stream().filter(o -> o != t && d.backends().contains(o)).toList());
        continue;
      }
      common.add(t);
    }
    Map<BackendType, CompletableFuture<StatusReply<Object>>> asks = new EnumMap<>(BackendType.class);
    for (BackendType t : common) {
      asks.put(t, AskPattern.<BackendActor.Command, StatusReply<Object>>ask(backends.get(t).actor(),
          r -> new BackendActor.Connect(d.key(), remote, incarnations.own(), d.incarnation(), r), settings.askTimeout(),
          getContext().getSystem().scheduler())
          .toCompletableFuture());
    }
    if (common.isEmpty() && existing == null)
      getContext().getLog().warn("engine '{}' shares no backend with engine '{}' (it has {}, we have {}); transfers to it will fail",
          d.key(), id.key(), d.backends(), backends.keySet());
    CompletableFuture<Void> all = CompletableFuture.allOf(asks.values().toArray(CompletableFuture[]::new));
    getContext().pipeToSelf(all, (ok, err) -> {
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
        else getContext().getLog().warn("engine '{}': {} cannot connect to engine '{}' ({}); its transfers use {}", id.key(), t, d.key(),
            why, handles.keySet());
      });
      return new EngineMessages.RemoteConnected(d, handles, failures.isEmpty() ? null : failures.toString(), m.replyTo());
    });
    return this;
  }

  private Behavior<Command> remoteConnected(EngineMessages.RemoteConnected m) {
    if (m.failure() != null) {
      for (BackendType t : m.handles().keySet()) {
        Routes.Backend b = backends.get(t);
        if (b != null) b.actor().tell(new BackendActor.Disconnect(m.desc().key(), TransportError.BAD_STATE, "registration failed"));
      }
      return fail(m.replyTo(), StatusCode.ERR_TRANSPORT, "cannot reach engine '" + m.desc().key() + "': " + m.failure(), this);
    }
    peers.put(m.desc().key(), new Routes.Peer(m.desc(), Map.copyOf(m.handles())));
    // a registration that succeeds ends a loss: the engine (a restart, or a member that became reachable again) is back
    lost.remove(m.desc().key());
    publish();
    m.replyTo().tell(StatusReply.success(Done.getInstance()));
    return this;
  }

  /**
   * Drops {@code old}, replaced by {@code now} (same key, another incarnation): its transfers in flight and its
   * sessions end with ERR_PEER_LOST naming both incarnations, and every backend disconnects it before the
   * registration of {@code now} connects them again (the backend actors take the two messages in that order).
   */
  private void dropReplaced(EngineDesc old, EngineDesc now) {
    String key = old.key();
    String message = PeerIncarnations.replaced(key, old.incarnation(), now.incarnation());
    getContext().getLog().warn("engine '{}': {}; the old one's transfers and sessions end with ERR_PEER_LOST", id.key(), message);
    peers.remove(key);
    publish();
    xgmi.forgetImporter(key);
    invalidateSessions(s -> s.peerKey().equals(key), StatusCode.ERR_PEER_LOST, message);
    for (Routes.Backend b : backends.values()) b.actor().tell(new BackendActor.Disconnect(key, TransportError.PEER_LOST, message));
  }

  private Behavior<Command> deregisterRemote(DeregisterRemoteEngine m) {
    String key = m.desc() == null ? null : m.desc().key();
    if (key == null || peers.remove(key) == null)
      return fail(m.replyTo(), StatusCode.ERR_NOT_FOUND, "engine '" + key + "' is not registered with engine '" + id.key() + "'", this);
    publish();
    xgmi.forgetImporter(key);
    invalidateSessions(s -> s.peerKey().equals(key), StatusCode.ERR_BAD_STATE, "engine '" + key + "' was deregistered");
    for (Routes.Backend b : backends.values())
      b.actor().tell(new BackendActor.Disconnect(key, TransportError.BAD_STATE, "engine '" + key + "' was deregistered"));
    m.replyTo().tell(StatusReply.success(Done.getInstance()));
    return this;
  }

  /**
   * Drops a peer like a deregistration, but as a failure: its transfers in flight and its sessions end with
   * ERR_PEER_LOST, and the key is remembered so that new transfers to it say why they fail.
   */
  private Behavior<Command> markPeerLost(MarkPeerLost m) {
    if (closed) return fail(m.replyTo(), StatusCode.ERR_BAD_STATE, "engine '" + id.key() + "' is closed", this);
    String key = m.engineKey();
    if (key == null || key.isEmpty()) return fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "engineKey must not be null or empty: '" + key + "'", this);
    if (key.equals(id.key())) return fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "an engine cannot declare itself lost (key '" + key + "')", this);
    String reason = m.reason() == null || m.reason().isBlank() ? "no reason given" : m.reason();
    Routes.Peer current = peers.get(key);
    if (m.incarnation() != 0 && current != null && current.desc().incarnation() != m.incarnation()) {
      // the loss of an old incarnation noticed after its successor was registered: the successor stays
      getContext().getLog().info("engine '{}' keeps engine '{}' (incarnation {}): the loss of incarnation {} came after it ({})", id.key(), key,
          EngineDesc.incarnationText(current.desc().incarnation()), EngineDesc.incarnationText(m.incarnation()), reason);
      m.replyTo().tell(StatusReply.success(Done.getInstance()));
      return this;
    }
    boolean wasRegistered = peers.remove(key) != null;
    lost.remove(key); // the newest loss goes to the young end of the bounded map
    lost.put(key, reason);
    publish();
    getContext().getLog().warn("engine '{}' declares engine '{}' lost{}: {}", id.key(), key, wasRegistered ? "" : " (it was not registered)", reason);
    String message = "engine '" + key + "' was lost: " + reason;
    xgmi.forgetImporter(key);
    invalidateSessions(s -> s.peerKey().equals(key), StatusCode.ERR_PEER_LOST, message);
    for (Routes.Backend b : backends.values()) b.actor().tell(new BackendActor.Disconnect(key, TransportError.PEER_LOST, message));
    m.replyTo().tell(StatusReply.success(Done.getInstance()));
    return this;
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

  private Behavior<Command> backendHandshake(EngineMessages.BackendHandshake m) {
    Routes.Backend b = backends.get(m.type());
    if (closed || b == null) {
      m.replyTo().tell(new EngineMessages.HandshakeReply(new byte[0], "engine '" + id.key() + "' has no " + m.type() + " backend" + (closed ? " (closed)" : "")));
    } else {
      String refused = incarnations.refusal(id.key(), m.toIncarnation());
      if (refused != null) {
        m.replyTo().tell(new EngineMessages.HandshakeReply(new byte[0], refused));
        return this;
      }
      long old = incarnations.initiatorSeen(m.fromKey(), m.fromIncarnation());
      if (old != 0) {
        // the initiator was restarted: its uids start again, so what its old self left must not answer the new one's pops
        getContext().getLog().info("engine '{}': {}; its inbound notifications are dropped", id.key(),
            PeerIncarnations.replaced(m.fromKey(), old, m.fromIncarnation()));
        for (Routes.Backend rb : backends.values()) rb.backend().inbound().forget(m.fromKey());
      }
      b.actor().tell(new BackendActor.AcceptHandshake(m.fromKey(), m.request(), m.replyTo()));
    }
    return this;
  }

  private Behavior<Command> reconnect(EngineMessages.Reconnect m) {
    Routes.Peer p = peers.get(m.peerKey());
    if (closed || p == null || lost.containsKey(m.peerKey())) return this;
    getContext().getLog().info("engine '{}': connecting {} to engine '{}' again: {}", id.key(), m.type(), m.peerKey(), m.reason());
    // registering the same descriptor again connects exactly the backends that say they are not connected
    getContext().getSelf().tell(new RegisterRemoteEngine(p.desc(), getContext().getSystem().ignoreRef()));
    return this;
  }

  private Behavior<Command> peerLost(EngineMessages.PeerLost m) {
    if (!closed) getContext().getLog().warn("engine '{}': {} path to engine '{}' lost: {}", id.key(), m.type(), m.peerKey(), m.reason());
    invalidateSessions(s -> s.peerKey().equals(m.peerKey()), StatusCode.ERR_PEER_LOST, "engine '" + m.peerKey() + "' lost: " + m.reason());
    return this;
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
