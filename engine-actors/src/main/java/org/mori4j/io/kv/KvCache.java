package org.mori4j.io.kv;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.MemoryRegistration;
import org.mori4j.io.StatusCode;

/**
 * A paged KV cache registered on an engine: its buffers (CPU segments or GPU pointers) registered once, a
 * {@link KvCacheDesc} that carries the layout for peers, and the two roles of disaggregated serving. As a source
 * or destination it migrates a request's blocks to or from a remote cache ({@link #push}, {@link #pull},
 * {@link #openStream} + {@link #sendLayers}); as a receiver it learns "request R: layers a..b landed" by waiting
 * ({@link #awaitLanded}, {@link #whenLanded}), by callback or as an actor message ({@link #subscribe}). Names are
 * unique per engine. Closing it fails its open migrations, wakes its waiters and deregisters its buffers.
 */
public final class KvCache implements AutoCloseable {
  /** Requests a receiver keeps track of before the oldest are forgotten. */
  static final int MAX_TRACKED_REQUESTS = 65_536;
  /**
   * Migration ids a receiver remembers of the requests it was told to {@link #forget}, so their late notices are
   * dropped; the earliest forgotten leave first. At one id per request, the last 65,536 forgotten requests (1.5 MiB once full).
   */
  static final int MAX_FORGOTTEN_MIGRATIONS = 65_536;

  private final IoEngine engine;
  private final String name;
  private final KvCacheLayout layout;
  private final List<MemoryDesc> buffers;
  private final KvLandings landings;
  private final Map<String, KvMigration> open = new ConcurrentHashMap<>();
  private final Map<String, ActorRef<KvProtocol.Command>> endpoints = new ConcurrentHashMap<>();
  private final KvEndpoint endpoint;
  private final KvCacheDesc desc;
  private volatile int tcpBatchParts;
  private volatile long tcpMinPart;
  /** Layers in a migration's first batch call, doubling per call after ({@code mori4j.kv.first-chunk-layers}); 0: one call. */
  private volatile int firstChunkLayers;
  /** Its migration plans' arrays, kept between batch calls ({@code mori4j.kv.plan-pool-bytes}). */
  private final KvPlanArrays planArrays;
  private volatile boolean closed;

  private KvCache(IoEngine engine, String name, KvCacheLayout layout, List<MemoryDesc> buffers) {
    KvSettings settings = KvSettings.of(engine.actorSystem().settings().config());
    this.tcpBatchParts = settings.tcpBatchParts();
    this.tcpMinPart = settings.tcpMinPart();
    this.firstChunkLayers = settings.firstChunkLayers();
    this.planArrays = new KvPlanArrays(settings.planPoolBytes());
    this.engine = engine;
    this.name = name;
    this.layout = layout;
    this.buffers = List.copyOf(buffers);
    this.landings = new KvLandings(name, layout.layers(), MAX_TRACKED_REQUESTS, MAX_FORGOTTEN_MIGRATIONS);
    this.endpoint = KvEndpoint.register(this);
    this.desc = new KvCacheDesc(name, engine.key(), layout, this.buffers, endpoint.path);
  }

