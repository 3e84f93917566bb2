package org.mori4j.transport.rdma;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.CompletionSource;
import org.mori4j.transport.InboundNotifications;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.RegionConfirmer;
import org.mori4j.transport.TransferBackend;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.TransportException;
import org.mori4j.transport.rdma.verbs.CompletionChannel;
import org.mori4j.transport.rdma.verbs.CompletionQueue;
import org.mori4j.transport.rdma.verbs.QueuePair;
import org.mori4j.transport.rdma.verbs.QueuePairSpec;
import org.mori4j.transport.rdma.verbs.ReceiveRequests;
import org.mori4j.transport.rdma.verbs.VerbsDevice;
import org.mori4j.transport.rdma.verbs.VerbsProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * MORI-IO's RDMA backend, written once against {@link VerbsProvider}: the same code drives a real NIC through
 * libibverbs and the software provider (emulation) that CI runs. Per selected device ({@code MORI_RDMA_DEVICES})
 * one protection domain and {@code numWorkerThreads} workers, each with its own completion queue and thread; per
 * remote engine and device {@code qpPerTransfer} reliable-connected queue pairs on one worker, brought up with
 * the QPN/GID/LID/PSN/MTU exchanged in the engines' backend handshake ({@link QpBringUp}). Transfers are RDMA
 * WRITE/READ chains ({@link PartPoster}); remote regions are confirmed with their owner before first use
 * ({@link RegionConfirmer}), so a forged or stale descriptor is refused before anything is posted; a write to a
 * target with notifications ends with an 8-byte SEND of its uid, which the target's worker records for
 * {@code popInboundTransferStatus}.
 */
public final class RdmaBackend implements TransferBackend {
  private static final Logger log = LoggerFactory.getLogger(RdmaBackend.class);

  private final String engineKey;
  private final RdmaSettings settings;
  private final VerbsProvider provider;
  private final RegionConfirmer confirmer;
  private final InboundNotifications inbound = new InboundNotifications();
  private final SecureRandom random = new SecureRandom();
  private final List<RdmaDevice> devices = new ArrayList<>();
  private final List<RdmaWorker> workers = new ArrayList<>();
  private final ConcurrentHashMap<String, RdmaPeer> peers = new ConcurrentHashMap<>();
  /** Initiator side: queue pairs in INIT (per device: its worker, the pairs, our side of the handshake) awaiting the reply. */
  private final ConcurrentHashMap<String, Pending> pending = new ConcurrentHashMap<>();

  private record Pending(List<RdmaWorker> workers, List<List<QueuePair>> qps, List<RdmaHandshake.Endpoint> ours) {
    void close() {
      closeAll(qps);
    }
  }
  /** Target side: the lanes serving each initiator, by worker. */
  private final ConcurrentHashMap<String, Map<RdmaWorker, List<RdmaLane>>> accepted = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<Long, LocalRegion> registered = new ConcurrentHashMap<>();
  /** The devices as the data path reads them (published once started; empty once closed). */
  private volatile RdmaDevice[] open = new RdmaDevice[0];
  private volatile BackendListener listener = BackendListener.NONE;
  private volatile boolean closed;
  private int nextWorker;

  public RdmaBackend(String engineKey, RdmaSettings settings, VerbsProvider provider, RegionConfirmer confirmer) {
    this.engineKey = engineKey;
    this.settings = settings;
    this.provider = provider;
    this.confirmer = confirmer;
  }

  @Override
  public String name() {
    return provider.emulated() ? "RDMA (software provider: emulation)" : "RDMA (" + provider.name() + ")";
  }

  public VerbsProvider provider() {
    return provider;
  }

  @Override
  public void start(BackendListener listener) {
    this.listener = listener;
    List<String> names = provider.deviceNames();
    if (names.isEmpty())
      throw new TransportException(TransportError.RDMA_OP, "no RDMA device on this machine: " + provider.whyNoDevice());
    List<String> chosen;
    try {
      chosen = DeviceSelection.select(settings.devices(), names);
    } catch (IllegalArgumentException e) {
      throw new TransportException(TransportError.INVALID_ARGS, e.getMessage());
    }
    try {
      for (String name : chosen) {
        VerbsDevice d = provider.open(name);
        RdmaWorker[] ws = new RdmaWorker[settings.numWorkerThreads()];
        try {
          for (int i = 0; i < ws.length; i++) ws[i] = newWorker(d, i);
          devices.add(new RdmaDevice(devices.size(), d, ws));
        } catch (RuntimeException e) {
          for (RdmaWorker w : ws) if (w != null) w.close(0);
          d.close();
          throw e;
        }
        workers.addAll(List.of(ws));
      }
    } catch (RuntimeException e) {
      close();
      throw e instanceof TransportException te ? te
          : new TransportException(TransportError.RDMA_OP, "cannot open RDMA devices " + chosen + " (" + provider.name() + "): " + e.getMessage(), e);
    }
    open = devices.toArray(RdmaDevice[]::new);
    log.info("RDMA backend of engine {} on {} device(s) {} through the {} provider{}", engineKey, devices.size(), chosen, provider.name(),
        provider.emulated() ? " (software: emulation, not NIC performance)" : "");
  }

