package org.mori4j.transport.xgmi;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.RegionConfirmer;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * The XGMI backend's one thread of GPU work, driven by the engine's poller actor as a completion source: it
 * takes submitted ops from a lock-free queue, checks each against what the remote region's owner confirmed,
 * issues it (a copy for one block, the gather/scatter kernel reading the slot's block table for a batch),
 * records a pooled event behind it, and on later rounds asks the events of the ops on the GPU
 * ({@code cuEventQuery}, which never blocks) and completes those that are done. Nothing here blocks on the
 * GPU: while ops are on the GPU and nothing else is to do, {@link #awaitWork} keeps polling the events on this
 * dedicated thread, yielding between polls (or naps {@link XgmiSettings#pollNapNanos()} when that is set);
 * with nothing on the GPU it spins {@link #IDLE_SPIN_NANOS} for new work (on 8 or more processors), then parks
 * until a submit or a task wakes it.
 * Every native resource of the backend (streams, events, block tables, IPC mappings, kernel modules) is
 * created and closed on this thread, except when the backend is closed without ever having been driven.
 *
 * <p>A submitting thread may issue a checked batch itself ({@link #issueFromCaller}) when the worker has nothing
 * queued and everything the op needs exists already (confirmed region, open mapping, a free slot with its event and
 * a big enough table, the stream, the loaded kernel): it fills the slot's table (uploads it, unless the kernel reads it
 * in place: {@link XgmiSettings#mappedTable}) and launches the kernel,
 * so a batch pays no hand-off and no wake-up of a parked worker in front of its kernel. The worker's state is
 * touched only by whoever holds its turn ({@link #turn}): the worker for each round and each poll of its events, or
 * that one submitting thread for one issue. Neither waits for the other: a submitter that finds the turn taken
 * submits as usual, and the worker skips the round (it comes again at once); the submitter holds it for the table
 * copy, the upload and the launch calls, as a worker round does. Failures there end the op with the worker's own
 * messages; everything else (a region to confirm, a mapping to open, a slot to create) is left to the worker.
 * Confirming regions with their owners and revoking them is the part of its superclass {@link RegionConfirmingWorker}.
 */
final class XgmiWorker extends RegionConfirmingWorker {
  /** How long the worker spins for new work once the GPU is idle before it parks: 50 us on 8 or more processors, else 0. */
  static final long IDLE_SPIN_NANOS = Runtime.getRuntime().availableProcessors() >= 8 ? 50_000L : 0L;

  private final GpuRuntime gpu;
  private final XgmiSettings settings;
  /** How remote regions are reached from here: addresses, IPC mappings, fallback (worker only). */
  private final RegionAccess access;
  /** What is on the GPU: pools, kernel, peer access (worker only). */
  private final DeviceTransfers transfers;
  /** Checks an op against the owner's answer and puts it on the GPU (whoever holds the turn). */
  private final XgmiIssuer issuer;
  /** Issues the entries of one batch-of-batches call with shared launches (whoever holds the turn). */
  private final FusedIssue fused;
  /** Ops that found no free event slot, in order; worker only. */
  private final ArrayDeque<TransferOp> backlog = new ArrayDeque<>();
  /** Ops the polls found done, reported once the turn is free; worker only. */
  private final CompletedOps done = new CompletedOps();
  /** Set while a poll runs under the turn: its completions go to {@link #done}. */
  private boolean deferDone;

  private static final int FREE = 0, WORKER = 1, CALLER = 2;
  private static final java.lang.invoke.VarHandle TURN;

  static {
    try {
      TURN = java.lang.invoke.MethodHandles.lookup().findVarHandle(XgmiWorker.class, "turn", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** Who may touch the worker's state now: {@link #FREE}, the {@link #WORKER} or a {@link #CALLER} issuing an op. */
  @SuppressWarnings("unused")
  private volatile int turn;
  /** A submitting thread put an op on the GPU: an idle worker must start polling events. Cleared by the worker's round. */
  private volatile boolean callerIssued;

  XgmiWorker(String engineKey, GpuRuntime gpu, XgmiSettings settings, RegionConfirmer confirmer, BackendListener listener, long[] devicePci,
             boolean[][] peerAccess) {
    super(engineKey, confirmer, devicePci);
    this.gpu = gpu;
    this.settings = settings;
    this.transfers = new DeviceTransfers(engineKey, gpu, settings, peerAccess.length, listener);
    this.access = new RegionAccess(name(), gpu, new PeerAccess(gpu, peerAccess), listener);
    this.issuer = new XgmiIssuer(settings, access, transfers);
    this.fused = new FusedIssue(settings, issuer, transfers);
    this.callerPoll = settings.callerPollNanos() > 0 ? new XgmiCallerPoll(this, settings.callerPollNanos()) : null;
  }

  /** The awaiting caller's polls of single copies it issued; null when {@link XgmiSettings#callerPollNanos} is not positive. */
  private final XgmiCallerPoll callerPoll;

  // ---- any thread ----

  int openMappings() {
    return access.openMappings();
  }

  /**
   * Submitting thread: issues the checked batch {@code op} from here when the worker is idle and nothing needs
   * creating (see the class comment); true when the op was taken (on the GPU, or failed with the worker's message),
   * and then its block arrays are not read again. False when nothing was done: submit it.
   */
  boolean issueFromCaller(TransferOp op) {
    return fromCaller(op, null);
  }

  /** {@link #issueFromCaller} for the entries of one batch-of-batches call as one launch, all or nothing ({@link FusedIssue#issueReady}). */
  boolean issueGroupFromCaller(List<? extends TransferOp> group) {
    return fromCaller(null, group);
  }

  private boolean fromCaller(TransferOp op, List<? extends TransferOp> group) {
    // a racy look first: a worker with ops, tasks or a backlog to do is not held up even for a moment
    if (closing || !driven() || hasQueued()) return false;
    if (!TURN.compareAndSet(this, FREE, CALLER)) return false;
    int issued;
    try {
      // in order: anything submitted before this op and not yet issued goes first, through the worker
      if (closing || hasQueued() || !backlog.isEmpty()) return false;
      issued = op != null ? issuer.issueReady(op) : fused.issueReady(group);
      // a single copy: the thread that awaits it may query its event itself (XgmiCallerPoll); still under the turn, so
      // the op is on the slot it was issued to (only a poll under the turn takes it off)
      if (issued == DeviceTransfers.ISSUED && op != null && op.blockCount() == 1 && callerPoll != null) {
        int device = op.local().deviceId();
        DevicePool pool = transfers.existingPool(device);
        int slot = pool == null ? -1 : pool.slotOf(op);
        if (slot >= 0) op.callerDrive = callerPoll.issued(device, pool, slot, op);
      }
    } finally {
      TURN.setVolatile(this, FREE);
    }
    if (issued == DeviceTransfers.NO_SLOT) return false;
    if (issued == DeviceTransfers.ISSUED) {
      callerIssued = true; // before the wake-up: a worker about to park sees the flag, or gets the unpark's permit
      wakeup();
    }
    return true;
  }

  /**
   * Awaiting thread ({@link XgmiCallerPoll}): {@code op}'s event on {@code pool}'s {@code slot} was seen completed; with the
   * turn free and {@code op} still on that slot, gives the slot back as a poll would and completes {@code op} here, after
   * giving the turn back (true). False, with nothing done, when the turn is taken, the worker took the op first, or its
   * region was revoked (the worker lets such a region go once its last op is reported, so it reports this one too).
   */
  boolean completeFromCaller(TransferOp op, DevicePool pool, int slot) {
    if (!TURN.compareAndSet(this, FREE, CALLER)) return false;
    try {
      if (closing || pool.ops[slot] != op) return false;
      RemoteRegion r = pool.regions[slot];
      if (r.state == RemoteRegion.State.REVOKED || !transfers.takeDone(pool, op, slot)) return false;
      r.inFlight--;
    } finally {
      TURN.setVolatile(this, FREE);
    }
    CompletedOps.complete(op, null, name());
    return true;
  }

  /** Awaiting thread ({@link XgmiCallerPoll}): it stopped querying its op's event; the worker's polls take it from here. */
  void pollAgain() {
    callerIssued = true;
    wakeup();
  }

  // ---- worker thread ----

  /**
   * Takes the turn for a round, unless the round would have nothing to do: no op, task or backlog, nothing on the GPU,
   * nothing a submitter issued, not closing. The poller calls rounds back to back while it spins after work, and an
   * empty round that took the turn each time made a submitter's single try for it fail: on the 1x H100 host only
   * 749-1,067 of 3,000 awaited batches were launched from the caller's thread, the rest handed to this worker. The
   * fields read here are this thread's own; a submitter that issues meanwhile sets {@link #callerIssued} and wakes it.
   */
  @Override
  protected boolean enterRound() {
    if (!closing && !callerIssued && !hasQueued() && backlog.isEmpty() && transfers.onGpu() == 0) return false;
    return TURN.compareAndSet(this, FREE, WORKER);
  }

  @Override
  protected void exitRound() {
    TURN.setVolatile(this, FREE);
    reportDone();
  }

  /** Reports what the polls of the turn just given back found done ({@link CompletedOps}). */
  private void reportDone() {
    long t0 = XgmiTrace.ON ? System.nanoTime() : 0;
    if (done.report(name()) > 0 && XgmiTrace.ON) XgmiTrace.reported(System.nanoTime() - t0);
  }

  /** Polls the events when the turn is free (outside a round: the waits of {@link #awaitWork}). */
  private int pollOnTurn() {
    if (!enterRound()) return 0;
    try {
      return pollCompletions();
    } finally {
      exitRound();
    }
  }

  @Override
  public int inFlight() {
    return transfers.onGpu() + backlog.size() + waitingForOwner;
  }

  @Override
  protected String closedReason() {
    return "XGMI backend of engine '" + engineKey + "' is closed";
  }

  @Override
  protected int work() {
    callerIssued = false; // this round polls what a submitter issued
    int work = pollCompletions();
    long t0 = XgmiTrace.ON ? System.nanoTime() : 0;
    if (XgmiTrace.ON) XgmiTrace.roundStarted();
    try {
      while (!backlog.isEmpty()) {
        if (!processTimed(backlog.peekFirst())) return work;
        backlog.pollFirst();
        work++;
      }
      TransferOp op;
      while ((op = ops.poll()) != null) {
        work++;
        if (!processTimed(op)) {
          backlog.addLast(op);
          break;
        }
      }
      return work;
    } finally {
      if (XgmiTrace.ON) XgmiTrace.issued(System.nanoTime() - t0);
    }
  }

  private final java.util.function.IntSupplier poll = this::pollOnTurn;
  private final java.util.function.BooleanSupplier onGpu = this::gpuBusy;

  private boolean gpuBusy() {
    return transfers.onGpu() > 0;
  }

  @Override
  public int awaitWork(long maxNanos) {
    if (isClosed()) {
      LockSupport.parkNanos(Math.min(maxNanos, 10_000_000L));
      return 0;
    }
    parked = Thread.currentThread();
    try {
      if (hasQueued() || closing || callerIssued) return 0;
      if (transfers.onGpu() > 0) {
        if (settings.pollNapNanos() > 0) {
          LockSupport.parkNanos(Math.min(maxNanos, settings.pollNapNanos()));
          return driven() && !closing ? pollOnTurn() : 0;
        }
        // Nothing but the GPU can end this wait, and it signals nothing: poll the events, giving the core away
        // between polls. A nap instead costs the timer slack (parkNanos sleeps ~50 us at least on Linux), which
        // is a tenth of a 256 MiB copy over NVLink and several times a 4 KiB one.
        return pollYielding(maxNanos, poll, onGpu);
      }
      // Nothing on the GPU. The next op often follows the last completion closely (a caller that waited for one
      // batch submits the next): spinning briefly before parking spares it the park/unpark wake-up, tens of
      // microseconds in front of its kernel. Only where cores are plentiful, as the engine's await spin.
      if (IDLE_SPIN_NANOS > 0) {
        long end = System.nanoTime() + Math.min(maxNanos, IDLE_SPIN_NANOS);
        while (System.nanoTime() - end < 0) {
          if (hasQueued() || closing || callerIssued) return 0;
          Thread.onSpinWait();
        }
      }
      LockSupport.parkNanos(maxNanos);
      return 0;
    } finally {
      parked = null;
    }
  }

  /** {@link #process} with the trace's issue parts around it ({@link XgmiTrace#PART_CHECK} ...). */
  private boolean processTimed(TransferOp op) {
    if (!XgmiTrace.ON) return process(op);
    XgmiTrace.issueStarted();
    try {
      return process(op);
    } finally {
      XgmiTrace.issueEnded();
    }
  }

  /**
   * Issues {@code op} or fails it; false only when every event of its device is in use (the caller keeps it
   * for later, in order).
   */
  private boolean process(TransferOp op) {
    if (op instanceof FusedBatch g) return fused.issue(g, this::process, backlog::addLast);
    XgmiPeer peer = (XgmiPeer) op.peer();
    if (!peer.alive()) {
      op.transferFailed(TransportError.PEER_LOST, "engine '" + peer.key + "' is gone from the XGMI backend: " + peer.lostReason());
      return true;
    }
    LocalRegion local = op.local();
    if (!local.live()) {
      op.transferFailed(TransportError.BAD_STATE, "local memory id " + local.id() + " was deregistered");
      return true;
    }
    RemoteRegion r = peer.region(op.remoteId());
    if (r == null) {
      r = new RemoteRegion(peer, op.remoteId(), op.remoteAccessKey());
      if (peer.regions.isEmpty() && !knownPeers.contains(peer)) knownPeers.add(peer);
      peer.regions.put(r.id, r);
      r.waiting.add(op);
      waitingForOwner++;
      askOwner(r);
      return true;
    }
    if (r.state == RemoteRegion.State.CONFIRMING) {
      r.waiting.add(op);
      waitingForOwner++;
      return true;
    }
    return issuer.issue(op, r);
  }

  @Override
  void retry(TransferOp op) {
    if (!backlog.isEmpty() || !processTimed(op)) backlog.addLast(op);
  }

  /** Completes the ops whose events have completed; returns how many. */
  private int pollCompletions() {
    long t0 = XgmiTrace.ON ? System.nanoTime() : 0;
    if (XgmiTrace.ON) XgmiTrace.passStarted();
    deferDone = true;
    try {
      return transfers.poll(this::finished, callerPoll);
    } finally {
      deferDone = false;
      if (XgmiTrace.ON) XgmiTrace.polled(System.nanoTime() - t0);
    }
  }

  /**
   * An op left the GPU (its event completed, or failed): report it (in a poll: once the turn is given back, see
   * {@link #reportDone}), and let a revoked region go once idle, after its ops were reported, as it always was.
   */
  private void finished(TransferOp op, RemoteRegion r, String error) {
    r.inFlight--;
    String why = error == null ? null : "XGMI transfer with " + r.describe() + " failed on the GPU: " + error;
    if (deferDone) done.add(op, why);
    else CompletedOps.complete(op, why, name());
    if (r.state == RemoteRegion.State.REVOKED && r.inFlight == 0) {
      reportDone();
      release(r);
    }
  }

  @Override
  void closeMappings(RemoteRegion r) {
    access.closeMappings(r);
  }

  /** Closing: queued ops failed by the base; here the backlog, what is on the GPU (run to its end), the peers' regions. */
  @Override
  protected void release(String reason) {
    TransferOp op;
    while ((op = backlog.pollFirst()) != null) op.transferFailed(TransportError.BAD_STATE, reason);
    // what is on the GPU runs to its end (a copy cannot be taken back); its op then reports how it went
    transfers.drain(this::finished);
    for (XgmiPeer peer : knownPeers) revokeAll(peer, TransportError.BAD_STATE, reason);
    transfers.close();
  }

  /** Streams, events, block tables and kernel modules held now, for leak checks. */
  int openGpuResources() {
    return transfers.openResources();
  }
}
