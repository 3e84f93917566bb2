package org.mori4j.io.gpuinit;

import java.lang.foreign.MemorySegment;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.PathExplanation;
import org.mori4j.io.StatusCode;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * MORI's {@code RdmaDeviceContext} for GPU-initiated transfers on one {@link IoEngine}; the "device" is the engine's
 * host proxy (emulation: no NIC executes the work requests, a proxy thread does, through the engine's backends).
 * One owner; {@link #close()} frees every endpoint block and deregisters every region it registered. It owns the key
 * tables (lkeys and rkeys: non-zero, distinct, never reused), the endpoints, the {@link Proxy} on its own pinned
 * thread and an actor peers reach for sends, write-with-immediate notices, atomics and rkey lookups.
 * engine-actors/docs/gpu-initiated.md, "GPU-initiated transfers", describes the protocol.
 */
public final class RdmaDeviceContext implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RdmaDeviceContext.class);
  private static final AtomicLong SEQ = new AtomicLong();
  private static final Duration CONTROL_WAIT = Duration.ofSeconds(10);

  final IoEngine engine;
  final GpuInitSettings settings;
  final String name;
  final long incarnation;
  final String path;
  final ConcurrentHashMap<Integer, Region> lkeys = new ConcurrentHashMap<>();
  final ConcurrentHashMap<Integer, Region> rkeys = new ConcurrentHashMap<>();
  final ConcurrentHashMap<Integer, RdmaEndpoint> endpoints = new ConcurrentHashMap<>();
  /** Contexts connected to this one or by it: told when this one closes. */
  final java.util.Set<ActorRef<GpuInitProtocol.Command>> peerContexts = ConcurrentHashMap.newKeySet();
  final ActorRef<GpuInitProtocol.Command> self;
  final Proxy proxy;
  final MemoryAccess memory;
  /** Test hook: the proxy waits this long before it starts each work request (a slow proxy). */
  volatile long testIssueDelayNanos;
  private final AtomicInteger nextKey = new AtomicInteger(0x100);
  private final AtomicInteger nextQpn = new AtomicInteger(0);
  private final ConcurrentHashMap<Integer, RdmaMemoryRegion> regions = new ConcurrentHashMap<>();
  private volatile GpuRuntime gpu;
  private volatile boolean closed;
  private final org.apache.pekko.actor.Cancellable closingTask;

  private RdmaDeviceContext(IoEngine engine, GpuInitSettings settings) {
    this.engine = engine;
    this.settings = settings;
    long seq = SEQ.incrementAndGet();
    this.name = engine.key() + "#" + seq;
    this.incarnation = engine.engineDesc().incarnation();
    this.proxy = new Proxy(this);
    this.memory = new MemoryAccess(this);
    String base = "mori4j-gpuinit-" + URLEncoder.encode(engine.key(), StandardCharsets.UTF_8) + "-" + seq;
    this.self = engine.actorSystem().systemActorOf(ContextActor.create(this), base, Props.empty());
    this.path = ActorRefResolver.get(engine.actorSystem()).toSerializationFormat(self);
    // the proxy actor stops itself once the proxy has shut down (Proxy.Shutdown)
    engine.actorSystem().systemActorOf(proxy.behavior(), base + "-proxy",
        DispatcherSelector.fromConfig("mori4j.dispatchers.gpu-proxy"));
    // an engine closed without closing its contexts first still tells their peers, while its remoting is up
    this.closingTask = org.apache.pekko.actor.CoordinatedShutdown.get(engine.actorSystem()).addCancellableTask(org.apache.pekko.actor.CoordinatedShutdown.PhaseBeforeServiceUnbind(),
        "mori4j-gpuinit-closing-" + seq, () -> {
          tellPeersClosing();
          return java.util.concurrent.CompletableFuture.completedFuture(org.apache.pekko.Done.getInstance());
        });
    LOG.info("GPU-initiated context {} opened: host proxy (emulation; no NIC executes work requests) on engine '{}'", name, engine.key());
  }

  /**
   * Opens a context on {@code engine} with the settings of its ActorSystem's {@code mori4j.gpu-initiated}; a refused
   * one is {@code ERR_INVALID_ARGS} naming its key, environment variable and value.
   */
  public static RdmaDeviceContext open(IoEngine engine) {
    if (engine == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "engine must not be null");
    return new RdmaDeviceContext(engine, GpuInitSettings.of(engine));
  }

  static RdmaDeviceContext open(IoEngine engine, GpuInitSettings settings) {
    return new RdmaDeviceContext(engine, settings);
  }

  /** An endpoint configuration with this context's default depths ({@code mori4j.gpu-initiated.max-*}). */
  public RdmaEndpointConfig defaultEndpointConfig(boolean onGpu, int deviceId) {
    return new RdmaEndpointConfig(onGpu, deviceId, settings.defaultMaxSendWr(), settings.defaultMaxCqe(), settings.defaultMaxRecvWr());
  }

  /** Registers native host memory with every access right. */
  public RdmaMemoryRegion registerMemoryRegion(MemorySegment hostMemory) {
    return registerMemoryRegion(hostMemory, GpuQueueLayout.ACCESS_ALL);
  }

  public RdmaMemoryRegion registerMemoryRegion(MemorySegment hostMemory, int access) {
    if (hostMemory == null || !hostMemory.isNative())
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "hostMemory must be a native segment: " + hostMemory);
    return registerMemoryRegion(hostMemory.address(), hostMemory.byteSize(), -1, MemoryLocationType.CPU, access);
  }

  /**
   * Registers {@code [address, address + size)} (GPU memory of {@code deviceId}, or host memory) with the engine
   * (a region inside a live registration is served by the engine's range cache) and assigns it an lkey and an
   * rkey. {@code access}: {@code IBV_ACCESS_*} bits ({@link GpuQueueLayout#ACCESS_LOCAL_WRITE} and so on).
   */
  public RdmaMemoryRegion registerMemoryRegion(long address, long size, int deviceId, MemoryLocationType loc, int access) {
    checkOpen();
    if ((access & ~GpuQueueLayout.ACCESS_ALL) != 0)
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "access has bits other than IBV_ACCESS_LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC: " + access);
    MemoryDesc desc = engine.registerMemory(address, size, deviceId, loc);
    if (loc == MemoryLocationType.GPU) {
      CompletableFuture<Void> ready = new CompletableFuture<>();
      proxy.submit(new Proxy.PrepareGpu(deviceId, (access & GpuQueueLayout.ACCESS_REMOTE_ATOMIC) != 0, ready));
      try {
        ready.get(CONTROL_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (Exception e) {
        try {
          engine.deregisterMemory(desc);
        } catch (IoEngineException ignored) {
          // the registration is refused either way
        }
        Throwable cause = e instanceof java.util.concurrent.ExecutionException ? e.getCause() : e;
        throw new IoEngineException(StatusCode.ERR_GPU_OP, "GPU region on device " + deviceId + ": the host proxy could not prepare its copies"
            + ((access & GpuQueueLayout.ACCESS_REMOTE_ATOMIC) != 0 ? " and atomics" : "") + ": " + cause, cause);
      }
    }
    return add(address, size, access, desc, loc, deviceId, true, true);
  }

  private RdmaMemoryRegion add(long address, long size, int access, MemoryDesc desc, MemoryLocationType loc, int deviceId, boolean owned,
                               boolean remote) {
    int lkey = nextKey.getAndIncrement(), rkey = nextKey.getAndIncrement();
    MemorySegment host = loc == MemoryLocationType.CPU ? MemorySegment.ofAddress(address).reinterpret(size) : null;
    Region r = new Region(address, size, lkey, rkey, access, desc, loc, deviceId, host, owned);
    lkeys.put(lkey, r);
    if (remote) rkeys.put(rkey, r);
    RdmaMemoryRegion mr = new RdmaMemoryRegion(address, size, lkey, rkey, access, desc);
    regions.put(lkey, mr);
    return mr;
  }

  /** Drops {@code mr}'s keys and its engine registration; work requests naming them fail from now on. */
  public void deregisterMemoryRegion(RdmaMemoryRegion mr) {
    checkOpen();
    if (mr == null || regions.remove(mr.lkey(), mr) == false)
      throw new IoEngineException(StatusCode.ERR_NOT_FOUND, "region " + mr + " is not registered with context " + name);
    drop(mr);
  }

  private void drop(RdmaMemoryRegion mr) {
    rkeys.remove(mr.rkey());
    Region r = lkeys.remove(mr.lkey());
    if (r != null && r.owned()) {
      try {
        engine.deregisterMemory(mr.desc());
      } catch (IoEngineException e) {
        LOG.debug("context {}: deregistering {}: {}", name, mr.desc(), e.getMessage());
      }
    }
  }

  /** Regions registered now, endpoints' internal regions included. */
  public int openRegions() {
    return regions.size();
  }

  /** Creates an endpoint: its block allocated, its header written, the proxy told (it polls it once connected). */
  public RdmaEndpoint createEndpoint(RdmaEndpointConfig config) {
    checkOpen();
    if (config == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "config must not be null");
    EndpointBlock block;
    try {
      block = EndpointBlock.allocate(config, config.onGpu() ? gpuRuntime() : null);
    } catch (IllegalStateException e) {
      throw new IoEngineException(StatusCode.ERR_GPU_OP, e.getMessage(), e);
    } catch (IllegalArgumentException e) {
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, e.getMessage(), e);
    }
    try {
      MemoryDesc d = engine.registerMemory(block.atomicsAddress(), block.atomicsBytes(), -1, MemoryLocationType.CPU);
      RdmaMemoryRegion internal = add(block.atomicsAddress(), block.atomicsBytes(), GpuQueueLayout.ACCESS_LOCAL_WRITE, d,
          MemoryLocationType.CPU, -1, true, false);
      int qpn = nextQpn.incrementAndGet();
      block.init(qpn, internal.lkey(), settings.waitTimeoutNanos());
      RdmaEndpoint ep = new RdmaEndpoint(this, qpn, config, block, internal, proxy);
      endpoints.put(qpn, ep);
      proxy.submit(new Proxy.AddEndpoint(ep.runner));
      return ep;
    } catch (RuntimeException e) {
      block.close();
      throw e;
    }
  }

  /**
   * Connects {@code local} to the remote endpoint {@code remote} (one direction: the application connects the other
   * side itself, as MORI's example does). The remote engine must be registered with this engine; the remote context
   * is asked whether the endpoint exists, and is watched from now on.
   */
  public void connectEndpoint(RdmaEndpoint local, EndpointHandle remote) {
    checkOpen();
    if (local == null || remote == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "local and remote must not be null");
    if (local.ctx != this || local.isClosed())
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "endpoint qpn " + local.qpn() + " is not an open endpoint of context " + name);
    if (local.runner.connected()) throw new IoEngineException(StatusCode.ERR_BAD_STATE, "endpoint qpn " + local.qpn() + " is already connected");
    ActorRef<GpuInitProtocol.Command> peer;
    try {
      peer = ActorRefResolver.get(engine.actorSystem()).resolveActorRef(remote.contextPath());
    } catch (RuntimeException e) {
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "cannot resolve remote context '" + remote.contextPath() + "': " + e.getMessage(), e);
    }
    GpuInitProtocol.ProbeAnswer a;
    try {
      a = AskPattern.<GpuInitProtocol.Command, GpuInitProtocol.ProbeAnswer>ask(peer, r -> new GpuInitProtocol.Probe(remote.qpn(), r, self),
          CONTROL_WAIT, engine.actorSystem().scheduler()).toCompletableFuture().get(CONTROL_WAIT.toMillis() + 1000, TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new IoEngineException(StatusCode.ERR_TIMEOUT, "no answer from remote context " + remote.contextPath() + " within " + CONTROL_WAIT.toSeconds() + " s", e);
    }
    if (!a.found()) throw new IoEngineException(StatusCode.ERR_NOT_FOUND, "remote endpoint: " + a.message());
    MemoryDesc remoteInternal = MemoryDesc.fromBytes(a.desc());
    if (!remoteInternal.engineKey().equals(remote.engineKey()))
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "remote handle names engine '" + remote.engineKey() + "' but its context belongs to '"
          + remoteInternal.engineKey() + "'");
    // the engine's own routing check: unregistered, lost or restarted remote engines are refused here, with its code
    PathExplanation x = engine.explain(local.internal.desc(), remoteInternal);
    if (!x.transferable())
      throw new IoEngineException(StatusCode.ERR_NOT_FOUND, "no backend of engine '" + engine.key() + "' reaches engine '" + remote.engineKey() + "': " + x.summary());
    self.tell(new GpuInitProtocol.Watch(peer));
    peerContexts.add(peer);
    CompletableFuture<Void> done = new CompletableFuture<>();
    proxy.submit(new Proxy.Connect(local.runner, new Peer(remote.contextPath(), peer, remote.qpn(), remote.engineKey()), done));
    await(done, "connect endpoint qpn " + local.qpn());
  }

  private void await(CompletableFuture<Void> f, String what) {
    try {
      f.get(CONTROL_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new IoEngineException(StatusCode.ERR_TIMEOUT, what + ": the host proxy of context " + name + " did not answer within " + CONTROL_WAIT.toSeconds() + " s", e);
    }
  }

  /** The engine's ActorSystem is gone (engine closed first): its proxy thread and actors went with it. */
  private boolean systemGone() {
    return engine.actorSystem().getWhenTerminated().toCompletableFuture().isDone();
  }

  void closeEndpoint(RdmaEndpoint ep) {
    if (!closed && !systemGone()) {
      CompletableFuture<Void> done = new CompletableFuture<>();
      proxy.submit(new Proxy.RemoveEndpoint(ep.runner, done));
      await(done, "close endpoint qpn " + ep.qpn());
    }
    endpoints.remove(ep.qpn());
    RdmaMemoryRegion internal = ep.internal;
    if (regions.remove(internal.lkey(), internal)) drop(internal);
    ep.block.close();
  }

  /**
   * Test hook: this context's actor stops without telling its peers, as if its process had gone while its engine's
   * data path stayed up (what the liveness probe is for).
   */
  void testVanish() {
    closingTask.cancel();
    peerContexts.clear();
    self.tell(new GpuInitProtocol.Stop());
  }

  /** The engine's GPU runtime ({@code mori4j.gpu.runtime}), opened on first need. */
  GpuRuntime gpuRuntime() {
    GpuRuntime g = gpu;
    if (g == null) {
      synchronized (this) {
        if (gpu == null) gpu = GpuRuntimes.select(settings.gpuRuntime());
        g = gpu;
      }
    }
    return g;
  }

  /** Endpoint blocks open now in this process, over every context (tests check that closing frees them all). */
  public static int openEndpointBlocksInProcess() {
    return EndpointBlock.openInProcess();
  }

  private void checkOpen() {
    if (closed) throw new IoEngineException(StatusCode.ERR_BAD_STATE, "GPU-initiated context " + name + " is closed");
  }

  private void tellPeersClosing() {
    for (ActorRef<GpuInitProtocol.Command> p : peerContexts) p.tell(new GpuInitProtocol.Closing(self));
    peerContexts.clear();
  }

  /**
   * Tells the peer contexts this one is going (their endpoints to it fail with RETRY_EXC_ERR), closes every endpoint
   * (its block freed), deregisters every region, stops the proxy and the context actor.
   */
  @Override
  public void close() {
    if (closed) return;
    closingTask.cancel();
    if (!systemGone()) tellPeersClosing();
    for (RdmaEndpoint ep : new ArrayList<>(endpoints.values())) ep.close();
    closed = true;
    if (!systemGone()) {
      CompletableFuture<Void> done = new CompletableFuture<>();
      proxy.submit(new Proxy.Shutdown(done));
      try {
        done.get(CONTROL_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (Exception e) {
        LOG.warn("GPU-initiated context {}: the host proxy did not stop within {} s", name, CONTROL_WAIT.toSeconds());
      }
    }
    List<RdmaMemoryRegion> left = new ArrayList<>(regions.values());
    regions.clear();
    for (RdmaMemoryRegion mr : left) drop(mr);
    memory.close();
    self.tell(new GpuInitProtocol.Stop());
  }

  @Override
  public String toString() {
    return "RdmaDeviceContext[" + name + ", " + endpoints.size() + " endpoint(s), " + regions.size() + " region(s)]";
  }
}