  private RdmaWorker newWorker(VerbsDevice d, int i) {
    // a channel in both modes: an idle worker (a target whose only completions are notification receives) sleeps on it
    CompletionChannel channel = d.createCompletionChannel();
    CompletionQueue cq;
    try {
      cq = d.createCompletionQueue(Math.min(settings.completionQueueDepth(), d.maxCompletionQueueEntries()), channel);
    } catch (RuntimeException e) {
      channel.close();
      throw e;
    }
    return new RdmaWorker("rdma-" + engineKey + "-" + d.name() + "-" + i, engineKey, settings, cq, channel, confirmer, listener, inbound,
        this::peerGone);
  }

  // ---- handshake ----

  @Override
  public byte[] handshakeRequest(String peerKey) {
    requireOpen();
    List<List<QueuePair>> created = new ArrayList<>();
    List<RdmaWorker> ws = new ArrayList<>();
    List<RdmaHandshake.Endpoint> eps = new ArrayList<>();
    try {
      int w = pickWorker();
      for (RdmaDevice d : devices) {
        RdmaWorker worker = d.worker(w);
        ws.add(worker);
        List<QueuePair> qps = new ArrayList<>();
        created.add(qps);
        for (int i = 0; i < settings.qpPerTransfer(); i++) {
          QueuePair qp = d.pd.createQueuePair(new QueuePairSpec(worker.cq, worker.cq, settings.sendQueueDepth(), 1));
          qps.add(qp);
          QpBringUp.init(qp, d);
        }
        eps.add(QpBringUp.endpoint(d, qps, random));
      }
    } catch (RuntimeException e) {
      closeAll(created);
      throw new TransportException(TransportError.RDMA_OP, "cannot create queue pairs for engine '" + peerKey + "': " + e.getMessage(), e);
    }
    Pending old = pending.put(peerKey, new Pending(ws, created, eps));
    if (old != null) old.close();
    return new RdmaHandshake(engineKey, false, eps).encode();
  }

  @Override
  public byte[] acceptHandshake(String initiatorKey, byte[] request) {
    requireOpen();
    RdmaHandshake h = RdmaHandshake.decode(request, initiatorKey);
    if (!h.engineKey().equals(initiatorKey))
      throw new TransportException(TransportError.INVALID_ARGS, "RDMA handshake names engine '" + h.engineKey() + "' but came from '" + initiatorKey + "'");
    Map<RdmaWorker, List<RdmaLane>> lanes = new java.util.HashMap<>();
    List<QueuePair> created = new ArrayList<>();
    List<RdmaHandshake.Endpoint> mine = new ArrayList<>();
    int w = pickWorker();
    ReceiveRequests scratch = new ReceiveRequests(1);
    try {
      for (RdmaHandshake.Endpoint theirs : h.endpoints()) {
        RdmaDevice d = devices.get(theirs.deviceIndex() % devices.size());
        RdmaWorker worker = d.worker(w);
        List<QueuePair> qps = new ArrayList<>();
        List<RdmaLane> made = lanes.computeIfAbsent(worker, k -> new ArrayList<>());
        int depth = settings.enableNotification() ? settings.receiveDepth() : 0;
        for (int i = 0; i < theirs.qpNumbers().length; i++) {
          QueuePair qp = d.pd.createQueuePair(new QueuePairSpec(worker.cq, worker.cq, settings.sendQueueDepth(), Math.max(1, depth)));
          created.add(qp);
          qps.add(qp);
          QpBringUp.init(qp, d);
        }
        RdmaHandshake.Endpoint ep = QpBringUp.endpoint(d, qps, random);
        for (int i = 0; i < qps.size(); i++) {
          RdmaLane lane = new RdmaLane(d, qps.get(i), initiatorKey, theirs.deviceIndex(), settings.sendQueueDepth(),
              settings.enableNotification(), true, settings.receiveDepth());
          made.add(lane);
          // receives first: the initiator may send a notification as soon as it is connected
          for (int s = 0; s < lane.receiveDepth; s++) lane.postReceive(scratch, s);
          QpBringUp.connect(qps.get(i), d, theirs, i, ep.psns()[i]);
        }
        mine.add(ep);
      }
    } catch (RuntimeException e) {
      List<QueuePair> inLanes = new ArrayList<>();
      lanes.values().forEach(l -> l.forEach(lane -> {
        inLanes.add(lane.qp);
        lane.close();
      }));
      for (QueuePair qp : created) if (!inLanes.contains(qp)) closeQuietly(qp);
      throw new TransportException(TransportError.RDMA_OP, "cannot bring up queue pairs for engine '" + initiatorKey + "': " + e.getMessage(), e);
    }
    Map<RdmaWorker, List<RdmaLane>> old = accepted.put(initiatorKey, lanes);
    lanes.forEach((worker, l) -> worker.execute(() -> l.forEach(worker::addLane)));
    if (old != null) retire(old, null, TransportError.PEER_LOST, "engine '" + initiatorKey + "' connected again");
    return new RdmaHandshake(engineKey, settings.enableNotification(), mine).encode();
  }

