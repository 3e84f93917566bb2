package org.mori4j.transport.rdma;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.TransportException;
import org.mori4j.transport.rdma.verbs.QueuePair;
import org.mori4j.transport.rdma.verbs.QueuePairSpec;
import org.mori4j.transport.rdma.verbs.ReceiveRequests;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The RDMA backend's connections, split out of {@link RdmaBackend}: the handshake on both sides (the initiator's
 * queue pairs created in INIT and kept pending until the target's reply, the target's lanes brought up and their
 * notification receives posted before it answers), the peers this engine reaches ({@link RdmaPeer}) and the
 * initiators it serves, and their end: a disconnect, a replacement by a new connection, or a queue pair whose peer
 * stopped answering ({@link #peerGone}), each of which fails what the lanes hold on their workers and closes their
 * queue pairs. The device list is the backend's, filled when it starts; callers check that the backend is open.
 */
final class RdmaConnections {
  private static final Logger log = LoggerFactory.getLogger(RdmaConnections.class);

  private final String engineKey;
  private final RdmaSettings settings;
  private final List<RdmaDevice> devices;
  private final Supplier<BackendListener> listener;
  private final SecureRandom random = new SecureRandom();
  private final ConcurrentHashMap<String, RdmaPeer> peers = new ConcurrentHashMap<>();
  /** Initiator side: queue pairs in INIT (per device: its worker, the pairs, our side of the handshake) awaiting the reply. */
  private final ConcurrentHashMap<String, Pending> pending = new ConcurrentHashMap<>();
  /** Initiator side: peers whose last handshake's queue pairs were closed after connect-timeout (to the limit, ms). */
  private final ConcurrentHashMap<String, Long> expired = new ConcurrentHashMap<>();
  /** Target side: the lanes serving each initiator, by worker. */
  private final ConcurrentHashMap<String, Map<RdmaWorker, List<RdmaLane>>> accepted = new ConcurrentHashMap<>();
  private int nextWorker;

  private record Pending(List<RdmaWorker> workers, List<List<QueuePair>> qps, List<RdmaHandshake.Endpoint> ours) {
    void close() {
      closeAll(qps);
    }
  }

  RdmaConnections(String engineKey, RdmaSettings settings, List<RdmaDevice> devices, Supplier<BackendListener> listener) {
    this.engineKey = engineKey;
    this.settings = settings;
    this.devices = devices;
    this.listener = listener;
  }

  byte[] handshakeRequest(String peerKey) {
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
    Pending mine = new Pending(ws, created, eps);
    Pending old = pending.put(peerKey, mine);
    if (old != null) old.close();
    expired.remove(peerKey);
    // queue pairs in INIT whose handshake gets no reply (refused, unanswered, the engine gave up) are not kept until the
    // next handshake or the backend's close: connect-timeout after the request they close, and a late reply is refused
    long limitMs = settings.connectTimeout().toMillis();
    java.util.concurrent.CompletableFuture.delayedExecutor(limitMs, java.util.concurrent.TimeUnit.MILLISECONDS).execute(() -> {
      if (!pending.remove(peerKey, mine)) return;
      expired.put(peerKey, limitMs);
      mine.close();
      log.info("engine {}: the RDMA handshake with engine '{}' got no reply within connect-timeout ({} ms); its queue pairs are closed",
          engineKey, peerKey, limitMs);
    });
    return new RdmaHandshake(engineKey, false, eps).encode();
  }

  byte[] acceptHandshake(String initiatorKey, byte[] request) {
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

  Object connect(String peerKey, byte[] reply) {
    Pending pend = pending.remove(peerKey);
    if (pend == null) {
      Long late = expired.remove(peerKey);
      throw new TransportException(TransportError.BAD_STATE, late != null
          ? "the RDMA handshake reply of engine '" + peerKey + "' came after connect-timeout (" + late + " ms, mori4j.rdma.connect-timeout):"
              + " its queue pairs were closed; connect again"
          : "no RDMA handshake with engine '" + peerKey + "' is pending");
    }
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
    if (old != null) {
      // what the old connection held for its replacement goes to the new one; anything still on its queue pairs
      // (after a replacement they drained first, see replace) ends, never sent again
      old.replaceWith(peer);
      for (RdmaPeer.Path path : old.paths)
        path.worker.execute(() -> path.worker.removeLanes(List.of(path.lanes), path, TransportError.PEER_LOST, "replaced by a new connection"));
    }
    return peer;
  }

  private synchronized int pickWorker() {
    return nextWorker++;
  }

  void disconnect(String peerKey, TransportError error, String reason) {
    RdmaPeer p = peers.remove(peerKey);
    if (p != null) lose(p, error, reason);
    Pending q = pending.remove(peerKey);
    if (q != null) q.close();
    expired.remove(peerKey);
    Map<RdmaWorker, List<RdmaLane>> a = accepted.remove(peerKey);
    if (a != null) retire(a, null, error, reason);
  }

  /** A queue pair to {@code peerKey} got no answer: the peer is lost, as a TCP peer whose connection broke. */
  void peerGone(String peerKey, String why) {
    RdmaPeer p = peers.get(peerKey);
    if (p == null || !p.alive()) return;
    lose(p, TransportError.PEER_LOST, why);
    listener.get().peerLost(peerKey, TransportError.PEER_LOST, why);
  }

  /**
   * A queue pair of ours to {@code lane}'s peer left service for another reason than a silent peer: the connection is
   * replaced, once (later lanes of the same connection, and lanes of a connection already replaced, ask nothing). New
   * ops to the peer are held from now on ({@link RdmaPeer#submit}); the other queue pairs of the connection finish what
   * was posted on them (the new handshake would close them on the target) and then the engine is asked to connect the
   * peer again. If no new connection is up within {@code replaceTimeout} (the engine's handshake timeout) the peer is
   * lost and the held ops fail with PEER_LOST naming it.
   */
  void replace(RdmaLane lane, String why) {
    RdmaPeer p = peers.get(lane.peerKey);
    if (p == null || !p.alive() || !p.holds(lane) || !p.askReplacement()) return;
    long limitMs = settings.replaceTimeout().toMillis();
    java.util.concurrent.CompletableFuture.delayedExecutor(limitMs, java.util.concurrent.TimeUnit.MILLISECONDS)
        .execute(() -> replacementOverdue(p, limitMs, why));
    java.util.concurrent.atomic.AtomicInteger left = new java.util.concurrent.atomic.AtomicInteger(p.paths.length);
    Runnable drained = () -> {
      if (left.decrementAndGet() == 0 && p.awaitingReplacement()) {
        log.info("engine {}: the RDMA connection to engine '{}' is replaced ({}); new transfers wait for the new one", engineKey, p.key, why);
        listener.get().reconnect(p.key, why);
      }
    };
    for (RdmaPeer.Path path : p.paths) {
      // this runs on the broken lane's worker: its path is watched at once, so that the engine hears of the
      // replacement in the same round that fails the lane's transfers (before their outcomes are published)
      if (List.of(path.lanes).contains(lane)) path.worker.drain(path, drained);
      else path.worker.execute(() -> path.worker.drain(path, drained));
    }
  }

  /** The replacement of {@code p} asked {@code limitMs} ago has not come: the peer is lost, what it held fails. */
  private void replacementOverdue(RdmaPeer p, long limitMs, String why) {
    if (!p.awaitingReplacement()) return;
    String reason = "no new RDMA connection to engine '" + p.key + "' within " + limitMs + " ms after its queue pair left service (" + why + ")";
    log.warn("engine {}: {}", engineKey, reason);
    lose(p, TransportError.PEER_LOST, reason);
    listener.get().peerLost(p.key, TransportError.PEER_LOST, reason);
  }

  private void lose(RdmaPeer p, TransportError error, String reason) {
    p.lose(error, reason);
    for (RdmaPeer.Path path : p.paths) path.worker.execute(() -> path.worker.removeLanes(List.of(path.lanes), path, error, reason));
  }

  private static void retire(Map<RdmaWorker, List<RdmaLane>> lanes, RdmaPeer.Path path, TransportError error, String reason) {
    lanes.forEach((w, l) -> w.execute(() -> w.removeLanes(l, path, error, reason)));
  }

  boolean connected(String peerKey) {
    RdmaPeer p = peers.get(peerKey);
    if (p == null || !p.alive()) return false;
    for (RdmaPeer.Path path : p.paths) for (RdmaLane l : path.lanes) if (l.broken) return false;
    return true;
  }


  void revoke(String ownerKey, long regionId, Runnable done) {
    RdmaPeer p = peers.get(ownerKey);
    if (p == null) {
      done.run();
      return;
    }
    java.util.concurrent.atomic.AtomicInteger left = new java.util.concurrent.atomic.AtomicInteger(p.paths.length);
    for (RdmaPeer.Path path : p.paths) path.worker.execute(() -> {
      path.worker.revoke(ownerKey, regionId);
      if (left.decrementAndGet() == 0) done.run();
    });
  }

  /** Target side: the workers whose lanes serve {@code initiatorKey} (empty if none). */
  Set<RdmaWorker> servingWorkers(String initiatorKey) {
    Map<RdmaWorker, List<RdmaLane>> lanes = accepted.get(initiatorKey);
    return lanes == null ? Set.of() : lanes.keySet();
  }

  /** The backend closes: every peer is lost, pending queue pairs close (the workers close the lanes' own). */
  void close() {
    for (RdmaPeer p : peers.values()) p.lose("RDMA backend closed");
    peers.clear();
    pending.values().forEach(Pending::close);
    pending.clear();
    expired.clear();
    accepted.clear();
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
