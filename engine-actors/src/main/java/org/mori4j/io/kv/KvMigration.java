package org.mori4j.io.kv;

import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.typed.ActorRef;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TransferStatus;
import org.mori4j.transport.xgmi.XgmiTrace;

/**
 * One request's blocks on their way between two caches: pushed (written by the source's engine), pulled (read by
 * the destination's engine), or streamed layer by layer with {@link #sendLayers}. It completes once every layer
 * has landed, or with the first failure, whose code it keeps ({@code ERR_PEER_LOST} when the peer is lost) and
 * whose message names the request. Bad input (block ids, layouts, layer ranges) is refused before a byte moves:
 * the handle is then already failed with {@code ERR_INVALID_ARGS}.
 *
 * <p>{@link #cancel()} refuses layers not yet sent, cancels the transfers already issued ({@link TransferStatus#cancel()}:
 * a TCP request that has not left is not sent, a pull's late data goes to scratch memory) and completes the handle
 * at once as a cancelled transfer does: {@code ERR_TIMEOUT}, "request 'R' cancelled by the caller"; the receiver is
 * told that the request was aborted instead of "landed". Once it returns
 * true this side's blocks are no longer read or written for the request; a push's destination blocks may hold
 * part of what was sent (a write that left lands).
 */
public final class KvMigration {
  /** How the bytes move. */
  public enum Mode { PUSH, PULL, STREAM }

  /** The outcome of one {@link #sendLayers} call: {@code code} is SUCCESS once those layers landed. */
  public record Chunk(int fromLayer, int toLayer, StatusCode code, String message) {}

  private final String requestId;
  private final long migrationId = KvMigrationIds.next(); // its identity in every notice to the receiver
  private final Mode mode;
  private final KvCache local;
  private final KvCacheDesc remote;
  private final int[] srcBlocks;
  private final int[] dstBlocks;
  private final ActorRef<KvProtocol.Command> remoteEndpoint;
  private final CompletableFuture<KvMigration> done = new CompletableFuture<>();
  private final BitSet sent = new BitSet();
  private final AtomicInteger layersLanded = new AtomicInteger();
  private final List<TransferStatus> inFlight = new ArrayList<>();
  private KvTransferPlan.Prepared prepared;
  /** Requests each batch is cut into (1: not cut): the TCP connections to the peer, when it is reached over TCP. */
  private final int parts;
  private final boolean tcp;
  /** Layers in the first batch call of an {@link #issue}, doubling per call after; 0: one call ({@code mori4j.kv.first-chunk-layers}). */
  private final int firstChunk;
  /** The receiving engine's landing board (an XGMI peer on this host) each completed write is posted to, or null. */
  private final KvLandingBoard board;
  private final long boardSender;
  /** This engine's incarnation, in each board entry and announcement (the receiver matches the two). */
  private final long boardIncarnation;
  /** A TCP stream's uids per layer, told to the receiver at open ({@link #announceLayers}); null: told per call. */
  private long[][] announced;
  /** The plans behind {@link #announced}, each layer's dropped once sent: no plan is built in {@link #sendLayers}. */
  private KvTransferPlan[] announcedPlans;
  /** Builds and makes each engine batch call of this migration. */
  private final KvBatchCall batchCall;
  private volatile StatusCode code = StatusCode.IN_PROGRESS;
  private volatile String message = "";
  private long bytes;
  private int transfers;
  private int blockSlots;

