package org.mori4j.transport.xgmi;

import org.mori4j.transport.RegionConfirmer;
import org.mori4j.transport.ServeRefusal;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.PointerInfo;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.CompletionSource;
import org.mori4j.transport.InboundNotifications;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.TransferBackend;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.TransportException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * MORI-IO's XGMI backend: one-sided copies between GPU memory of engines on one host, over NVLink on NVIDIA
 * (XGMI on AMD). The initiator moves the bytes itself, with the copy engines for a single block and with one
 * gather/scatter kernel launch for a batch; the target's engine takes no part in a transfer. Between engines
 * of one process the remote region is addressed directly (peer access enabled between the two devices when
 * they differ); between processes, through the IPC handle its descriptor carries, opened once per local
 * device and cached until the owner deregisters the region, the peer goes, or this backend closes.
 *
 * <p>Only GPU-to-GPU transfers between engines of this host are served ({@link #canServe}); anything else is
 * left to the engine's other backends, which the engine picks by itself, and the first time a pair that
 * looks like XGMI's is left out for a reason worth knowing (no peer access between the devices, memory
 * that cannot be exported) it is logged once per peer. Because the owner never sees a request, every region
 * is confirmed with its owner before the first copy ({@link RegionConfirmer}); every copy is bounded by that
 * answer. The target is not notified of writes ({@link #inbound()} stays empty), as in MORI's XGMI backend. The
 * handshake's messages and checks are {@link XgmiHandshake}'s.
 */
public final class XgmiBackend implements TransferBackend {
  private static final Logger log = LoggerFactory.getLogger(XgmiBackend.class);

  private final String engineKey;
  private final XgmiSettings settings;
  private final Supplier<GpuRuntime> runtimeSupplier;
  private final RegionConfirmer confirmer;
  private final ConcurrentHashMap<String, XgmiPeer> peers = new ConcurrentHashMap<>();
  /** Which pairs XGMI serves, and the notes on those it leaves to other backends. */
  private final XgmiPairs pairs;
  private final InboundNotifications inbound = new InboundNotifications();
  /** What each registered GPU region advertises, so that a view of it is registered without driver calls. */
  private final ConcurrentHashMap<Long, XgmiMemoryData> exports = new ConcurrentHashMap<>();
  private volatile GpuRuntime gpu;
  private volatile XgmiWorker worker;
  private long[] devicePci = new long[0];
  private boolean[][] peerAccess = new boolean[0][0];
  private volatile boolean closed;

  /**
   * @param runtime   the GPU runtime, asked for on {@link #start} (opening it may block)
   * @param confirmer asks a remote engine what it registered (see {@link RegionConfirmer})
   */
  public XgmiBackend(String engineKey, XgmiSettings settings, Supplier<GpuRuntime> runtime, RegionConfirmer confirmer) {
    this.engineKey = engineKey;
    this.settings = settings;
    this.pairs = new XgmiPairs(engineKey);
    this.runtimeSupplier = runtime;
    this.confirmer = confirmer;
  }

  @Override
  public String name() {
    return "XGMI";
  }

  /**
   * Opens the GPU runtime, reads each device's PCI location and which pairs have peer access, and compiles
   * the batch kernel for every device architecture present. Without a GPU runtime, or when the kernel cannot
   * be compiled, it throws a {@link TransportException} ({@code GPU_OP}) that says why.
   */
  @Override
  public void start(BackendListener listener) {
    GpuRuntime r = runtimeSupplier.get();
    if (!r.available()) throw new TransportException(TransportError.GPU_OP, "the XGMI backend needs a GPU runtime: " + r.version());
    int count;
    try {
      count = r.deviceCount();
      devicePci = new long[count];
      peerAccess = new boolean[count][count];
      TreeSet<String> pairs = new TreeSet<>();
      for (int d = 0; d < count; d++) {
        devicePci[d] = XgmiMemoryData.parsePciBusId(r.pciBusId(d));
        for (int p = 0; p < count; p++) {
          peerAccess[d][p] = d != p && r.canAccessPeer(d, p);
          if (peerAccess[d][p]) pairs.add(d + "->" + p);
        }
      }
      for (int d = 0; d < count; d++) GatherKernel.image(r, d);
      log.info("XGMI backend of engine {}: {} {} device(s), peer access {}, batch kernel compiled ({})", engineKey, count, r.name(),
          pairs.isEmpty() ? "none" : pairs, r.version());
    } catch (RuntimeException e) {
      throw new TransportException(TransportError.GPU_OP, "the XGMI backend cannot start: " + e.getMessage(), e);
    }
    gpu = r;
    this.pairs.devices(devicePci, peerAccess);
    worker = new XgmiWorker(engineKey, r, settings, confirmer, listener == null ? BackendListener.NONE : listener, devicePci, peerAccess);
  }

  @Override
  public byte[] engineData() {
    return XgmiHost.local().encode();
  }

  @Override
  public boolean reaches(byte[] peerEngineData) {
    if (peerEngineData == null) return false;
    try {
      return XgmiHost.local().sameHost(XgmiHost.decode(peerEngineData));
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  @Override
  public byte[] handshakeRequest(String peerKey) {
    return XgmiHandshake.request(engineKey);
  }

  @Override
  public byte[] acceptHandshake(String initiatorKey, byte[] request) {
    if (closed) throw new TransportException(TransportError.BAD_STATE, "XGMI backend of engine '" + engineKey + "' is closed");
    XgmiHandshake.checkRequest(initiatorKey, request);
    return XgmiHost.local().encode();
  }

  @Override
  public Object connect(String peerKey, byte[] handshakeReply) {
    if (closed || worker == null) throw new TransportException(TransportError.BAD_STATE, "XGMI backend of engine '" + engineKey + "' is not running");
    XgmiHost host = XgmiHandshake.replyHost(peerKey, handshakeReply);
    XgmiPeer peer = new XgmiPeer(peerKey, host, XgmiHost.local().sameProcess(host));
    XgmiPeer old = peers.put(peerKey, peer);
    if (old != null) drop(old, TransportError.PEER_LOST, "replaced by a new connection");
    log.debug("XGMI backend of engine {} connected to engine {} ({})", engineKey, peerKey, peer.sameProcess ? "same process" : host);
    return peer;
  }

  @Override
  public void disconnect(String peerKey, TransportError error, String reason) {
    XgmiPeer p = peers.remove(peerKey);
    if (p != null) drop(p, error, reason);
  }

  private void drop(XgmiPeer p, TransportError error, String reason) {
    p.lose(reason);
    XgmiWorker w = worker;
    if (w != null) w.execute(() -> w.revokeAll(p, error, "engine '" + p.key + "': " + reason));
  }

  @Override
  public boolean connected(String peerKey) {
    XgmiPeer p = peers.get(peerKey);
    return p != null && p.alive() && !closed;
  }

  /**
   * GPU memory gets its XGMI data (device, allocation offset and size, IPC handle when the driver can export
   * the allocation); host memory gets none, since XGMI moves GPU memory only.
   */
  @Override
  public byte[] registerMemory(LocalRegion region) {
    if (!region.gpu()) return new byte[0];
    GpuRuntime r = gpu;
    if (r == null) throw new TransportException(TransportError.BAD_STATE, "XGMI backend of engine '" + engineKey + "' is not running");
    PointerInfo info = r.pointerInfo(region.address());
    if (!info.covers(region.address(), region.size()))
      throw new TransportException(TransportError.INVALID_ARGS, "GPU memory 0x" + Long.toHexString(region.address()) + " (+" + region.size()
          + ") is not inside one allocation: " + info);
    byte[] handle = null;
    try {
      handle = r.ipcHandle(info.rangeStart());
    } catch (RuntimeException e) {
      log.info("XGMI: memory id {} of engine {} cannot be exported to other processes ({}); only engines of this process reach it by XGMI",
          region.id(), engineKey, e.getMessage());
    }
    int device = region.deviceId();
    XgmiMemoryData data = new XgmiMemoryData(device, device < devicePci.length ? devicePci[device] : -1, region.address() - info.rangeStart(),
        info.rangeSize(), handle);
    exports.put(region.id(), data);
    return data.encode();
  }

  /**
   * A view of a registered GPU region lies in the same allocation: its data is the parent's with the offset
   * moved, without asking the driver for the allocation or its IPC handle again.
   */
  @Override
  public byte[] registerView(LocalRegion view, LocalRegion parent) {
    XgmiMemoryData p = exports.get(parent.id());
    if (!view.gpu() || p == null || view.deviceId() != parent.deviceId()) return registerMemory(view);
    long offset = p.offsetInAllocation() + (view.address() - parent.address());
    if (offset < 0 || offset + view.size() > p.allocationSize()) return registerMemory(view);
    XgmiMemoryData data = new XgmiMemoryData(p.device(), p.pciLocation(), offset, p.allocationSize(), p.ipcHandle());
    exports.put(view.id(), data);
    return data.encode();
  }

  @Override
  public void deregisterMemory(LocalRegion region) {
    // importers are told by the engine (revoke), which waits for them before deregistration returns
    exports.remove(region.id());
  }

  @Override
  public boolean canServe(LocalRegion local, boolean remoteGpu) {
    return local.gpu() && remoteGpu && worker != null && !closed;
  }

  /** The worker reads an op's blocks while checking and issuing it, on its own thread, and completes it after. */
  @Override
  public boolean readsBlocksOnlyUntilDone() {
    return true;
  }

  @Override
  public boolean canServe(LocalRegion local, Object peer, boolean remoteGpu, byte[] remoteData) {
    if (!local.gpu() || !remoteGpu || worker == null || closed || !(peer instanceof XgmiPeer p) || !p.alive()) return false;
    return pairs.serves(local, p, remoteData);
  }

  /** The same decisions as {@link #canServe(LocalRegion, Object, boolean, byte[])}, with their reasons (and without its log lines). */
  @Override
  public ServeRefusal refusal(LocalRegion local, Object peer, boolean remoteGpu, byte[] remoteData) {
    if (!local.gpu() || !remoteGpu)
      return new ServeRefusal(ServeRefusal.Reason.MEMORY_KIND, "XGMI moves GPU memory only (local " + (local.gpu() ? "GPU" : "host")
          + ", remote " + (remoteGpu ? "GPU" : "host") + " memory)");
    if (worker == null || closed) return new ServeRefusal(ServeRefusal.Reason.CLOSED, "the XGMI backend is " + (closed ? "closed" : "not started"));
    if (!(peer instanceof XgmiPeer p)) return new ServeRefusal(ServeRefusal.Reason.NOT_CONNECTED, "no XGMI connection to the peer");
    if (!p.alive()) return new ServeRefusal(ServeRefusal.Reason.NOT_CONNECTED, "the XGMI path to engine '" + p.key + "' was lost: " + p.lostReason());
    return pairs.refusal(local, p, remoteData);
  }

  @Override
  public String describePeer(Object peer) {
    if (!(peer instanceof XgmiPeer p)) return "XGMI";
    return "XGMI peer copies to engine '" + p.key + "' (" + (p.sameProcess ? "same process: direct device pointers" : "another process of this host: IPC handles") + ")";
  }

  @Override
  public void submit(TransferOp op) {
    XgmiWorker w = worker;
    if (w == null || closed) {
      op.transferFailed(TransportError.BAD_STATE, "XGMI backend of engine '" + engineKey + "' is " + (closed ? "closed" : "not started"));
      return;
    }
    if (!(op.peer() instanceof XgmiPeer)) {
      op.transferFailed(TransportError.BAD_STATE, "op has no XGMI peer");
      return;
    }
    if (!op.local().gpu()) {
      op.transferFailed(TransportError.INVALID_ARGS, "XGMI moves GPU memory only; local memory id " + op.local().id() + " is host memory");
      return;
    }
    w.submit(op);
  }

  /**
   * A batch, or a single copy unless {@code mori4j.xgmi.caller-poll} is off ({@link XgmiSettings#callerPollNanos}), issued
   * from the submitting thread when the worker is idle and set up for it ({@link XgmiWorker#issueFromCaller}).
   */
  @Override
  public boolean issueFromCaller(TransferOp op) {
    XgmiWorker w = worker;
    // anything submit would refuse is left to submit, which says why
    if (w == null || closed || !(op.peer() instanceof XgmiPeer) || !op.local().gpu()) return false;
    if (op.blockCount() < 2 && !settings.callerIssuesSingles()) return false;
    return w.issueFromCaller(op);
  }

  /** Batch entries of one call between the same two devices share launches unless {@code mori4j.xgmi.fuse-batches} is off. */
  @Override
  public boolean fusesBatches() {
    return settings.fuseBatches() && worker != null && !closed;
  }

  /** The entries as one launch from the submitting thread, all or nothing ({@link XgmiWorker#issueGroupFromCaller}). */
  @Override
  public boolean issueGroupFromCaller(java.util.List<? extends TransferOp> ops) {
    XgmiWorker w = worker;
    if (w == null || closed || !settings.fuseBatches() || ops.size() < 2) return false;
    for (TransferOp op : ops) if (!(op.peer() instanceof XgmiPeer) || !op.local().gpu()) return false;
    return w.issueGroupFromCaller(ops);
  }

  /**
   * Entries that {@link #submit} would refuse fail alone with its message; the rest go to the worker as one
   * {@link FusedBatch} (in order, at the queue position of the call), or one by one when fusing is off.
   */
  @Override
  public void submitGroup(java.util.List<? extends TransferOp> ops) {
    XgmiWorker w = worker;
    java.util.List<TransferOp> good = new java.util.ArrayList<>(ops.size());
    for (TransferOp op : ops) {
      if (w == null || closed || !(op.peer() instanceof XgmiPeer) || !op.local().gpu()) submit(op);
      else good.add(op);
    }
    if (good.isEmpty()) return;
    if (!settings.fuseBatches() || good.size() < 2) {
      for (TransferOp op : good) w.submit(op);
      return;
    }
    w.submit(new FusedBatch(good));
  }

  /**
   * The owner of a region this backend may have mapped deregistered it: no op reaches it any more, and its
   * IPC mappings are closed as soon as no copy uses them; {@code done} runs then (at once when this backend
   * never touched the region).
   */
  @Override
  public void revoke(String peerKey, long regionId, Runnable done) {
    XgmiWorker w = worker;
    XgmiPeer p = peers.get(peerKey);
    if (w == null || p == null) {
      done.run();
      return;
    }
    w.execute(() -> {
      RemoteRegion r = p.regions.get(regionId);
      if (r == null) done.run();
      else w.revoke(r, TransportError.NOT_FOUND, r.describe() + " was deregistered by its owner", done);
    });
  }

  @Override
  public List<CompletionSource> completionSources() {
    XgmiWorker w = worker;
    return w == null ? List.of() : List.of(w);
  }

  @Override
  public InboundNotifications inbound() {
    return inbound;
  }

  /** IPC mappings of other processes' memory open now. */
  public int openMappings() {
    XgmiWorker w = worker;
    return w == null ? 0 : w.openMappings();
  }

  /** Streams, events, block tables and kernel modules held now (0 after close). */
  public int openGpuResources() {
    XgmiWorker w = worker;
    return w == null ? 0 : w.openGpuResources();
  }

  /** IPC mappings open in every XGMI backend of this process (tests check that closing gives them all back). */
  public static int openMappingsInProcess() {
    return RegionAccess.MAPPINGS_IN_PROCESS.get();
  }

  /** Streams, events, block tables and kernel modules of every XGMI backend of this process. */
  public static int gpuResourcesInProcess() {
    return DevicePool.LIVE.get() + GatherKernel.LIVE.get();
  }

  /** Gather/scatter kernel launches so far in this process (one per batch of two or more blocks). */
  public static long batchLaunchesInProcess() {
    return GatherKernel.LAUNCHES.get();
  }

  /** Engines connected now, for messages. */
  public List<String> peerKeys() {
    return new ArrayList<>(peers.keySet());
  }

  @Override
  public void close() {
    if (closed) return;
    closed = true;
    // the worker first: what is queued then fails as "closed" (BAD_STATE), not as a lost peer
    XgmiWorker w = worker;
    if (w != null) w.close(30_000);
    for (XgmiPeer p : peers.values()) p.lose("XGMI backend closed");
    peers.clear();
  }
}
