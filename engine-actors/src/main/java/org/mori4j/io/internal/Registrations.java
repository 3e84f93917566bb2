package org.mori4j.io.internal;

import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.pattern.StatusReply;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.IoEngineProtocol;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.MemoryRegistration;
import org.mori4j.io.RegistrationStats;
import org.mori4j.io.StatusCode;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.LongTable;

/**
 * The engine actor's memory registration, single and bulk: it checks each region, allocates ids and access
 * keys, asks every backend once per call (one {@link BackendActor.RegisterAll} per backend, whatever the
 * number of regions), and publishes the new {@link Routes.Local}s together. A region that lies inside a live
 * registration of the same kind and device (a tensor view, a block of a registered pool) is registered as a
 * view of it: the backends share the existing registration ({@link org.mori4j.transport.TransferBackend#registerView})
 * and a GPU view skips the driver's pointer check, since its allocation was checked already. Every call is
 * timed into {@link RegistrationStats}. Runs on the engine actor's thread only.
 */
final class Registrations {
  /** The engine actor's messages that belong to registration. */
  sealed interface Step extends IoEngineProtocol.Internal permits GpuChecked, Registered {}

  /** One registration call in progress: its regions, when it reached the engine, and how to answer. */
  private record Call(List<MemoryRegistration> specs, boolean bulk, long startNanos, Consumer<StatusReply<List<MemoryDesc>>> reply) {}

  /** The driver's pointer check of the call's GPU regions that are not views came back. */
  record GpuChecked(Call call, Routes.Local[] parents, int failedIndex, Throwable failure) implements Step {}

  /** Every backend answered (or one failed). */
  record Registered(Call call, List<LocalRegion> regions, Routes.Local[] parents, List<Map<BackendType, byte[]>> blobs,
                    String failure) implements Step {}

  private final ActorContext<IoEngineProtocol.Command> ctx;
  private final String engineKey;
  private final EngineSettings settings;
  private final GpuStaging gpu;
  private final LongTable<Routes.Local> locals;
  private final Map<BackendType, Routes.Backend> backends;
  private final Runnable publish;
  private final BooleanSupplier closed;
  private final SecureRandom random = new SecureRandom();
  private final RegistrationStats stats;
  /** Live registrations by memory kind and device, then by start address: the range cache's index. */
  private final Map<String, TreeMap<Long, List<Routes.Local>>> byStart = new HashMap<>();
  private long nextMemoryId = 1;
  /** The engine's incarnation, which every descriptor it hands out carries (H1: peer incarnations). */
  private final long incarnation;

  Registrations(ActorContext<IoEngineProtocol.Command> ctx, String engineKey, EngineSettings settings, GpuStaging gpu,
                LongTable<Routes.Local> locals, Map<BackendType, Routes.Backend> backends, Runnable publish, BooleanSupplier closed,
                RegistrationStats stats, long incarnation) {
    this.ctx = ctx;
    this.incarnation = incarnation;
    this.stats = stats;
    this.engineKey = engineKey;
    this.settings = settings;
    this.gpu = gpu;
    this.locals = locals;
    this.backends = backends;
    this.publish = publish;
    this.closed = closed;
  }

  RegistrationStats stats() {
    return stats;
  }

  void register(IoEngineProtocol.RegisterMemory m) {
    start(java.util.Arrays.asList(new MemoryRegistration(m.memory(), m.location(), m.deviceId())), false,
        r -> m.replyTo().tell(r.isSuccess() ? StatusReply.success(r.getValue().get(0)) : StatusReply.error(r.getError())));
  }

  void registerAll(IoEngineProtocol.RegisterMemories m) {
    if (m.regions() == null) {
      m.replyTo().tell(error(StatusCode.ERR_INVALID_ARGS, "regions must not be null"));
      return;
    }
    if (m.regions().isEmpty()) {
      m.replyTo().tell(StatusReply.success(List.of()));
      return;
    }
    start(new ArrayList<>(m.regions()), true, m.replyTo()::tell);
  }

  void handle(Step s) {
    switch (s) {
      case GpuChecked c -> gpuChecked(c);
      case Registered r -> registered(r);
    }
  }

  /** Region {@code l} was deregistered: it no longer serves as the parent of new views. */
  void forget(Routes.Local l) {
    TreeMap<Long, List<Routes.Local>> t = byStart.get(kind(l.desc().location(), l.desc().deviceId()));
    if (t == null) return;
    List<Routes.Local> at = t.get(l.desc().address());
    if (at == null) return;
    at.remove(l);
    if (at.isEmpty()) t.remove(l.desc().address());
    stats.recordDeregistered(1);
  }

  private static <T> StatusReply<T> error(StatusCode code, String message) {
    return StatusReply.error(new IoEngineException(code, message));
  }