  KvMigration(String requestId, Mode mode, KvCache local, KvCacheDesc remote, int[] srcBlocks, int[] dstBlocks,
              ActorRef<KvProtocol.Command> remoteEndpoint) {
    this.requestId = requestId;
    this.mode = mode;
    this.local = local;
    this.remote = remote;
    this.srcBlocks = srcBlocks;
    this.dstBlocks = dstBlocks;
    this.remoteEndpoint = remoteEndpoint;
    org.mori4j.io.BackendType route = local != null ? local.route(remote) : null;
    this.tcp = route == org.mori4j.io.BackendType.TCP;
    this.parts = tcp ? local.tcpBatchParts() : 1;
    this.board = local != null && mode != Mode.PULL ? local.landingBoard(remote, route) : null;
    this.firstChunk = local != null ? local.firstChunkLayers() : 0;
    this.boardSender = board != null ? local.boardSenderId() : 0;
    this.boardIncarnation = board != null ? local.boardIncarnation() : 0;
    this.batchCall = new KvBatchCall(requestId, mode == Mode.PULL, local, remote, board, boardSender, boardIncarnation);
    if (local != null && mode == Mode.STREAM) {
      try {
        // before the first sendLayers, whose call is part of the time a stream exposes
        prepared = KvTransferPlan.prepare(local.layout(), srcBlocks, remote.layout(), dstBlocks, true);
      } catch (IllegalArgumentException e) {
        // KvCache checked the blocks already; issue() reports it if not
      }
    }
  }

  /**
   * A stream to a peer reached over TCP, or to an XGMI peer with a landing board, tells the receiver every layer's
   * uids now, one {@link KvProtocol.LayersSent} per layer, so that {@link #sendLayers} issues its writes without a
   * remote message (a remote tell costs tens of microseconds in the call and its remoting threads compete with the
   * layer's bytes on a small host) and the receiver knows each write before it lands (the board's entry is matched at
   * once, not after a Pekko hop). Costs one plan per layer here, before the first layer, kept until that layer is
   * sent (a 4,096-token Llama-3-70B stream: 80 plans of 512 entries, ~1 MiB). Elsewhere nothing happens.
   */
  void announceLayers() {
    if (mode != Mode.STREAM || prepared == null || !(tcp || board != null)) return;
    int layers = local.layout().layers();
    long[][] uids = new long[layers][];
    KvTransferPlan[] plans = new KvTransferPlan[layers];
    for (int l = 0; l < layers; l++) {
      plans[l] = prepared.plan(l, l + 1).split(parts, local.minPartBytes());
      uids[l] = new long[plans[l].batches().size()];
      for (int i = 0; i < uids[l].length; i++) uids[l][i] = local.engine().allocateTransferUid();
    }
    for (int l = 0; l < layers; l++)
      remoteEndpoint.tell(new KvProtocol.LayersSent(remote.name(), requestId, migrationId, l, l + 1, local.engine().key(), uids[l], board != null, boardIncarnation));
    synchronized (this) {
      announced = uids;
      announcedPlans = plans;
    }
  }

  static KvMigration refused(String requestId, Mode mode, String why) {
    KvMigration m = new KvMigration(requestId, mode, null, null, null, null, null);
    m.finish(StatusCode.ERR_INVALID_ARGS, "request '" + requestId + "': " + why);
    return m;
  }

  public String requestId() { return requestId; }

  /** The identity its notices carry to the receiver (tests). */
  long migrationId() { return migrationId; }

  public Mode mode() { return mode; }

  public StatusCode code() { return code; }

  /** Empty on success; otherwise what went wrong, naming the request. */
  public String message() { return message; }

  public boolean inProgress() { return code == StatusCode.IN_PROGRESS; }

  public boolean succeeded() { return code == StatusCode.SUCCESS; }

  public boolean failed() { return !inProgress() && !succeeded(); }

  /** Bytes issued so far. */
  public synchronized long bytes() { return bytes; }

  /** Transfer entries issued so far, after coalescing. */
  public synchronized int transfers() { return transfers; }

  /** (layer, tensor, block) slots issued so far: what a per-block loop would have issued. */
  public synchronized int blockSlots() { return blockSlots; }

  /** Completed with this handle when the migration is done (also on failure or cancellation). */
  public CompletionStage<KvMigration> completion() { return done; }