  @Override
  public Object connect(String peerKey, byte[] reply) {
    requireOpen();
    Pending pend = pending.remove(peerKey);
    if (pend == null) throw new TransportException(TransportError.BAD_STATE, "no RDMA handshake with engine '" + peerKey + "' is pending");
    RdmaHandshake h;
    try {
      h = RdmaHandshake.decode(reply, peerKey);
      if (!h.engineKey().equals(peerKey))
        throw new TransportException(TransportError.INVALID_ARGS, "RDMA handshake reply names engine '" + h.engineKey() + "', expected '" + peerKey + "'");
      if (h.endpoints().size() != devices.size())
        throw new TransportException(TransportError.INVALID_ARGS, "RDMA handshake reply of engine '" + peerKey + "' has " + h.endpoints().size()
            + " device(s) for our " + devices.size());
    } catch (RuntimeException e) {
      pend.close();
      throw e;
    }
    RdmaPeer.Path[] paths = new RdmaPeer.Path[devices.size()];
    List<RdmaLane> made = new ArrayList<>();
    try {
      for (int d = 0; d < devices.size(); d++) {
        RdmaDevice dev = devices.get(d);
        RdmaHandshake.Endpoint theirs = h.endpoints().get(d);
        List<QueuePair> mine = pend.qps().get(d);
        if (theirs.qpNumbers().length != mine.size())
          throw new TransportException(TransportError.INVALID_ARGS, "RDMA handshake reply of engine '" + peerKey + "' has "
              + theirs.qpNumbers().length + " queue pairs for our " + mine.size());
        RdmaWorker worker = pend.workers().get(d);
        RdmaLane[] lanes = new RdmaLane[mine.size()];
        for (int i = 0; i < mine.size(); i++) {
          QpBringUp.connect(mine.get(i), dev, theirs, i, pend.ours().get(d).psns()[i]);
          lanes[i] = new RdmaLane(dev, mine.get(i), peerKey, theirs.deviceIndex(), settings.sendQueueDepth(), h.notifications(), false, 0);
          made.add(lanes[i]);
        }
        paths[d] = new RdmaPeer.Path(peerKey, dev, worker, lanes);
      }
    } catch (RuntimeException e) {
      for (RdmaLane l : made) l.close();
      for (List<QueuePair> l : pend.qps()) for (QueuePair qp : l) if (made.stream().noneMatch(x -> x.qp == qp)) closeQuietly(qp);
      throw e instanceof TransportException te ? te
          : new TransportException(TransportError.RDMA_OP, "cannot connect queue pairs to engine '" + peerKey + "': " + e.getMessage(), e);
    }
    RdmaPeer peer = new RdmaPeer(peerKey, paths);
    for (RdmaPeer.Path p : paths) p.worker.execute(() -> {
      p.worker.addPath(p);
      for (RdmaLane l : p.lanes) p.worker.addLane(l);
    });
    RdmaPeer old = peers.put(peerKey, peer);
    if (old != null) lose(old, TransportError.PEER_LOST, "replaced by a new connection");
    return peer;
  }

  private synchronized int pickWorker() {
    return nextWorker++;
  }

  @Override
  public void disconnect(String peerKey, TransportError error, String reason) {
    RdmaPeer p = peers.remove(peerKey);
    if (p != null) lose(p, error, reason);
    Pending q = pending.remove(peerKey);
    if (q != null) q.close();
    Map<RdmaWorker, List<RdmaLane>> a = accepted.remove(peerKey);
    if (a != null) retire(a, null, error, reason);
  }