  private void start(List<MemoryRegistration> specs, boolean bulk, Consumer<StatusReply<List<MemoryDesc>>> reply) {
    Call call = new Call(specs, bulk, System.nanoTime(), reply);
    if (closed.getAsBoolean()) {
      reply.accept(error(StatusCode.ERR_BAD_STATE, "engine '" + engineKey + "' is closed"));
      return;
    }
    Routes.Local[] parents = new Routes.Local[specs.size()];
    List<Integer> toCheck = new ArrayList<>();
    for (int i = 0; i < specs.size(); i++) {
      String bad = check(specs.get(i));
      if (bad != null) {
        reply.accept(error(StatusCode.ERR_INVALID_ARGS, where(call, i) + bad));
        return;
      }
      MemoryRegistration s = specs.get(i);
      parents[i] = containing(s.location(), s.deviceId(), s.memory().address(), s.memory().byteSize());
      if (parents[i] == null && s.location() == MemoryLocationType.GPU) toCheck.add(i);
    }
    if (toCheck.isEmpty()) {
      registerRegions(call, parents);
      return;
    }
    // the runtime is opened (first time only) and the pointers checked on the backend dispatcher: driver calls
    // that can block (cuInit takes hundreds of milliseconds) while the engine actor goes on with other messages
    java.util.concurrent.Executor blocking = ctx.getSystem().dispatchers().lookup(DispatcherSelector.fromConfig("mori4j.dispatchers.backend"));
    int[] failed = {-1};
    CompletableFuture<Void> check = CompletableFuture.runAsync(() -> {
      for (int i : toCheck) {
        failed[0] = i;
        MemorySegment seg = specs.get(i).memory();
        gpu.runtime().requireDeviceMemory(seg.address(), seg.byteSize(), specs.get(i).deviceId());
      }
      failed[0] = -1;
      // staging buffers and their streams for this device now, not on the data path (GpuStaging says why)
      for (int i : toCheck) {
        try {
          gpu.prewarm(specs.get(i).deviceId());
        } catch (RuntimeException e) {
          org.slf4j.LoggerFactory.getLogger(GpuStaging.class).warn("engine '{}': GPU staging buffers for device {} could not be prepared "
              + "ahead (they will be allocated on first use): {}", engineKey, specs.get(i).deviceId(), e.toString());
        }
      }
    }, blocking);
    ctx.pipeToSelf(check, (ok, err) -> new GpuChecked(call, parents, failed[0], err));
  }

  private static String where(Call call, int i) {
    return call.bulk() ? "regions[" + i + "]: " : "";
  }

  /** Why {@code s} cannot be registered, or null. Runs on the engine actor (the thread-accessibility check needs it). */
  private static String check(MemoryRegistration s) {
    if (s == null) return "must not be null";
    MemorySegment seg = s.memory();
    if (seg == null) return "memory must not be null";
    if (s.location() == null) return "location must not be null";
    if (s.location() == MemoryLocationType.GPU) {
      if (s.deviceId() < 0) return "deviceId must be >= 0 for GPU memory: " + s.deviceId();
      if (seg.byteSize() <= 0) return "size must be positive: " + seg.byteSize();
      return null;
    }
    if (!seg.isNative()) return "memory must be a native segment (off-heap), got a heap segment of " + seg.byteSize() + " bytes";
    if (seg.byteSize() <= 0) return "memory size must be positive: " + seg.byteSize();
    if (!seg.scope().isAlive()) return "memory segment is already closed";
    // the engine's I/O threads must be able to touch the memory: a confined arena's segment is not shareable
    if (!seg.isAccessibleBy(Thread.currentThread()))
      return "memory segment is confined to another thread; allocate it from a shared, automatic or global arena";
    return null;
  }

  private void gpuChecked(GpuChecked c) {
    Call call = c.call();
    if (closed.getAsBoolean()) {
      call.reply().accept(error(StatusCode.ERR_BAD_STATE, "engine '" + engineKey + "' is closed"));
      return;
    }
    Throwable err = c.failure();
    if (err instanceof java.util.concurrent.CompletionException && err.getCause() != null) err = err.getCause();
    if (err != null) {
      int i = Math.max(c.failedIndex(), 0);
      MemoryRegistration s = call.specs().get(i);
      String what = where(call, i);
      if (err instanceof IllegalArgumentException) {
        call.reply().accept(error(StatusCode.ERR_INVALID_ARGS, what + "address 0x" + Long.toHexString(s.memory().address()) + ", size "
            + s.memory().byteSize() + ", deviceId " + s.deviceId() + " is not usable GPU memory: " + err.getMessage()));
      } else {
        call.reply().accept(error(StatusCode.ERR_GPU_OP, what + "GPU memory cannot be registered (deviceId " + s.deviceId() + "): "
            + err.getMessage()));
      }
      return;
    }
    registerRegions(call, c.parents());
  }