  /** Waits at most {@code timeout}; false if still in progress. */
  public boolean await(Duration timeout) {
    try {
      done.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
      return true;
    } catch (java.util.concurrent.TimeoutException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (java.util.concurrent.ExecutionException e) {
      return true;
    }
  }

  /**
   * Streams layers {@code [fromLayer, toLayer)} now (a {@link Mode#STREAM} migration only; any order, each layer
   * once). The stage completes when they landed on the receiver's side, or at once when refused.
   */
  public CompletionStage<Chunk> sendLayers(int fromLayer, int toLayer) {
    if (mode != Mode.STREAM) return refusedChunk(fromLayer, toLayer, StatusCode.ERR_BAD_STATE, "sendLayers needs a stream; this migration is " + mode);
    int layers = local.layout().layers();
    if (fromLayer < 0 || toLayer > layers || fromLayer >= toLayer)
      return refusedChunk(fromLayer, toLayer, StatusCode.ERR_INVALID_ARGS, "layer range [" + fromLayer + ", " + toLayer + ") is empty or outside [0, " + layers + ")");
    synchronized (this) {
      if (!inProgress()) return refusedChunk(fromLayer, toLayer, StatusCode.ERR_BAD_STATE, "the migration already ended: " + code + " " + message);
      int again = sent.nextSetBit(fromLayer);
      if (again >= 0 && again < toLayer) return refusedChunk(fromLayer, toLayer, StatusCode.ERR_INVALID_ARGS, "layer " + again + " was already sent");
      sent.set(fromLayer, toLayer);
    }
    return issue(fromLayer, toLayer);
  }

  /**
   * Cancels: layers not yet sent are refused from now on, transfers already issued are cancelled, and the handle
   * completes with {@code ERR_TIMEOUT} ("cancelled by the caller"), the code {@link TransferStatus#cancel()} gives a
   * cancelled transfer; see the class comment. False if it had ended.
   */
  public boolean cancel() {
    if (!finish(StatusCode.ERR_TIMEOUT, "request '" + requestId + "' cancelled by the caller")) return false;
    List<TransferStatus> issued;
    synchronized (this) {
      issued = List.copyOf(inFlight);
    }
    // issue() adds its statuses under this lock after the finish above, or sees the migration ended and cancels them itself
    for (TransferStatus s : issued) s.cancel();
    tellAborted("cancelled by the sender");
    return true;
  }

  /** Transfers issued and not yet ended. */
  public synchronized int transfersInFlight() {
    return inFlight.size();
  }

  /**
   * Issues the transfers of layers {@code [from, to)}: one batch per buffer pair, each cut into {@link #parts} over TCP
   * ({@link KvTransferPlan#split}), in calls of {@link #firstChunk} layers, then twice as many each call
   * ({@link KvChunks}), or in one call. The first call's copies run while the next layers are planned and submitted,
   * so the plan of a large migration (a Llama-3-70B 4,096-token one: 40,960 slots, ~0.25-1.8 ms on the caller's thread,
   * bench/results kv-gap) is no longer in front of its first byte. The blocks were checked before this migration
   * existed ({@link KvCache#migrate}); a call stops the next ones once the migration ended (cancelled or failed).
   */
  CompletionStage<Chunk> issue(int from, int to) {
    boolean pull = mode == Mode.PULL;
    KvTransferPlan pre = null;
    long[] preUids = null;
    try {
      synchronized (this) {
        // checked and sorted once per migration: a stream's later layers only walk their slots
        if (prepared == null)
          prepared = pull ? KvTransferPlan.prepare(remote.layout(), srcBlocks, local.layout(), dstBlocks, true)
              : KvTransferPlan.prepare(local.layout(), srcBlocks, remote.layout(), dstBlocks, true);
        // a single layer goes as announced (and planned) at open; a range of several is told as one range, as before
        // (its layers' announcements are dropped on the receiver when the sender reports the range landed or aborted)
        if (to == from + 1) {
          if (announcedPlans != null) {
            pre = announcedPlans[from];
            announcedPlans[from] = null;
          }
          if (announced != null) preUids = announced[from];
        }
      }
      if (pre == null && (from < 0 || to > local.layout().layers() || from >= to))
        throw new IllegalArgumentException("layer range [" + from + ", " + to + ") is empty or outside [0, " + local.layout().layers() + ")");
    } catch (IllegalArgumentException e) {
      fail(StatusCode.ERR_INVALID_ARGS, e.getMessage());
      return refusedChunk(from, to, StatusCode.ERR_INVALID_ARGS, e.getMessage());
    }
    CompletableFuture<Chunk> chunk = new CompletableFuture<>();
    // one count per issued status plus one held while calls are still being made, so that statuses done before the
    // last call cannot report the range landed early
    AtomicInteger left = new AtomicInteger(1);
    KvChunks calls = new KvChunks(from, to, pre != null ? 0 : firstChunk, prepared.layerUnit());
    long[] told = pull || preUids != null ? null : new long[0];
    boolean first = true, stopped = false;
    for (int a = from, b; a < to; a = b) {
      long t0 = XgmiTrace.ON ? System.nanoTime() : 0, t1 = 0, t2 = 0;
      b = calls.next(a);
      KvTransferPlan plan, whole = null;
      try {
        // the arrays come from the cache's pool and go back once the call returned (KvPlanArrays)
        if (pre == null) whole = prepared.plan(a, b, local.planArrays());
        plan = pre != null ? pre : whole.split(parts, local.minPartBytes());
      } catch (IllegalArgumentException e) {
        if (fail(StatusCode.ERR_INVALID_ARGS, e.getMessage())) tellAborted(e.getMessage());
        stopped = true;
        break;
      }
      KvBatchCall.Issued is;
      if (XgmiTrace.ON) t1 = System.nanoTime();
      try {
        is = batchCall.call(this, plan, first ? preUids : null, a, b, first);
        if (XgmiTrace.ON) t2 = System.nanoTime();
      } catch (RuntimeException e) {
        if (first) throw e; // as before chunks: the engine's refusal of the first call reaches migrate()'s caller
        String why = "request '" + requestId + "': layers [" + a + ", " + to + ") could not be issued: " + e;
        if (fail(StatusCode.ERR_BAD_STATE, why)) tellAborted(why);
        stopped = true;
        break;
      }
      // the engine reads a caller's arrays only until the call returns: the next call's plan may have them
      if (whole != null) whole.release(local.planArrays());
      long[] uids = is.uids();
      List<TransferStatus> st = is.statuses();
      if (told != null) told = KvBatchCall.concat(told, uids);
      first = false;
      boolean ended;
      synchronized (this) {
        inFlight.addAll(st);
        ended = !inProgress();
      }
      left.addAndGet(st.size());
      // cancelled (or failed) while these were being issued: they must not move bytes for a migration that is over
      if (ended) for (TransferStatus s : st) s.cancel();
      for (int i = 0; i < st.size(); i++) watch(st.get(i), uids[i], from, to, left, chunk);
      if (XgmiTrace.ON) XgmiTrace.callerCall(t1 - t0, t2 - t1, System.nanoTime() - t2);
      if (ended && b < to) {
        stopped = true;
        break;
      }
    }
    if (XgmiTrace.ON) XgmiTrace.last(XgmiTrace.RETURNED);
    // announced after the data left: a remote tell costs 20-300 us on a loaded host, which the layer's bytes no
    // longer wait for; the receiving engine matches writes that landed before the announcement when it arrives
    if (told != null && told.length > 0)
      remoteEndpoint.tell(new KvProtocol.LayersSent(remote.name(), requestId, migrationId, from, to, local.engine().key(), told, board != null, boardIncarnation));
    // the calls stopped early (the migration ended): the range did not land, whatever its issued statuses do
    if (stopped && !chunk.isDone()) chunk.complete(new Chunk(from, to, code, message));
    if (left.decrementAndGet() == 0 && !chunk.isDone()) {
      if (XgmiTrace.ON) XgmiTrace.last(XgmiTrace.STATUSES_DONE);
      KvHopTrace.mark(KvHopTrace.COMPLETED, requestId, from, to);
      allDone(from, to, chunk, false);
    }
    return chunk;
  }

  /** Counts what one batch call issues (under this migration's lock, as {@link #bytes} reads it). */
  synchronized void count(KvTransferPlan plan) {
    bytes += plan.bytes();
    transfers += plan.transfers();
    blockSlots += plan.blockSlots();
  }

  /** Counts {@code s} (one of range [from, to)'s statuses) down when it ends; the last one reports the range. */
  private void watch(TransferStatus s, long uid, int from, int to, AtomicInteger left, CompletableFuture<Chunk> chunk) {
    boolean pull = mode == Mode.PULL;
    s.completion().whenComplete((x, err) -> {
      synchronized (this) {
        inFlight.remove(s);
      }
      if (s.failed() || err != null) {
        StatusCode c = err != null ? StatusCode.ERR_BAD_STATE : s.code();
        String why = "request '" + requestId + "': layers [" + from + ", " + to + ") " + (pull ? "from" : "to") + " cache '" + remote.name()
            + "' of engine '" + remote.engineKey() + "': " + (err != null ? err.toString() : s.message());
        if (fail(c, why)) tellAborted(why);
        chunk.complete(new Chunk(from, to, c, why));
        return;
      }
      boolean last = left.decrementAndGet() == 0 && !chunk.isDone();
      if (last) {
        if (XgmiTrace.ON) XgmiTrace.last(XgmiTrace.STATUSES_DONE);
        KvHopTrace.mark(KvHopTrace.COMPLETED, requestId, from, to);
      }
      // posted before the Pekko message (kept as the fallback), and like it only while the migration is on
      boolean posted = board != null && inProgress() && board.post(KvLandingBoard.KIND_LANDED, boardSender, boardIncarnation, uid);
      if (last) allDone(from, to, chunk, posted);
    });
  }

  /** Every status of range [from, to) succeeded: report the range landed and complete its chunk. */
  private void allDone(int from, int to, CompletableFuture<Chunk> chunk, boolean posted) {
    if (chunk.isDone()) return;
    if (posted) KvHopTrace.mark(KvHopTrace.TOLD, requestId, from, to);
    landed(from, to);
    chunk.complete(new Chunk(from, to, StatusCode.SUCCESS, ""));
  }

  /** The data of layers [from, to) is in the destination: say so there, then count them. */
  private void landed(int from, int to) {
    if (!inProgress()) return;
    if (mode == Mode.PULL) local.landings().landed(requestId, migrationId, from, to, remote.engineKey());
    else {
      remoteEndpoint.tell(new KvProtocol.LayersLanded(remote.name(), requestId, migrationId, from, to, local.engine().key()));
      KvHopTrace.mark(KvHopTrace.TOLD, requestId, from, to);
    }
    if (layersLanded.addAndGet(to - from) == local.layout().layers()) finish(StatusCode.SUCCESS, "");
  }

  private void tellAborted(String why) {
    if (mode == Mode.PULL) local.landings().aborted(requestId, migrationId, remote.engineKey(), why);
    else remoteEndpoint.tell(new KvProtocol.RequestAborted(remote.name(), requestId, migrationId, local.engine().key(), why));
  }

  private boolean fail(StatusCode c, String why) {
    return finish(c, why);
  }

  boolean finish(StatusCode c, String msg) {
    synchronized (this) {
      if (code != StatusCode.IN_PROGRESS) return false;
      message = msg;
      code = c;
      announcedPlans = null; // an ended stream sends no more layers
    }
    if (local != null) local.ended(this);
    if (XgmiTrace.ON) XgmiTrace.first(XgmiTrace.FINISHED);
    done.complete(this);
    return true;
  }

  private static CompletionStage<Chunk> refusedChunk(int from, int to, StatusCode c, String why) {
    return CompletableFuture.completedFuture(new Chunk(from, to, c, why));
  }

  @Override
  public String toString() {
    return "KvMigration[" + requestId + ", " + mode + ", " + code + (message.isEmpty() ? "" : ": " + message) + "]";
  }
}
