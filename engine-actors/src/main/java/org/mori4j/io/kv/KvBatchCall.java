package org.mori4j.io.kv;

import java.util.ArrayList;
import java.util.List;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.TransferStatus;
import org.mori4j.transport.xgmi.XgmiTrace;

/**
 * How one migration turns a plan of layers into one batch call of its engine: the per-batch buffer descriptors,
 * offsets, sizes and uids (the ones announced at open, or new ones), the receiver's landing board told that the
 * first call is issued, then the engine's {@code batchRead} or {@code batchWrite}. It is separate from
 * {@link KvMigration}, which decides which layers go when and tracks how they end, because building the engine call
 * is a step of its own that does not depend on that bookkeeping; the migration holds one in a field, so a call costs
 * what it did.
 */
final class KvBatchCall {
  /** One batch call's uids and statuses, in the order of its batches. */
  record Issued(long[] uids, List<TransferStatus> statuses) {}

  private final String requestId;
  private final boolean pull;
  private final KvCache local;
  private final KvCacheDesc remote;
  private final KvLandingBoard board;
  private final long boardSender;
  private final long boardIncarnation;

  KvBatchCall(String requestId, boolean pull, KvCache local, KvCacheDesc remote, KvLandingBoard board, long boardSender, long boardIncarnation) {
    this.requestId = requestId;
    this.pull = pull;
    this.local = local;
    this.remote = remote;
    this.board = board;
    this.boardSender = boardSender;
    this.boardIncarnation = boardIncarnation;
  }

  /** One batch call of migration {@code m} for {@code plan} (layers [a, b)); {@code m} counts what it issues. */
  Issued call(KvMigration m, KvTransferPlan plan, long[] preUids, int a, int b, boolean first) {
    List<KvTransferPlan.Batch> batches = plan.batches();
    int n = batches.size();
    if (preUids != null && preUids.length != n) throw new IllegalStateException("request '" + requestId + "': layers [" + a + ", " + b
        + ") announced " + preUids.length + " requests, the plan has " + n);
    List<MemoryDesc> locals = new ArrayList<>(n), remotes = new ArrayList<>(n);
    List<long[]> lo = new ArrayList<>(n), ro = new ArrayList<>(n), sizes = new ArrayList<>(n);
    long[] uids = preUids != null ? preUids : new long[n];
    for (int i = 0; i < n; i++) {
      KvTransferPlan.Batch x = batches.get(i);
      locals.add(local.bufferDesc(pull ? x.dstBuffer() : x.srcBuffer()));
      remotes.add(remote.buffers().get(pull ? x.srcBuffer() : x.dstBuffer()));
      lo.add(pull ? x.dstOffsets() : x.srcOffsets());
      ro.add(pull ? x.srcOffsets() : x.dstOffsets());
      sizes.add(x.sizes());
      if (preUids == null) uids[i] = local.engine().allocateTransferUid();
    }
    m.count(plan);
    if (first) {
      // the receiver's board reader spins from here until the "landed" posts come (a layer's copy takes ~0.2 ms)
      if (board != null) board.post(KvLandingBoard.KIND_ISSUED, boardSender, boardIncarnation, uids[0]);
      if (XgmiTrace.ON) XgmiTrace.first(XgmiTrace.PLANNED);
    }
    return new Issued(uids, pull ? local.engine().batchRead(locals, lo, remotes, ro, sizes, uids)
        : local.engine().batchWrite(locals, lo, remotes, ro, sizes, uids));
  }

  static long[] concat(long[] a, long[] b) {
    if (a.length == 0) return b;
    long[] c = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, c, a.length, b.length);
    return c;
  }
}
