package org.mori4j.transport.rdma;

import static org.mori4j.natives.verbs.VerbsConstants.*;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.mori4j.transport.DrivenWorker;
import org.mori4j.transport.InboundNotifications;
import org.mori4j.transport.RegionConfirmer;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.rdma.verbs.CompletionChannel;
import org.mori4j.transport.rdma.verbs.CompletionQueue;
import org.mori4j.transport.rdma.verbs.Completions;
import org.mori4j.transport.rdma.verbs.ReceiveRequests;
import org.mori4j.transport.rdma.verbs.SendRequests;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One thread of the RDMA backend's data path, driven by the engine's poller actor as a completion source: it owns
 * one completion queue and its channel and the queue pairs that complete on it, takes submitted
 * ops from a lock-free queue, confirms each remote region once with its owner, turns ops into chains of work
 * requests on their queue pairs ({@link PartPoster}), and polls completions: a signaled work request retires
 * every part posted before it on its queue pair, an error fails the parts of that queue pair and takes it out of
 * service, a notification receive is recorded for {@code popInboundTransferStatus} and posted again. POLLING mode
 * polls while its own work is outstanding (yielding the core between polls); EVENT mode, and either mode with
 * nothing of its own outstanding, arms the queue and sleeps on the channel, so that a target's notification
 * receives wake it at once. Every queue pair, queue and channel of the worker is closed on this thread.
 */
final class RdmaWorker extends DrivenWorker {
  private static final Logger log = LoggerFactory.getLogger(RdmaWorker.class);
  static final long RECEIVE_TAG = 1L << 62;

  final String engineKey;
  final RdmaSettings settings;
  final CompletionQueue cq;
  private final CompletionChannel channel;
  private final RegionConfirmer confirmer;
  private final InboundNotifications inbound;
  /** The backend's reaction to a peer that stopped answering (any thread). */
  private final java.util.function.BiConsumer<String, String> peerGone;
  private final java.util.function.BiConsumer<RdmaLane, String> replace;
  private final Completions wcs = new Completions(256);
  private final ReceiveRequests receive = new ReceiveRequests(1);
  // worker thread only
  final PartPoster poster;
  final AccessErrors accessErrors;
  private final List<RdmaLane> lanes = new ArrayList<>();
  private final LaneTable byQpn = new LaneTable();
  private final List<RdmaPeer.Path> paths = new ArrayList<>();
  /** Paths whose connection is to be replaced once their queue pairs are idle, with what to do then. */
  private final java.util.Map<RdmaPeer.Path, Runnable> draining = new java.util.IdentityHashMap<>();
  /** Parts posted or waiting for slots, and ops waiting for their region's confirmation. */
  int inFlight;

  RdmaWorker(String name, String engineKey, RdmaSettings settings, CompletionQueue cq, CompletionChannel channel, RegionConfirmer confirmer,
             InboundNotifications inbound,
             java.util.function.BiConsumer<String, String> peerGone, java.util.function.BiConsumer<RdmaLane, String> replace) {
    super(name);
    this.engineKey = engineKey;
    this.settings = settings;
    this.cq = cq;
    this.channel = channel;
    this.confirmer = confirmer;
    this.inbound = inbound;
    this.peerGone = peerGone;
    this.replace = replace;
    this.poster = new PartPoster(this, new SendRequests(Math.max(2, settings.postBatchSize())), cq.capacity());
    this.accessErrors = new AccessErrors(this, confirmer);
  }

  // ---- any thread ----