  private long newAccessKey() {
    long accessKey;
    do accessKey = random.nextLong(); while (accessKey == 0);
    return accessKey;
  }

  private void registerRegions(Call call, Routes.Local[] parents) {
    List<LocalRegion> regions = new ArrayList<>(call.specs().size());
    LocalRegion[] parentRegions = new LocalRegion[parents.length];
    for (int i = 0; i < call.specs().size(); i++) {
      MemoryRegistration s = call.specs().get(i);
      long memId = nextMemoryId++;
      regions.add(s.location() == MemoryLocationType.GPU
          ? LocalRegion.gpu(memId, newAccessKey(), s.memory().address(), s.memory().byteSize(), s.deviceId())
          : new LocalRegion(memId, newAccessKey(), s.memory(), false, s.deviceId()));
      parentRegions[i] = parents[i] == null ? null : parents[i].region();
    }
    Map<BackendType, CompletableFuture<StatusReply<List<byte[]>>>> asks = new EnumMap<>(BackendType.class);
    backends.forEach((t, b) -> asks.put(t, AskPattern.<BackendActor.Command, StatusReply<List<byte[]>>>ask(b.actor(),
        r -> new BackendActor.RegisterAll(regions, parentRegions, r), settings.askTimeout(), ctx.getSystem().scheduler()).toCompletableFuture()));
    ctx.pipeToSelf(CompletableFuture.allOf(asks.values().toArray(CompletableFuture[]::new)), (ok, err) -> {
      List<Map<BackendType, byte[]>> blobs = new ArrayList<>(regions.size());
      for (int i = 0; i < regions.size(); i++) blobs.add(new EnumMap<>(BackendType.class));
      StringBuilder failures = new StringBuilder();
      asks.forEach((t, f) -> {
        StatusReply<List<byte[]>> r = f.isCompletedExceptionally() ? null : f.join();
        if (r != null && r.isSuccess()) {
          for (int i = 0; i < regions.size(); i++) if (r.getValue().get(i).length > 0) blobs.get(i).put(t, r.getValue().get(i));
        } else failures.append(t).append(": ").append(r == null ? "no answer" : r.getError().getMessage()).append(' ');
      });
      return new Registered(call, regions, parents, blobs, failures.isEmpty() ? null : failures.toString().trim());
    });
  }

  private void registered(Registered r) {
    Call call = r.call();
    if (r.failure() != null || closed.getAsBoolean()) {
      for (Routes.Backend b : backends.values()) for (LocalRegion l : r.regions()) b.actor().tell(new BackendActor.Deregister(l));
      call.reply().accept(r.failure() != null
          ? error(StatusCode.ERR_BAD_STATE, "memory registration failed: " + r.failure())
          : error(StatusCode.ERR_BAD_STATE, "engine '" + engineKey + "' is closed"));
      return;
    }
    List<MemoryDesc> descs = new ArrayList<>(r.regions().size());
    int views = 0;
    for (int i = 0; i < r.regions().size(); i++) {
      LocalRegion region = r.regions().get(i);
      MemoryRegistration s = call.specs().get(i);
      MemoryDesc d = new MemoryDesc(engineKey, region.id(), s.deviceId(), region.address(), region.size(), s.location(),
          region.accessKey(), r.blobs().get(i), incarnation);
      Routes.Local l = new Routes.Local(region, d);
      locals.put(region.id(), l);
      byStart.computeIfAbsent(kind(s.location(), s.deviceId()), k -> new TreeMap<>())
          .computeIfAbsent(region.address(), k -> new ArrayList<>(1)).add(l);
      descs.add(d);
      if (r.parents()[i] != null) views++;
    }
    publish.run();
    stats.recordCall(descs.size(), System.nanoTime() - call.startNanos(), views, (descs.size() - views) * backends.size());
    call.reply().accept(StatusReply.success(descs));
  }

  private static String kind(MemoryLocationType location, int deviceId) {
    return location + ":" + deviceId;
  }

  /** How many registrations below a view's start the index looks at before it gives up (a miss only costs a full registration). */
  private static final int SCAN = 16;

  /** A live registration of this kind and device that contains {@code [address, address + size)}, or null. */
  private Routes.Local containing(MemoryLocationType location, int deviceId, long address, long size) {
    TreeMap<Long, List<Routes.Local>> t = byStart.get(kind(location, deviceId));
    if (t == null) return null;
    long end = address + size;
    int seen = 0;
    for (Map.Entry<Long, List<Routes.Local>> e = t.floorEntry(address); e != null && seen < SCAN; e = t.lowerEntry(e.getKey()), seen++) {
      for (Routes.Local l : e.getValue()) {
        if (l.region().live() && end - l.desc().address() <= l.desc().size()) return l;
      }
    }
    return null;
  }
}
