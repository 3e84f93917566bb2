package org.mori4j.io.internal;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.pattern.StatusReply;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.IoEngineProtocol.Command;
import org.mori4j.io.IoEngineProtocol.CreateBackend;
import org.mori4j.io.IoEngineProtocol.RemoveBackend;
import org.mori4j.io.RdmaBackendConfig;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.XgmiBackendConfig;
import org.mori4j.transport.LongTable;
import org.mori4j.transport.TransferBackend;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.TransportException;
import org.mori4j.transport.rdma.RdmaBackend;
import org.mori4j.transport.rdma.RdmaProviders;
import org.mori4j.transport.rdma.RdmaSettings;
import org.mori4j.transport.rdma.verbs.VerbsProvider;
import org.mori4j.transport.tcp.TcpBackend;
import org.mori4j.transport.tcp.TcpSettings;
import org.mori4j.transport.xgmi.XgmiBackend;
import org.mori4j.transport.xgmi.XgmiSettings;

/**
 * The engine actor's backends from creation to removal: it builds a backend from its configuration, spawns
 * its {@link BackendActor} on the backend dispatcher and starts it there (opening devices and queues blocks),
 * registers with it the regions that existed before it, and on removal drops its connection handles and
 * stops it. Runs on the engine actor's thread only; the started backends live in the map the actor shares.
 */
final class BackendLifecycle {
  private final ActorContext<Command> ctx;
  private final String engineKey;
  private final EngineSettings settings;
  private final TransferPath path;
  private final String bindHost;
  private final GpuStaging gpu;
  private final XgmiControl xgmi;
  private final Map<BackendType, Routes.Backend> backends;
  private final LongTable<Routes.Local> locals;
  private final RemoteEngines remotes;
  private final BooleanSupplier closed;
  private final Runnable publish;
  private final RemoteEngines.SessionInvalidation sessions;
  private long backendIncarnation;

  BackendLifecycle(ActorContext<Command> ctx, String engineKey, EngineSettings settings, TransferPath path, String bindHost,
                   GpuStaging gpu, XgmiControl xgmi, Map<BackendType, Routes.Backend> backends, LongTable<Routes.Local> locals,
                   RemoteEngines remotes, BooleanSupplier closed, Runnable publish, RemoteEngines.SessionInvalidation sessions) {
    this.ctx = ctx;
    this.engineKey = engineKey;
    this.settings = settings;
    this.path = path;
    this.bindHost = bindHost;
    this.gpu = gpu;
    this.xgmi = xgmi;
    this.backends = backends;
    this.locals = locals;
    this.remotes = remotes;
    this.closed = closed;
    this.publish = publish;
    this.sessions = sessions;
  }

  private static void fail(ActorRef<StatusReply<Done>> replyTo, StatusCode code, String message) {
    replyTo.tell(StatusReply.error(new IoEngineException(code, message)));
  }