  /** A queue pair to {@code peerKey} got no answer: the peer is lost, as a TCP peer whose connection broke. */
  private void peerGone(String peerKey, String why) {
    RdmaPeer p = peers.get(peerKey);
    if (p == null || !p.alive()) return;
    lose(p, TransportError.PEER_LOST, why);
    listener.peerLost(peerKey, TransportError.PEER_LOST, why);
  }

  private void lose(RdmaPeer p, TransportError error, String reason) {
    p.lose(reason);
    for (RdmaPeer.Path path : p.paths) path.worker.execute(() -> path.worker.removeLanes(List.of(path.lanes), path, error, reason));
  }

  private static void retire(Map<RdmaWorker, List<RdmaLane>> lanes, RdmaPeer.Path path, TransportError error, String reason) {
    lanes.forEach((w, l) -> w.execute(() -> w.removeLanes(l, path, error, reason)));
  }

  @Override
  public boolean connected(String peerKey) {
    RdmaPeer p = peers.get(peerKey);
    if (p == null || !p.alive()) return false;
    for (RdmaPeer.Path path : p.paths) for (RdmaLane l : path.lanes) if (l.broken) return false;
    return true;
  }

  // ---- memory ----

  @Override
  public byte[] registerMemory(LocalRegion region) {
    requireOpen();
    int[] rkeys = new int[devices.size()];
    int ok = 0;
    try {
      for (RdmaDevice d : devices) rkeys[ok++] = d.register(region);
    } catch (RuntimeException e) {
      // ok counts the device that failed too (the index advanced before register threw)
      for (int i = 0; i < ok - 1; i++) devices.get(i).deregister(region.id());
      if (region.gpu()) {
        // another backend (TCP through staging) still carries this region; the descriptor just lacks RDMA data
        log.warn("engine {}: the RDMA backend cannot register GPU memory id {} ({} bytes on device {}): {}; its transfers use another backend",
            engineKey, region.id(), region.size(), region.deviceId(), e.getMessage());
        return new byte[0];
      }
      throw new TransportException(TransportError.RDMA_OP, "cannot register memory id " + region.id() + " with the RDMA backend: " + e.getMessage(), e);
    }
    registered.put(region.id(), region);
    return RdmaMemoryData.encode(rkeys);
  }

  /** A view shares its parent's memory region on every device: no new registration with the NIC. */
  @Override
  public byte[] registerView(LocalRegion view, LocalRegion parent) {
    requireOpen();
    if (!registered.containsKey(parent.id())) return registerMemory(view);
    int[] rkeys = new int[devices.size()];
    int ok = 0;
    try {
      for (RdmaDevice d : devices) rkeys[ok++] = d.registerView(view, parent.id());
    } catch (RuntimeException e) {
      for (int i = 0; i < ok - 1; i++) devices.get(i).deregister(view.id());
      throw new TransportException(TransportError.RDMA_OP, "cannot register memory id " + view.id() + " (inside memory id " + parent.id()
          + ") with the RDMA backend: " + e.getMessage(), e);
    }
    registered.put(view.id(), view);
    return RdmaMemoryData.encode(rkeys);
  }

  @Override
  public void deregisterMemory(LocalRegion region) {
    if (registered.remove(region.id()) == null) return;
    for (RdmaDevice d : devices) d.deregister(region.id());
  }

  @Override
  public boolean canServe(LocalRegion local, boolean remoteGpu) {
    RdmaDevice[] ds = open;
    return ds.length > 0 && ds[0].region(local.id()) != null;
  }

  @Override
  public boolean canServe(LocalRegion local, Object peer, boolean remoteGpu, byte[] remoteData) {
    return peer instanceof RdmaPeer && remoteData != null && remoteData.length > 0 && canServe(local, remoteGpu);
  }

  @Override
  public org.mori4j.transport.ServeRefusal refusal(LocalRegion local, Object peer, boolean remoteGpu, byte[] remoteData) {
    if (!(peer instanceof RdmaPeer p)) return new org.mori4j.transport.ServeRefusal(org.mori4j.transport.ServeRefusal.Reason.NOT_CONNECTED, "no RDMA connection to the peer");
    if (!p.alive()) return new org.mori4j.transport.ServeRefusal(org.mori4j.transport.ServeRefusal.Reason.NOT_CONNECTED,
        "the RDMA path to engine '" + p.key + "' was lost: " + p.lostReason());
    if (remoteData == null || remoteData.length == 0)
      return new org.mori4j.transport.ServeRefusal(org.mori4j.transport.ServeRefusal.Reason.NOT_REGISTERED, "the remote region has no RDMA keys"
          + " (its engine could not register it with its NIC, or registered it before creating its RDMA backend)");
    if (!canServe(local, remoteGpu))
      return new org.mori4j.transport.ServeRefusal(org.mori4j.transport.ServeRefusal.Reason.NOT_REGISTERED, "local memory id " + local.id()
          + " is not registered with the RDMA devices" + (local.gpu() ? " (the NIC could not register this GPU memory)" : ""));
    return null;
  }

