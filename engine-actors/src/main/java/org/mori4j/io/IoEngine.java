package org.mori4j.io;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.pattern.StatusReply;
import org.mori4j.io.internal.ControlCalls;
import org.mori4j.io.internal.EngineActor;
import org.mori4j.io.internal.EngineSettings;
import org.mori4j.io.internal.EngineStart;
import org.mori4j.io.internal.TransferPath;
import org.mori4j.transport.TransferOp;

/**
 * The MORI-IO engine for the JVM: create backends, register memory and remote engines, and move bytes with
 * one-sided reads and writes, batches and sessions. Control calls block until the engine actor has done
 * them and throw {@link IoEngineException} on failure; transfer calls never block and never throw: they
 * return a {@link TransferStatus} at once. The engine is an actor ({@link #actorRef()}); this class is a
 * thin facade over it. Close it to fail what is in flight and free every socket and thread.
 */
public final class IoEngine implements AutoCloseable {
  private final String key;
  private final ActorSystem<?> system;
  private final boolean ownsSystem;
  private final ActorRef<IoEngineProtocol.Command> engine;
  private final TransferPath path;
  private final EngineSettings settings;
  private final Object keyToken;
  private final ControlCalls calls;
  private volatile boolean closed;

  private IoEngine(String key, EngineStart.Started started) {
    this.key = key;
    this.system = started.system();
    this.ownsSystem = started.ownsSystem();
    this.engine = started.engine();
    this.path = started.path();
    this.settings = started.settings();
    this.keyToken = started.keyToken();
    this.calls = new ControlCalls(key, system, engine, settings, () -> closed);
  }

  /**
   * Starts an engine with its own ActorSystem, whose remoting binds {@code config.host():config.port()}
   * (port 0 picks a free port). Engines in other processes reach it through its {@link #engineDesc()}.
   *
   * <p>A configuration setting ({@code mori4j.*}, however it was given) with a value the engine refuses fails the
   * start with {@link IoEngineException} {@link StatusCode#ERR_INVALID_ARGS} naming the key, its environment variable
   * and the value, before anything starts; an address that cannot be bound (a port in use, a host that is not this
   * machine's) fails it with {@link StatusCode#ERR_TRANSPORT}. Either way the key stays free for another start. The TCP
   * data port ({@code mori4j.tcp.port}) is bound later, by {@link #createBackend}, which fails the same way when it is in use.
   */
  public static IoEngine create(String key, IoEngineConfig config) {
    return new IoEngine(key, EngineStart.standalone(key, config));
  }

  /**
   * Starts an engine inside the application's ActorSystem (as a system actor). Engines in other processes
   * can reach it only if that system has remoting enabled; its descriptor then carries that address.
   *
   * <p>A setting of {@code system}'s configuration that the engine refuses fails the start with {@link IoEngineException}
   * {@link StatusCode#ERR_INVALID_ARGS} naming the key, its environment variable and the value; a {@code system} that
   * refuses the engine's actor, with {@link StatusCode#ERR_BAD_STATE}. Nothing is bound here: the TCP data port
   * ({@code mori4j.tcp.port}) is bound by {@link #createBackend}, which fails with {@link StatusCode#ERR_TRANSPORT}
   * when it is in use.
   */
  public static IoEngine create(ActorSystem<?> system, String key, IoEngineConfig config) {
    return new IoEngine(key, EngineStart.embedded(system, key, config));
  }

  public String key() {
    return key;
  }

  /** This engine's descriptor, to be passed to other engines. */
  public EngineDesc engineDesc() {
    return ask(IoEngineProtocol.GetEngineDesc::new);
  }