  /** Runs {@code task} on the worker thread and waits for it, at most {@code millis}; false on timeout. */
  boolean executeAndWait(Runnable task, long millis) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    execute(() -> {
      try {
        task.run();
      } finally {
        done.complete(null);
      }
    });
    try {
      done.get(millis, TimeUnit.MILLISECONDS);
      return true;
    } catch (Exception e) {
      return false;
    }
  }

  @Override
  public void wakeup() {
    if (parked != null) channel.wakeup();
  }

  // ---- worker thread ----

  @Override
  public int inFlight() {
    // EVENT mode sleeps on the channel instead of spinning, whatever is outstanding
    return settings.eventMode() ? 0 : inFlight;
  }

  @Override
  protected String closedReason() {
    return "RDMA backend of engine '" + engineKey + "' is closed";
  }

  @Override
  protected int work() {
    int work = pollCompletions();
    TransferOp op;
    while ((op = ops.poll()) != null) {
      work++;
      process(op);
    }
    return work;
  }

  private final java.util.function.IntSupplier poll = this::pollCompletions;
  private final java.util.function.BooleanSupplier outstanding = () -> inFlight > 0;

  @Override
  public int awaitWork(long maxNanos) {
    if (isClosed()) {
      LockSupport.parkNanos(Math.min(maxNanos, 10_000_000L));
      return 0;
    }
    parked = Thread.currentThread();
    try {
      if (hasQueued() || closing || !driven()) return 0;
      if (!settings.eventMode() && inFlight > 0) {
        // POLLING with own work outstanding: nothing but the device ends this wait
        return pollYielding(maxNanos, poll, outstanding);
      }
      // EVENT, or nothing of ours outstanding: sleep on the channel, so that a completion nobody here waits for (a
      // notification receive of a target) wakes the worker at once instead of after a timed nap
      cq.requestNotify(false);
      int n = pollCompletions(); // what completed before the queue was armed raises no event
      if (n > 0 || hasQueued()) return n;
      channel.await(maxNanos);
      return pollCompletions();
    } finally {
      parked = null;
    }
  }

  private void process(TransferOp op) {
    RdmaPeer.Path path = (RdmaPeer.Path) op.lane;
    RdmaPeer peer = path.owner;
    if (peer.retiring() && peer.alive()) {
      // its connection is being replaced: nothing of it was posted, so it waits for (or goes to) the new one
      peer.submit(op, true);
      return;
    }
    if (!peer.alive()) {
      op.transferFailed(TransportError.PEER_LOST, "engine '" + peer.key + "' lost: " + peer.lostReason());
      return;
    }
    RdmaPeer.RemoteRdmaRegion r = path.regions.get(op.remoteId());
    if (r == null) {
      r = new RdmaPeer.RemoteRdmaRegion(op.remoteId(), op.remoteAccessKey());
      path.regions.put(r.id, r);
      r.waiting.add(op);
      inFlight++;
      RdmaPeer.RemoteRdmaRegion asked = r;
      confirmer.confirm(peer.key, r.id, r.accessKey, new RegionConfirmer.Answer() {
        @Override
        public void registered(long address, long size, byte[] data) {
          execute(() -> confirmed(peer, path, asked, address, size, data, null, null));
        }

        @Override
        public void refused(TransportError error, String reason) {
          execute(() -> confirmed(peer, path, asked, 0, 0, null, error, reason));
        }
      });
      return;
    }
    if (r.confirming) {
      r.waiting.add(op);
      inFlight++;
      return;
    }
    poster.issue(op, peer, path, r);
  }

  private void confirmed(RdmaPeer peer, RdmaPeer.Path path, RdmaPeer.RemoteRdmaRegion r, long address, long size, byte[] data,
                         TransportError error, String reason) {
    inFlight -= r.waiting.size();
    if (error == null && !RdmaMemoryData.valid(data)) {
      error = TransportError.INVALID_ARGS;
      reason = "engine '" + peer.key + "' confirmed memory id " + r.id + " without RDMA keys";
    }
    if (error == TransportError.PEER_LOST) peerGone.accept(peer.key, reason); // the owner is closing: later ops fail fast
    if (error != null || path.regions.get(r.id) != r) {
      // refused (or revoked while asking): nothing is kept, so a later op asks again
      if (path.regions.get(r.id) == r) path.regions.remove(r.id);
      TransportError e = error != null ? error : TransportError.NOT_FOUND;
      String why = error != null ? reason : "memory id " + r.id + " of engine '" + peer.key + "' was deregistered";
      for (TransferOp op : r.waiting) op.transferFailed(e, why);
      r.waiting.clear();
      return;
    }
    r.address = address;
    r.size = size;
    r.data = data;
    r.confirming = false;
    List<TransferOp> waiting = List.copyOf(r.waiting);
    r.waiting.clear();
    for (TransferOp op : waiting) process(op);
  }

  /**
   * Forgets remote region {@code id} of engine {@code peerKey} on every path of this worker (its owner deregistered
   * it): later ops ask the owner again. An answer still on its way finds the region gone and fails its ops.
   */
  void revoke(String peerKey, long id) {
    for (RdmaPeer.Path p : paths) {
      if (!p.peerKey.equals(peerKey)) continue;
      RdmaPeer.RemoteRdmaRegion r = p.regions.remove(id);
      if (r != null) r.revoked = true;
    }
  }

  int pollCompletions() {
    if (byQpn.size() == 0 && inFlight == 0) return 0;
    int total = 0;
    int n;
    do {
      try {
        n = cq.poll(wcs);
      } catch (RuntimeException e) {
        failEverything(TransportError.RDMA_OP, "completion queue of " + name() + " failed: " + e.getMessage());
        return total + 1;
      }
      for (int i = 0; i < n; i++) {
        RdmaLane lane = byQpn.get(wcs.qpNumber(i));
        if (lane == null) continue;
        long wrId = wcs.wrId(i);
        if ((wrId & RECEIVE_TAG) != 0) received(lane, i, (int) wrId);
        else if (wcs.succeeded(i)) poster.sendCompleted(lane, wrId);
        else poster.sendFailed(lane, wrId, wcs.status(i));
      }
      total += n;
    } while (n == wcs.capacity());
    if (total > 0) for (RdmaLane l : lanes) if (!l.waiting.isEmpty()) poster.drainWaiting(l);
    if (total > 0) checkDrained();
    return total;
  }

  private void received(RdmaLane lane, int i, int slot) {
    if (!wcs.succeeded(i)) return; // flushed when the queue pair left service
    inbound.peer(lane.peerKey).record(lane.receivedNote(slot), null, null);
    if (lane.broken || lane.closed) return;
    try {
      lane.postReceive(receive, slot);
    } catch (RuntimeException e) {
      lane.breakWith("reposting a notification receive failed: " + e.getMessage());
      log.warn("{}: {}: {}", name(), lane, lane.brokenReason);
    }
  }

  /** A queue pair whose work completed with {@code IBV_WC_RETRY_EXC_ERR}: its peer does not answer. */
  void peerUnreachable(RdmaLane lane, String why) {
    if (!lane.targetSide) peerGone.accept(lane.peerKey, why);
  }

  /** A queue pair of ours left service for another reason than a silent peer: the engine connects the peer again. */
  void replace(RdmaLane lane, String why) {
    if (!lane.targetSide) replace.accept(lane, why);
  }

  /** Takes a connected lane into service (worker thread). */
  void addLane(RdmaLane lane) {
    lanes.add(lane);
    poster.receivesPosted(lane.receiveDepth);
    byQpn.add(lane, lanes);
  }

  void addPath(RdmaPeer.Path path) {
    paths.add(path);
  }

  /**
   * Ends lanes and paths of one peer (disconnect, replacement): fails what they hold with {@code error}, closes
   * their queue pairs.
   */
  void removeLanes(List<RdmaLane> gone, RdmaPeer.Path path, TransportError error, String reason) {
    if (path != null) {
      paths.remove(path);
      forgetRegions(path, error, reason);
    }
    for (RdmaLane l : gone) {
      poster.failLane(l, error, reason);
      lanes.remove(l);
      closeLane(l);
    }
    byQpn.rebuild(lanes, byQpn.capacity());
    checkDrained();
  }

  /**
   * Forgets what {@code path} confirmed; ops still waiting for a confirmation fail with {@code error}, or, when a new
   * connection replaced the path's, go to it (nothing of them was posted).
   */
  private void forgetRegions(RdmaPeer.Path path, TransportError error, String reason) {
    boolean replaced = path.owner.retiring() && path.owner.alive();
    for (RdmaPeer.RemoteRdmaRegion r : path.regions.values()) {
      inFlight -= r.waiting.size();
      for (TransferOp op : r.waiting) {
        if (replaced) path.owner.submit(op, true);
        else op.transferFailed(error, reason);
      }
      r.waiting.clear();
    }
    path.regions.clear();
  }

  /**
   * Calls {@code done} once nothing is posted or waiting on {@code path}'s queue pairs any more (its connection is
   * to be replaced; no new op is posted on it). Dropped if the path leaves first.
   */
  void drain(RdmaPeer.Path path, Runnable done) {
    draining.put(path, done);
    checkDrained();
  }

  private void checkDrained() {
    if (draining.isEmpty()) return;
    var it = draining.entrySet().iterator();
    while (it.hasNext()) {
      var e = it.next();
      RdmaPeer.Path path = e.getKey();
      if (!paths.contains(path)) {
        it.remove();
        continue;
      }
      boolean idle = true;
      for (RdmaLane l : path.lanes) if (!l.postedParts.isEmpty() || !l.waiting.isEmpty()) idle = false;
      if (!idle) continue;
      Runnable done = e.getValue();
      it.remove();
      done.run();
    }
  }

  private void closeLane(RdmaLane l) {
    poster.forget(l);
    try {
      l.close();
    } catch (RuntimeException e) {
      log.warn("{}: closing {} failed: {}", name(), l, e.toString());
    }
  }

  private void failEverything(TransportError error, String reason) {
    for (RdmaPeer.Path p : paths) forgetRegions(p, error, reason);
    accessErrors.failAll(error, reason);
    for (RdmaLane l : lanes) {
      poster.failLane(l, error, reason);
      l.breakWith(reason);
    }
    inFlight = 0;
  }

  int lanes() {
    return lanes.size();
  }

  // ---- closing ----

  /** Closing: what waits for confirmation and every part fail; queue pairs, the queue and the channel close. */
  @Override
  protected void release(String reason) {
    failEverything(TransportError.BAD_STATE, reason);
    for (RdmaLane l : lanes) closeLane(l);
    lanes.clear();
    paths.clear();
    draining.clear();
    byQpn.rebuild(lanes, 16);
    try {
      cq.close();
    } catch (RuntimeException e) {
      log.warn("{}: closing the completion queue failed: {}", name(), e.toString());
    }
    try {
      channel.close();
    } catch (RuntimeException e) {
      log.warn("{}: closing the completion channel failed: {}", name(), e.toString());
    }
  }
}