  void create(CreateBackend m) {
    if (closed.getAsBoolean()) {
      fail(m.replyTo(), StatusCode.ERR_BAD_STATE, "engine '" + engineKey + "' is closed");
      return;
    }
    if (m.config() == null) {
      fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "config must not be null");
      return;
    }
    BackendType type = m.config().type();
    if (backends.containsKey(type)) {
      fail(m.replyTo(), StatusCode.ERR_BAD_STATE, "engine '" + engineKey + "' already has a " + type + " backend");
      return;
    }
    TransferBackend backend;
    if (m.config() instanceof RdmaBackendConfig r) {
      // the provider is chosen here (cheap: it lists devices); devices open and queues are created by start(), on the backend dispatcher
      RdmaSettings rs;
      VerbsProvider provider;
      try {
        RdmaOptions o = RdmaOptions.from(ctx.getSystem().settings().config());
        // the backend's own limits (1..64 queue pairs and workers) are checked here, before a provider is chosen: an
        // exception thrown later, outside this try, would stop the engine actor and leave every later call unanswered
        rs = o.settings(r, settings.handshakeTimeout());
        provider = RdmaProviders.select(o.provider(), bindHost, gpu);
      } catch (TransportException e) {
        path.explainer().createFailed(type, StatusCode.ERR_RDMA_OP, e.getMessage());
        fail(m.replyTo(), e.error() == TransportError.INVALID_ARGS ? StatusCode.ERR_INVALID_ARGS : StatusCode.ERR_RDMA_OP, e.getMessage());
        return;
      } catch (RuntimeException e) {
        fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "RDMA settings: " + e.getMessage());
        return;
      }
      backend = new RdmaBackend(engineKey, rs, provider, xgmi.confirmer(BackendType.RDMA));
    } else if (m.config() instanceof XgmiBackendConfig x) {
      // the GPU runtime is opened, the devices read and the batch kernel compiled by start(), on the backend dispatcher
      backend = new XgmiBackend(engineKey, new XgmiSettings(x.numStreams(), x.numEvents(), settings.xgmiMaxBatchBlocks(),
          settings.xgmiPollNapNanos(), settings.xgmiMappedTable(), settings.xgmiFuseBatches(), settings.xgmiCallerPollNanos()), gpu::runtime,
          xgmi.confirmer(BackendType.XGMI));
    } else if (m.config() instanceof TcpBackendConfig tcp) {
      org.mori4j.transport.tcp.TcpTls tls;
      try {
        tls = TcpTlsSetup.resolve(tcp.tls(), ctx.getSystem().settings().config());
      } catch (RuntimeException e) {
        fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "TCP TLS settings: " + e.getMessage());
        return;
      }
      gpu.enable(); // GPU memory registered from now on gets staging buffers ready (GpuStaging)
      backend = new TcpBackend(engineKey, new TcpSettings(bindHost, settings.tcpPort(), tcp.connectionsPerPeer(),
          tcp.ioThreads(), tcp.stripeThreshold(), tcp.socketBufferBytes(), tcp.peerTimeout(), tcp.connectTimeout(),
          settings.tcpMaxBatchEntries(), tcp.enableNotification(), settings.tcpGpuStagingChunk(), tls), gpu, settings.tcpLatency(), settings.tcpBulkLanes());
    } else {
      fail(m.replyTo(), StatusCode.ERR_INVALID_ARGS, "the " + type + " backend is not available in this build of mori4j");
      return;
    }
    backend.inbound().listener(path.inboundLanded());
    ActorRef<BackendActor.Command> actor = ctx.spawn(
        BackendActor.create(engineKey, type, backend, settings, ctx.getSelf(), path, xgmi.liveness()),
        // numbered: a removed backend's actor may still be stopping when the same type is created again, and a
        // reused name would fail the spawn (InvalidActorNameException) and with it the whole engine actor
        "backend-" + type.name().toLowerCase() + "-" + (++backendIncarnation),
        DispatcherSelector.fromConfig("mori4j.dispatchers.backend"));
    ctx.askWithStatus(Done.class, actor, settings.askTimeout(), BackendActor.Start::new,
        (ok, err) -> new EngineMessages.BackendStarted(type, backend, actor, err, m.replyTo()));
  }

  void started(EngineMessages.BackendStarted m) {
    if (m.failure() != null) {
      // a backend that says why it cannot start (no GPU runtime: GPU_OP) keeps its code
      StatusCode code = m.failure() instanceof TransportException te ? TransferStatusImpl.map(te.error()) : StatusCode.ERR_TRANSPORT;
      path.explainer().createFailed(m.type(), code, String.valueOf(m.failure().getMessage()));
      fail(m.replyTo(), code, "cannot start the " + m.type() + " backend: " + m.failure().getMessage());
      return;
    }
    backends.put(m.type(), new Routes.Backend(m.type(), m.backend(), m.actor()));
    path.explainer().created(m.type());
    // regions registered before this backend existed become reachable through it too
    for (Routes.Local l : locals.values()) m.actor().tell(new BackendActor.Register(l.region(), ctx.getSystem().ignoreRef()));
    publish.run();
    if (m.type() == BackendType.TCP && !gpu.prewarmedDevices().isEmpty()) {
      // GPU memory registered before the TCP backend: its staging buffers now, off this actor (pinned allocation blocks)
      CompletableFuture.runAsync(gpu::prewarmRegistered, ctx.getSystem().dispatchers().lookup(DispatcherSelector.fromConfig("mori4j.dispatchers.backend")))
          .whenComplete((ok, err) -> {
            if (err != null) org.slf4j.LoggerFactory.getLogger(GpuStaging.class).warn("engine '{}': GPU staging buffers could not be prepared ahead: {}", engineKey, err.toString());
            m.replyTo().tell(StatusReply.success(Done.getInstance()));
          });
      return;
    }
    m.replyTo().tell(StatusReply.success(Done.getInstance()));
  }

  void remove(RemoveBackend m) {
    Routes.Backend b = m.type() == null ? null : backends.remove(m.type());
    if (b == null) {
      fail(m.replyTo(), StatusCode.ERR_NOT_FOUND, "engine '" + engineKey + "' has no " + m.type() + " backend");
      return;
    }
    remotes.dropBackend(m.type());
    publish.run();
    sessions.invalidate(s -> true, StatusCode.ERR_BAD_STATE, "the " + m.type() + " backend was removed");
    CompletionStage<Done> stopped = AskPattern.ask(b.actor(), BackendActor.Stop::new, settings.askTimeout(), ctx.getSystem().scheduler());
    ctx.pipeToSelf(stopped, (ok, err) -> new EngineMessages.BackendRemoved(m.type(), m.replyTo()));
  }
}