  @Override
  public String describePeer(Object peer) {
    if (!(peer instanceof RdmaPeer p)) return name();
    StringBuilder b = new StringBuilder(name()).append(", ");
    for (int i = 0; i < p.paths.length; i++) {
      RdmaLane[] lanes = p.paths[i].lanes;
      b.append(i == 0 ? "" : " + ").append("device ").append(p.paths[i].device.device.name()).append(" port ")
          .append(p.paths[i].device.port.port()).append(", ").append(lanes == null ? 0 : lanes.length).append(" queue pair(s)");
    }
    return b.toString();
  }

  /** The software provider moves GPU memory through host staging; a NIC reads and writes registered device memory directly. */
  @Override
  public boolean stages(LocalRegion local, boolean remoteGpu) {
    return provider.emulated() && (local.gpu() || remoteGpu);
  }

  @Override
  public void submit(TransferOp op) {
    if (!(op.peer() instanceof RdmaPeer peer)) {
      op.transferFailed(TransportError.BAD_STATE, "op has no RDMA peer");
      return;
    }
    if (!peer.alive()) {
      op.transferFailed(TransportError.PEER_LOST, "engine '" + peer.key + "' lost: " + peer.lostReason());
      return;
    }
    if (!op.local().gpu() && !op.local().segment().scope().isAlive()) {
      op.transferFailed(TransportError.BAD_STATE, "local memory id " + op.local().id() + " was freed while registered");
      return;
    }
    RdmaPeer.Path path = peer.nextPath();
    op.lane = path;
    path.worker.submit(op);
  }

  @Override
  public void revoke(String ownerKey, long regionId, Runnable done) {
    RdmaPeer p = peers.get(ownerKey);
    if (p == null || closed) {
      done.run();
      return;
    }
    java.util.concurrent.atomic.AtomicInteger left = new java.util.concurrent.atomic.AtomicInteger(p.paths.length);
    for (RdmaPeer.Path path : p.paths) path.worker.execute(() -> {
      path.worker.revoke(ownerKey, regionId);
      if (left.decrementAndGet() == 0) done.run();
    });
  }

  @Override
  public List<CompletionSource> completionSources() {
    return List.copyOf(workers);
  }

  @Override
  public InboundNotifications inbound() {
    return inbound;
  }

  @Override
  public InboundNotifications.Outcome popInbound(String initiatorKey, long uid) {
    InboundNotifications.Outcome o = inbound.pop(initiatorKey, uid);
    if (o != null || initiatorKey == null) return o;
    Map<RdmaWorker, List<RdmaLane>> lanes = accepted.get(initiatorKey);
    if (lanes == null) return null;
    // a receive completion may sit in a queue its worker has not polled yet
    for (RdmaWorker w : lanes.keySet()) w.executeAndWait(w::pollCompletions, 100);
    return inbound.pop(initiatorKey, uid);
  }

  /** Memory regions open on the devices (leak checks). */
  public int openMemoryRegions() {
    int n = 0;
    for (RdmaDevice d : devices) n += d.openMemoryRegions();
    return n;
  }

  @Override
  public void close() {
    if (closed) return;
    closed = true;
    open = new RdmaDevice[0];
    for (RdmaPeer p : peers.values()) p.lose("RDMA backend closed");
    peers.clear();
    pending.values().forEach(Pending::close);
    pending.clear();
    accepted.clear();
    for (RdmaWorker w : workers) w.close(2000);
    for (RdmaDevice d : devices) d.close();
    devices.clear();
    registered.clear();
  }

  private void requireOpen() {
    if (closed) throw new TransportException(TransportError.BAD_STATE, "RDMA backend of engine '" + engineKey + "' is closed");
  }

  private static void closeAll(List<List<QueuePair>> qps) {
    for (List<QueuePair> l : qps) for (QueuePair qp : l) closeQuietly(qp);
  }

  private static void closeQuietly(QueuePair qp) {
    try {
      qp.close();
    } catch (RuntimeException e) {
      log.debug("closing queue pair {}", qp, e);
    }
  }
}