  public void createBackend(BackendType type, BackendConfig config) {
    if (type == null || config == null)
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "type and config must not be null (type " + type + ")");
    if (config.type() != type)
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "backend type " + type + " does not match its config " + config.getClass().getSimpleName());
    this.<Done>askStatus(r -> new IoEngineProtocol.CreateBackend(config, r));
  }

  public void removeBackend(BackendType type) {
    this.<Done>askStatus(r -> new IoEngineProtocol.RemoveBackend(type, r));
  }

  /** Registers a remote engine and connects every backend both engines have; throws if none can connect. */
  public void registerRemoteEngine(EngineDesc remote) {
    this.<Done>askStatus(r -> new IoEngineProtocol.RegisterRemoteEngine(remote, r));
  }

  public void deregisterRemoteEngine(EngineDesc remote) {
    this.<Done>askStatus(r -> new IoEngineProtocol.DeregisterRemoteEngine(remote, r));
  }

  /**
   * Declares engine {@code remoteEngineKey} lost: it is dropped, what is in flight to it and its sessions fail
   * with {@code ERR_PEER_LOST}, and until it is registered again every transfer, batch and
   * {@code createSession} to it fails at once with {@code ERR_PEER_LOST} and a message naming it and
   * {@code reason}. The cluster module calls it when a member becomes unreachable or leaves
   * ({@link IoEngineProtocol.MarkPeerLost}).
   */
  public void markPeerLost(String remoteEngineKey, String reason) {
    this.<Done>askStatus(r -> new IoEngineProtocol.MarkPeerLost(remoteEngineKey, reason, r));
  }

  /** Registers host memory; the segment must be native (off-heap) and stay alive while registered. */
  public MemoryDesc registerMemory(MemorySegment hostMemory) {
    return askStatus(r -> new IoEngineProtocol.RegisterMemory(hostMemory, MemoryLocationType.CPU, -1, r));
  }

  /**
   * Registers memory by raw address, as MORI does. For CPU memory the caller vouches that
   * {@code [address, address+size)} is mapped and stays so while registered: the JVM cannot check a raw pointer.
   */
  public MemoryDesc registerMemory(long address, long size, int deviceId, MemoryLocationType loc) {
    if (loc == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "loc must not be null");
    if (address == 0) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "address must not be 0");
    if (size <= 0) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "size must be positive: " + size);
    if (address + size < address && address + size != 0)
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "address 0x" + Long.toHexString(address) + " + size " + size + " wraps around");
    return askStatus(r -> new IoEngineProtocol.RegisterMemory(MemorySegment.ofAddress(address).reinterpret(size), loc, deviceId, r));
  }

  public void deregisterMemory(MemoryDesc desc) {
    this.<Done>askStatus(r -> new IoEngineProtocol.DeregisterMemory(desc, r));
  }

  /**
   * Registers many regions with one round trip to the engine, which asks each backend once for all of them;
   * returns their descriptors in order. All or none: a region the engine refuses fails the call with a message
   * naming its index, and nothing is registered. A region inside one already registered (same kind and
   * device) is served by the range cache, as with the single-region calls. (Named apart from
   * {@code registerMemory} so that existing calls with a literal {@code null} stay unambiguous.)
   */
  public List<MemoryDesc> registerMemories(List<MemoryRegistration> regions) {
    if (regions == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "regions must not be null");
    return askStatus(r -> new IoEngineProtocol.RegisterMemories(new java.util.ArrayList<>(regions), r));
  }

  /** Deregisters many regions with one round trip; all or none, as {@link #registerMemories(List)}. */
  public void deregisterMemories(List<MemoryDesc> descs) {
    if (descs == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "descs must not be null");
    this.<Done>askStatus(r -> new IoEngineProtocol.DeregisterMemories(new java.util.ArrayList<>(descs), r));
  }

  /**
   * What registration has cost this engine: regions, time per region, range-cache hits, backend registrations
   * (live counters, readable from any thread; a metrics registry can bind them).
   */
  public RegistrationStats registrationStats() {
    return path.registrationStats();
  }

  /** Makes this engine answer {@link #lookupMemory} from other engines for {@code name}. */
  public void publishMemory(String name, MemoryDesc desc) {
    this.<Done>askStatus(r -> new IoEngineProtocol.PublishMemory(name, desc, r));
  }

  /**
   * Stops this engine answering {@link #lookupMemory} for {@code name}; true when the name was published. The
   * memory stays registered, and descriptors already handed out keep working until it is deregistered.
   */
  public boolean unpublishMemory(String name) {
    return this.<Boolean>askStatus(r -> new IoEngineProtocol.UnpublishMemory(name, r));
  }

  /** Asks the engine whose control plane listens at {@code host:port} (a standalone engine) for its descriptor. */
  public EngineDesc discover(String host, int port) {
    if (host == null || port <= 0 || port > 65535)
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "bad address " + host + ":" + port);
    ActorRef<IoEngineProtocol.Command> remote = calls.resolve("pekko://" + settings.systemName() + "@" + host + ":" + port + "/user");
    return calls.askOther(remote, IoEngineProtocol.GetEngineDesc::new, "engine at " + host + ":" + port);
  }

  /** Looks up a descriptor that {@code remote} published under {@code name}. */
  public Optional<MemoryDesc> lookupMemory(EngineDesc remote, String name) {
    if (remote == null || name == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "remote and name must not be null");
    IoEngineProtocol.MemoryLookup r = calls.askOther(calls.resolve(remote.controlPath()),
        ref -> new IoEngineProtocol.LookupMemory(name, ref), "engine '" + remote.key() + "'");
    return r.desc();
  }

  /**
   * What a transfer between {@code local} and {@code remote} would use now, and why: the backend chosen, the
   * others with their reasons, staging or direct, the connection or device (see {@link PathExplanation}). Reads
   * the engine's current routes without a round trip. Throws {@link IoEngineException} for descriptors a
   * transfer would refuse (not registered, another engine's, a lost engine), with the code the transfer would fail with.
   */
  public PathExplanation explain(MemoryDesc local, MemoryDesc remote) {
    return path.explainer().explain(local, remote);
  }

  public long allocateTransferUid() {
    return path.allocateUid();
  }

  public TransferStatus read(MemoryDesc localDst, long localOffset, MemoryDesc remoteSrc, long remoteOffset, long size, long uid) {
    return read(localDst, localOffset, remoteSrc, remoteOffset, size, uid, null);
  }

  /** {@link #read} with per-call {@code options} (a deadline; null: the engine's default). */
  public TransferStatus read(MemoryDesc localDst, long localOffset, MemoryDesc remoteSrc, long remoteOffset, long size, long uid,
                             TransferOptions options) {
    return path.withDeadline(path.single(TransferOp.READ, localDst, localOffset, remoteSrc, remoteOffset, size, uid), options);
  }

  public TransferStatus write(MemoryDesc localSrc, long localOffset, MemoryDesc remoteDst, long remoteOffset, long size, long uid) {
    return write(localSrc, localOffset, remoteDst, remoteOffset, size, uid, null);
  }

  /** {@link #write} with per-call {@code options} (a deadline; null: the engine's default). */
  public TransferStatus write(MemoryDesc localSrc, long localOffset, MemoryDesc remoteDst, long remoteOffset, long size, long uid,
                              TransferOptions options) {
    return path.withDeadline(path.single(TransferOp.WRITE, localSrc, localOffset, remoteDst, remoteOffset, size, uid), options);
  }

  /**
   * One status per (local, remote) pair; pair {@code i} moves {@code sizes[i][j]} bytes per block. The engine reads the
   * offset and size arrays only during this call (a backend that works on them later takes a copy), so the caller may
   * reuse or overwrite them as soon as it returns.
   */
  public List<TransferStatus> batchRead(List<MemoryDesc> localDst, List<long[]> localOffsets, List<MemoryDesc> remoteSrc,
                                        List<long[]> remoteOffsets, List<long[]> sizes, long[] uids) {
    return batchRead(localDst, localOffsets, remoteSrc, remoteOffsets, sizes, uids, null);
  }

  /** {@link #batchRead} with per-call {@code options}: each entry gets the deadline. */
  public List<TransferStatus> batchRead(List<MemoryDesc> localDst, List<long[]> localOffsets, List<MemoryDesc> remoteSrc,
                                        List<long[]> remoteOffsets, List<long[]> sizes, long[] uids, TransferOptions options) {
    return path.withDeadline(path.batches(TransferOp.READ, localDst, localOffsets, remoteSrc, remoteOffsets, sizes, uids), options);
  }

  /** The write twin of {@link #batchRead}: the same shapes, and the arrays may be reused once it returns. */
  public List<TransferStatus> batchWrite(List<MemoryDesc> localSrc, List<long[]> localOffsets, List<MemoryDesc> remoteDst,
                                         List<long[]> remoteOffsets, List<long[]> sizes, long[] uids) {
    return batchWrite(localSrc, localOffsets, remoteDst, remoteOffsets, sizes, uids, null);
  }

  /** {@link #batchWrite} with per-call {@code options}: each entry gets the deadline. */
  public List<TransferStatus> batchWrite(List<MemoryDesc> localSrc, List<long[]> localOffsets, List<MemoryDesc> remoteDst,
                                         List<long[]> remoteOffsets, List<long[]> sizes, long[] uids, TransferOptions options) {
    return path.withDeadline(path.batches(TransferOp.WRITE, localSrc, localOffsets, remoteDst, remoteOffsets, sizes, uids), options);
  }

  /**
   * A session between a registered local region and a remote one; empty when no backend of this engine can
   * serve the pair. Throws {@link IoEngineException} when a descriptor is not registered.
   */
  public Optional<IoEngineSession> createSession(MemoryDesc local, MemoryDesc remote) {
    return SessionOpening.open(key, path, calls, local, remote);
  }

  /** Target side: whether transfer {@code uid} from engine {@code remoteEngineKey} landed (and is now forgotten). */
  public Optional<TransferStatus> popInboundTransferStatus(String remoteEngineKey, long uid) {
    if (remoteEngineKey == null) return Optional.empty();
    return EngineActor.popInbound(path.routes(), remoteEngineKey, uid);
  }

  /**
   * Target side, the push form of {@link #popInboundTransferStatus}: {@code listener} is told (initiator's engine
   * key, uid) of every notified write from a remote engine as soon as it landed and was recorded, so a receiver
   * that knows which uids to expect learns of them without polling; it still pops them. Called on the backend's
   * I/O thread: keep it short and never block. TCP and RDMA targets tell it; XGMI targets are never told of writes
   * (see {@code XgmiBackend}). Close the returned handle to stop.
   */
  public AutoCloseable onInboundLanded(InboundListener listener) {
    if (listener == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "listener must not be null");
    return path.inboundLanded().add(listener);
  }

  /** See {@link #onInboundLanded}. */
  public interface InboundListener {
    /** Write {@code uid} of engine {@code initiatorKey} landed; {@link #popInboundTransferStatus} now finds it. */
    void landed(String initiatorKey, long uid);

    /** Everything recorded from {@code initiatorKey} was dropped (it restarted as a new incarnation; its uids start again). */
    default void forgotten(String initiatorKey) {}
  }

  /** Waits for all statuses; returns SUCCESS, the first failure's code, or ERR_TIMEOUT if time ran out. */
  public StatusCode waitAll(Collection<TransferStatus> statuses, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    StatusCode result = StatusCode.SUCCESS;
    for (TransferStatus s : statuses) {
      long left = deadline - System.nanoTime();
      if (!s.await(Duration.ofNanos(Math.max(0, left)))) return StatusCode.ERR_TIMEOUT;
      if (s.failed() && result == StatusCode.SUCCESS) result = s.code();
    }
    return result;
  }

  /** The actor-message API: the engine actor. */
  public ActorRef<IoEngineProtocol.Command> actorRef() {
    return engine;
  }

  /**
   * Exports this engine's metrics through {@code registry} (engine-actors/docs/metrics.md, "Metrics": meter names and
   * tags), from now until {@link #close()}, which removes them. With Micrometer's Prometheus registry, scraping it
   * shows them. Without a bound registry the engine still keeps its counters ({@link #metrics()}, JMX). One
   * registry per engine (binding the same one again does nothing); bind a {@code CompositeMeterRegistry} to feed
   * several. Throws {@link IoEngineException} ({@code ERR_BAD_STATE}) when metrics are off
   * ({@code mori4j.metrics.enabled}) or another registry is bound.
   */
  public void bindMetrics(io.micrometer.core.instrument.MeterRegistry registry) {
    if (closed) throw new IoEngineException(StatusCode.ERR_BAD_STATE, "engine '" + key + "' is closed");
    path.meters().bind(registry);
  }

  /** This engine's metrics as totals (what its MBean {@code org.mori4j:type=IoEngine,name=<key>} shows), read live. */
  public org.mori4j.io.metrics.IoEngineMetricsMXBean metrics() {
    return path.meters().totals();
  }

  /** The ActorSystem the engine runs in. */
  public ActorSystem<?> actorSystem() {
    return system;
  }

  /** Fails what is in flight, closes every backend, and stops the engine (and its ActorSystem, if it owns one). */
  @Override
  public void close() {
    if (closed) return;
    closed = true;
    try {
      // false: the engine actor is gone or stuck; the system shutdown below still releases its resources
      calls.shutdown();
    } finally {
      if (ownsSystem) {
        system.terminate();
        try {
          system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
          // best effort: the system's threads are daemon-free but terminate on their own
        }
      }
      path.meters().close();
      EngineStart.releaseKey(key, keyToken);
    }
  }

  private <T> T ask(Function<ActorRef<T>, IoEngineProtocol.Command> make) {
    return calls.ask(make);
  }

  private <T> T askStatus(Function<ActorRef<StatusReply<T>>, IoEngineProtocol.Command> make) {
    return calls.askStatus(make);
  }
}