  /** A cache over host memory: one native segment per buffer of {@code layout}, each at least {@link KvCacheLayout#bufferBytes()}. */
  public static KvCache create(IoEngine engine, String name, KvCacheLayout layout, List<MemorySegment> buffers) {
    check(engine, name, layout);
    if (buffers == null || buffers.size() != layout.buffers())
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "cache '" + name + "': the layout has " + layout.buffers() + " buffers, got "
          + (buffers == null ? "null" : buffers.size()));
    for (int i = 0; i < buffers.size(); i++) {
      MemorySegment s = buffers.get(i);
      if (s == null || s.byteSize() < layout.bufferBytes())
        throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "cache '" + name + "': buffer " + i + " has " + (s == null ? "no segment" : s.byteSize() + " bytes")
            + ", the layout needs " + layout.bufferBytes());
    }
    // one bulk call: one round trip and one registration per backend for all the buffers (80-160 of them for a 70B model)
    List<MemoryDesc> descs;
    try {
      descs = engine.registerMemories(buffers.stream().map(MemoryRegistration::host).toList());
    } catch (IllegalArgumentException e) {
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, e.getMessage(), e);
    }
    return register(engine, name, layout, descs.size(), descs::get);
  }

  /**
   * A cache over raw pointers ({@code loc} GPU memory of device {@code deviceId}, or CPU memory the caller vouches
   * for), one per buffer, each {@code bufferBytes} long.
   */
  public static KvCache createAt(IoEngine engine, String name, KvCacheLayout layout, long[] addresses, long bufferBytes, int deviceId,
                                 MemoryLocationType loc) {
    check(engine, name, layout);
    if (addresses == null || addresses.length != layout.buffers())
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "cache '" + name + "': the layout has " + layout.buffers() + " buffers, got "
          + (addresses == null ? "null" : addresses.length) + " addresses");
    if (bufferBytes < layout.bufferBytes())
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "cache '" + name + "': bufferBytes " + bufferBytes + " is less than the layout needs, " + layout.bufferBytes());
    return register(engine, name, layout, addresses.length, i -> engine.registerMemory(addresses[i], bufferBytes, deviceId, loc));
  }

  private static void check(IoEngine engine, String name, KvCacheLayout layout) {
    if (engine == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "engine must not be null");
    if (name == null || name.isBlank() || name.length() > 255)
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "cache name must be 1..255 characters, not blank: '" + name + "'");
    if (layout == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "layout must not be null");
  }

  private static KvCache register(IoEngine engine, String name, KvCacheLayout layout, int n, java.util.function.IntFunction<MemoryDesc> reg) {
    List<MemoryDesc> descs = new ArrayList<>(n);
    try {
      for (int i = 0; i < n; i++) descs.add(reg.apply(i));
      return new KvCache(engine, name, layout, descs);
    } catch (RuntimeException e) {
      for (MemoryDesc d : descs) {
        try {
          engine.deregisterMemory(d);
        } catch (RuntimeException ignored) {
          // the engine may be closing; its close frees the rest
        }
      }
      if (e instanceof IllegalArgumentException) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, e.getMessage(), e);
      throw e;
    }
  }

  public IoEngine engine() { return engine; }

  public String name() { return name; }

  public KvCacheLayout layout() { return layout; }

  /** This cache's descriptor for peers. */
  public KvCacheDesc desc() { return desc; }

  MemoryDesc bufferDesc(int i) { return buffers.get(i); }

  KvLandings landings() { return landings; }

  /**
   * Requests each batch to {@code remote} is cut into: {@code mori4j.kv.tcp-batch-parts} when the engine reaches
   * it over TCP (a batch is one request on one connection there), else 1 (one kernel launch on XGMI, one chained
   * post on RDMA).
   */
  public int batchParts(KvCacheDesc remote) {
    return overTcp(remote) ? tcpBatchParts : 1;
  }

  int tcpBatchParts() { return tcpBatchParts; }

  /** Whether the engine moves this cache's bytes to {@code remote} over TCP; a pair it cannot explain is not (the transfer says why). */
  boolean overTcp(KvCacheDesc remote) {
    return route(remote) == org.mori4j.io.BackendType.TCP;
  }

  /**
   * The backend the engine picks between this cache's first buffer and {@code remote}'s, or null where it cannot say
   * (the transfer then says why). One {@code explain} per migration: its answer decides both the TCP cut and the board.
   */
  org.mori4j.io.BackendType route(KvCacheDesc remote) {
    if (remote == null || remote.buffers().isEmpty()) return null;
    try {
      return engine.explain(buffers.get(0), remote.buffers().get(0)).chosen();
    } catch (IoEngineException | IllegalArgumentException e) {
      return null;
    }
  }

  /** The landing board of {@code remote}'s engine this cache's writes post to (XGMI peers on this host), or null. */
  KvLandingBoard landingBoard(KvCacheDesc remote) {
    return endpoint.boards.forPeer(buffers.get(0), remote);
  }

  /** {@link #landingBoard(KvCacheDesc)} where the route is known already ({@link #route}): no second {@code explain}. */
  KvLandingBoard landingBoard(KvCacheDesc remote, org.mori4j.io.BackendType route) {
    return route == org.mori4j.io.BackendType.XGMI ? endpoint.boards.forXgmiPeer(remote) : null;
  }

  /** Layers in a migration's first batch call ({@code mori4j.kv.first-chunk-layers}); 0: all layers in one call. */
  int firstChunkLayers() { return firstChunkLayers; }

  /** The pool its migrations' plan arrays come from and go back to. */
  KvPlanArrays planArrays() { return planArrays; }

  /**
   * Plan-array takes by this cache's migrations so far and how many the pool served (a steady stream of similar
   * requests: nearly all); for kv-bench's report and tests. Not a stable API.
   */
  public long[] planArrayReuse() { return planArrays.takenAndReused(); }

  /** Tests: issue migrations opened from now on in calls of {@code first} layers, doubling (0: one call). */
  void chunkLayers(int first) {
    if (first < 0) throw new IllegalArgumentException("first must be at least 0: " + first);
    this.firstChunkLayers = first;
  }

  /** This engine's id in landing-board entries. */
  long boardSenderId() {
    return endpoint.boards.senderId;
  }

  /** This engine's incarnation in landing-board entries. */
  long boardIncarnation() {
    return endpoint.boards.incarnation;
  }

  /** Batches below twice this are not cut ({@code mori4j.kv.tcp-min-part}); see {@link KvTransferPlan#split}. */
  public long minPartBytes() { return tcpMinPart; }

  /** Tests: cut TCP batches of migrations opened from now on as {@code parts} of at least {@code minPart} bytes. */
  void cutForTcp(int parts, long minPart) {
    if (parts < 1 || minPart < 1) throw new IllegalArgumentException("parts and minPart must be at least 1: " + parts + ", " + minPart);
    this.tcpBatchParts = parts;
    this.tcpMinPart = minPart;
  }

  /** Writes blocks {@code localBlocks[i]} of this cache into {@code remoteBlocks[i]} of {@code remote}, every layer. */
  public KvMigration push(String requestId, int[] localBlocks, KvCacheDesc remote, int[] remoteBlocks) {
    return migrate(requestId, localBlocks, remote, remoteBlocks, KvMigration.Mode.PUSH);
  }

  /** Reads blocks {@code remoteBlocks[i]} of {@code remote} into {@code localBlocks[i]} of this cache, every layer. */
  public KvMigration pull(String requestId, int[] remoteBlocks, KvCacheDesc remote, int[] localBlocks) {
    return migrate(requestId, remoteBlocks, remote, localBlocks, KvMigration.Mode.PULL);
  }

  /**
   * Moves {@code srcBlocks[i]} to {@code dstBlocks[i]} for every layer: {@code PUSH} from this cache to {@code remote}
   * (source blocks are this cache's), {@code PULL} from {@code remote} into this cache (source blocks are the
   * remote's). {@code STREAM} opens a push whose layers go with {@link #sendLayers}.
   */
  public KvMigration migrate(String requestId, int[] srcBlocks, KvCacheDesc remote, int[] dstBlocks, KvMigration.Mode mode) {
    if (mode == null) return KvMigration.refused(requestId, KvMigration.Mode.PUSH, "mode must not be null");
    if (requestId == null || requestId.isEmpty() || requestId.length() > 1024)
      return KvMigration.refused(String.valueOf(requestId), mode, "requestId must be 1..1024 characters");
    if (closed) return KvMigration.refused(requestId, mode, "cache '" + name + "' is closed");
    if (remote == null) return KvMigration.refused(requestId, mode, "remote must not be null");
    String mismatch = layout.mismatch(remote.layout());
    if (mismatch != null)
      return KvMigration.refused(requestId, mode, "cache '" + remote.name() + "' of engine '" + remote.engineKey() + "' does not match cache '" + name + "': " + mismatch);
    boolean pull = mode == KvMigration.Mode.PULL;
    try {
      KvTransferPlan.checkBlocks(pull ? remote.layout() : layout, srcBlocks, pull ? layout : remote.layout(), dstBlocks);
    } catch (IllegalArgumentException e) {
      return KvMigration.refused(requestId, mode, e.getMessage());
    }
    ActorRef<KvProtocol.Command> ep;
    try {
      ep = pull ? null : endpoints.computeIfAbsent(remote.endpoint(), p -> ActorRefResolver.get(engine.actorSystem()).resolveActorRef(p));
    } catch (RuntimeException e) {
      return KvMigration.refused(requestId, mode, "cannot resolve the remote cache's endpoint '" + remote.endpoint() + "': " + e.getMessage());
    }
    KvMigration m = new KvMigration(requestId, mode, this, remote, srcBlocks.clone(), dstBlocks.clone(), ep);
    if (open.putIfAbsent(requestId, m) != null) return KvMigration.refused(requestId, mode, "a migration of this request is already open on cache '" + name + "'");
    if (mode != KvMigration.Mode.STREAM) m.issue(0, layout.layers());
    else m.announceLayers();
    return m;
  }

  /** Opens a layer-streamed push of a request; send its layers with {@link #sendLayers} as they are computed. */
  public KvMigration openStream(String requestId, int[] localBlocks, KvCacheDesc remote, int[] remoteBlocks) {
    return migrate(requestId, localBlocks, remote, remoteBlocks, KvMigration.Mode.STREAM);
  }

  /** Sends layers {@code [fromLayer, toLayer)} of the open stream {@code requestId}; see {@link KvMigration#sendLayers}. */
  public CompletionStage<KvMigration.Chunk> sendLayers(String requestId, int fromLayer, int toLayer) {
    KvMigration m = requestId == null ? null : open.get(requestId);
    if (m == null)
      return CompletableFuture.completedFuture(new KvMigration.Chunk(fromLayer, toLayer, StatusCode.ERR_NOT_FOUND,
          "no open stream for request '" + requestId + "' on cache '" + name + "'"));
    return m.sendLayers(fromLayer, toLayer);
  }

  /** The open migration of {@code requestId}, if any. */
  public java.util.Optional<KvMigration> migration(String requestId) {
    return java.util.Optional.ofNullable(requestId == null ? null : open.get(requestId));
  }

  void ended(KvMigration m) {
    open.remove(m.requestId(), m);
  }

  /**
   * Receiver side: completes with null when layers {@code [fromLayer, toLayer)} of {@code requestId} have landed in
   * this cache, or with the reason they never will (the sender cancelled or failed, the cache closed).
   */
  public CompletionStage<String> whenLanded(String requestId, int fromLayer, int toLayer) {
    if (closed) return CompletableFuture.completedFuture("cache '" + name + "' is closed");
    return landings.whenLanded(requestId, fromLayer, toLayer);
  }

  /** Waits until layers {@code [fromLayer, toLayer)} of {@code requestId} landed; false on timeout or if they never will. */
  public boolean awaitLanded(String requestId, int fromLayer, int toLayer, Duration timeout) {
    try {
      return whenLanded(requestId, fromLayer, toLayer).toCompletableFuture().get(timeout.toNanos(), TimeUnit.NANOSECONDS) == null;
    } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * Calls {@code listener} for every landed range and aborted request, on the endpoint's thread or, for ranges an XGMI
   * sender reported through this engine's landing board, on the board's reader thread: keep it short.
   */
  public AutoCloseable subscribe(Consumer<KvLayersLanded> listener) {
    if (listener == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "listener must not be null");
    return landings.subscribe(listener);
  }

  /** Tells {@code subscriber} every landed range and aborted request: the actor-message form of {@link #subscribe(Consumer)}. */
  public AutoCloseable subscribe(ActorRef<KvLayersLanded> subscriber) {
    if (subscriber == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "subscriber must not be null");
    return landings.subscribe(subscriber::tell);
  }

  /**
   * Receiver side: drops what is known of {@code requestId} (its waiters learn it was forgotten). A range is told
   * twice (the receiving engine's own record or landing board first, the sender's message after), so a notice can
   * still be in flight when the request is forgotten: this cache keeps the ids of the migrations it had heard of for
   * the request (the last {@value #MAX_FORGOTTEN_MIGRATIONS} ids forgotten) and drops their later notices, so
   * subscribers and waiters hear nothing more of them. A new migration under the same request id (a retry) has a new
   * id and is reported as a new request. Beyond the bound, or for a migration whose first notice arrives only after
   * the forget, a late notice is reported as a new request.
   */
  public void forget(String requestId) {
    landings.forget(requestId);
  }

  /** Fails open migrations, wakes waiters, deregisters the buffers. */
  @Override
  public void close() {
    if (closed) return;
    closed = true;
    for (KvMigration m : List.copyOf(open.values())) m.finish(StatusCode.ERR_BAD_STATE, "request '" + m.requestId() + "': cache '" + name + "' closed");
    landings.closeAll("cache '" + name + "' closed");
    endpoint.unregister(this);
    for (MemoryDesc d : buffers) {
      try {
        engine.deregisterMemory(d);
      } catch (IoEngineException e) {
        // the engine closed first: its close freed the registration
      }
    }
  }
}
