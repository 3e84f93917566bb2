package org.mori4j.io.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.PathExplanation;
import org.mori4j.io.PathExplanation.Reason;
import org.mori4j.io.PathExplanation.Refusal;
import org.mori4j.io.StatusCode;
import org.mori4j.transport.ServeRefusal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds {@link PathExplanation}s from the current {@link Routes} and what the engine actor told it (backends
 * whose creation failed and why, backends that failed to connect to a peer and why), and warns once per engine
 * pair, backend and kinds of memory when transfers take a slower path than the pair could have. The data
 * path calls {@link #noteChosen} for every transfer: after the first transfer of a combination it costs one
 * map lookup that does not allocate. Thread-safe.
 */
public final class PathExplainer {
  private static final Logger log = LoggerFactory.getLogger(PathExplainer.class);

  private record CreateFailure(Reason reason, String message) {}

  private final String engineKey;
  private final TransferPath path;
  private final ConcurrentHashMap<BackendType, CreateFailure> createFailures = new ConcurrentHashMap<>();
  /** Backend type name + '|' + peer key to why connecting failed. */
  private final ConcurrentHashMap<String, String> connectFailures = new ConcurrentHashMap<>();
  /** Peer key to the combinations (backend, local kind, remote kind) already checked for the slower-path warning. */
  private final ConcurrentHashMap<String, Integer> checked = new ConcurrentHashMap<>();

  PathExplainer(String engineKey, TransferPath path) {
    this.engineKey = engineKey;
    this.path = path;
  }

  /** {@code createBackend(type)} failed with {@code code} and {@code message}. */
  public void createFailed(BackendType type, StatusCode code, String message) {
    Reason reason;
    if (type == BackendType.RDMA && message.contains("no RDMA device")) reason = Reason.RDMA_ABSENT;
    else if (code == StatusCode.ERR_GPU_OP && message.contains("needs a GPU runtime")) reason = Reason.NO_GPU_RUNTIME;
    else reason = Reason.BACKEND_NOT_CREATED;
    createFailures.put(type, new CreateFailure(reason, message));
  }

  /** {@code type} started: its earlier creation failure is history. */
  public void created(BackendType type) {
    createFailures.remove(type);
  }

  /** Connecting {@code type} to engine {@code peerKey} succeeded ({@code why} null) or failed with {@code why}. */
  public void connectResult(String peerKey, BackendType type, String why) {
    if (why == null) connectFailures.remove(type.name() + '|' + peerKey);
    else connectFailures.put(type.name() + '|' + peerKey, why);
  }

  /** What a transfer between {@code local} and {@code remote} would use now; throws for descriptors a transfer would refuse. */
  public PathExplanation explain(MemoryDesc local, MemoryDesc remote) {
    Routes r = path.routes();
    String err = path.check(r, local, "local", remote, "remote");
    if (err != null) {
      if (err.equals("closed")) throw new IoEngineException(StatusCode.ERR_BAD_STATE, "engine '" + engineKey + "' is closed");
      if (err.startsWith("!")) throw new IoEngineException(StatusCode.ERR_NOT_FOUND, err.substring(1));
      if (err.startsWith("~")) throw new IoEngineException(StatusCode.ERR_PEER_LOST, err.substring(1));
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, err);
    }
    return build(r, r.locals().get(local.id()), r.peers().get(remote.engineKey()), remote);
  }

  /**
   * The data path chose {@code chosen} for this pair: the first time per peer, backend and kinds of memory, check
   * whether the pair could have had a faster path and say so at WARN.
   */
  void noteChosen(Routes r, Routes.Local l, Routes.Peer p, MemoryDesc remote, Routes.Backend chosen) {
    if (chosen.type() == BackendType.XGMI) return; // the fastest there is
    boolean lg = l.region().gpu();
    boolean rg = remote.location() == MemoryLocationType.GPU;
    // host memory over the engine's only backend, none having failed to start: nothing faster was possible
    if (!lg && !rg && r.backends().size() == 1 && createFailures.isEmpty()) return;
    int bit = 1 << (chosen.type().ordinal() * 4 + (lg ? 2 : 0) + (rg ? 1 : 0));
    String key = p.desc().key();
    Integer seen = checked.get(key);
    if (seen != null && (seen & bit) != 0) return;
    checked.merge(key, bit, (a, b) -> a | b);
    PathExplanation e = build(r, l, p, remote);
    if (e.slower())
      log.warn("engine '{}': transfers with engine '{}' take a slower path than this pair could have (said once per engine pair and path): {}",
          engineKey, key, e);
  }

  private PathExplanation build(Routes r, Routes.Local l, Routes.Peer p, MemoryDesc remote) {
    Routes.Backend chosen = TransferPath.choose(r, l, p, remote);
    boolean remoteGpu = remote.location() == MemoryLocationType.GPU;
    List<Refusal> refused = new ArrayList<>();
    for (BackendType t : BackendType.values()) {
      if (chosen != null && t == chosen.type()) continue;
      refused.add(refusal(r, l, p, remote, t, chosen));
    }
    String via = chosen == null ? "" : chosen.backend().describePeer(p.handles().get(chosen.type()));
    boolean staged = chosen != null && chosen.backend().stages(l.region(), remoteGpu);
    return new PathExplanation(engineKey, remote.engineKey(), l.desc().location(), l.desc().deviceId(), remote.location(),
        remote.deviceId(), chosen == null ? null : chosen.type(), staged, via, refused);
  }

  private Refusal refusal(Routes r, Routes.Local l, Routes.Peer p, MemoryDesc remote, BackendType t, Routes.Backend chosen) {
    boolean localGpu = l.region().gpu();
    boolean remoteGpu = remote.location() == MemoryLocationType.GPU;
    String peer = "engine '" + p.desc().key() + "'";
    Routes.Backend b = null;
    for (Routes.Backend x : r.backends()) if (x.type() == t) b = x;
    // a backend that is not there is reported first, with why its creation failed: that is what a person can act on
    if (b == null) {
      CreateFailure f = createFailures.get(t);
      if (f != null) return new Refusal(t, f.reason(), "createBackend(" + t + ") failed: " + f.message(), f.reason() == Reason.BACKEND_NOT_CREATED);
      return new Refusal(t, Reason.BACKEND_NOT_CREATED, "engine '" + engineKey + "' has no " + t + " backend (createBackend(" + t + ") was not called)", false);
    }
    if (t == BackendType.XGMI && (!localGpu || !remoteGpu))
      return new Refusal(t, Reason.MEMORY_KIND, "XGMI moves GPU memory only (local " + kind(localGpu) + ", remote " + kind(remoteGpu) + " memory)", false);
    if (!p.desc().backends().contains(t))
      return new Refusal(t, Reason.NOT_ON_REMOTE, peer + " has no " + t + " backend (it has " + p.desc().backends() + ")", false);
    if (!b.backend().reaches(p.desc().backendData().get(t)))
      return new Refusal(t, Reason.OTHER_HOST, peer + " runs on another host (" + p.desc().host() + ", node " + p.desc().nodeId()
          + "): " + t + " reaches engines of this host only", false);
    Object handle = p.handles().get(t);
    if (handle == null) {
      String why = connectFailures.get(t.name() + '|' + p.desc().key());
      if (why != null) return new Refusal(t, Reason.CONNECT_FAILED, "connecting to " + peer + " failed: " + why, true);
      return new Refusal(t, Reason.NOT_CONNECTED, t + " is not connected to " + peer + " (register the engine again to connect it)", true);
    }
    ServeRefusal s = b.backend().refusal(l.region(), handle, remoteGpu, remote.backendData().get(t));
    if (s == null) {
      if (chosen == null) return new Refusal(t, Reason.OTHER, t + " reports no reason but does not take the pair", false);
      return new Refusal(t, Reason.LOWER_PREFERENCE, t + " could move this pair, but " + chosen.type() + " ranks first", false);
    }
    Reason reason = switch (s.reason()) {
      case MEMORY_KIND -> Reason.MEMORY_KIND;
      case NOT_CONNECTED -> Reason.NOT_CONNECTED;
      case NOT_REGISTERED -> Reason.NOT_REGISTERED;
      case PEER_ACCESS_REFUSED -> Reason.PEER_ACCESS_REFUSED;
      case IPC_HANDLE_NOT_OPENED -> Reason.IPC_HANDLE_NOT_OPENED;
      case NO_GPU_RUNTIME -> Reason.NO_GPU_RUNTIME;
      case CLOSED -> Reason.CLOSED;
      case OTHER -> Reason.OTHER;
    };
    return new Refusal(t, reason, s.message(), reason.degradation());
  }

  private static String kind(boolean gpu) {
    return gpu ? "GPU" : "host";
  }
}
