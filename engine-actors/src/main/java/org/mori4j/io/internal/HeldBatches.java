package org.mori4j.io.internal;

import java.util.ArrayList;
import java.util.List;
import org.mori4j.transport.TransferBackend;

/**
 * The checked entries of one batch-of-batches call ({@link TransferPath#batches}) that were routed to a backend that
 * fuses batches ({@link TransferBackend#fusesBatches}: XGMI, where the entries between the same two devices then
 * share one kernel launch), held until every entry of the call has been routed and then handed to each backend
 * together: first as one issue from the caller's thread, all or nothing
 * ({@link TransferBackend#issueGroupFromCaller}), else, once every op that still carries the caller's arrays has
 * arrays of its own, queued as one group ({@link TransferBackend#submitGroup}). A backend that got only one entry
 * gets it exactly as an entry outside a call of several would. Every entry keeps its status, uid and metrics; only
 * the hand-over is shared. One per call, on the calling thread.
 */
final class HeldBatches {
  private final TransferPath path;
  /** Backends in the order their first entry was routed, each with its ops and, per op, the caller's arrays it still carries. */
  private final List<TransferBackend> backends = new ArrayList<>(1);
  private final List<List<TransferStatusImpl>> ops = new ArrayList<>(1);
  private final List<List<long[][]>> callerArrays = new ArrayList<>(1);

  HeldBatches(TransferPath path) {
    this.path = path;
  }

  /** Holds {@code st} for {@code backend}; {@code lo}, {@code ro}, {@code sizes}: the caller's arrays it carries, or null when it has its own. */
  void add(TransferBackend backend, TransferStatusImpl st, long[] lo, long[] ro, long[] sizes) {
    int i = backends.indexOf(backend);
    if (i < 0) {
      i = backends.size();
      backends.add(backend);
      ops.add(new ArrayList<>());
      callerArrays.add(new ArrayList<>());
    }
    ops.get(i).add(st);
    callerArrays.get(i).add(lo == null ? null : new long[][] {lo, ro, sizes});
  }

  /** Hands every held op to its backend (see the class comment). */
  void flush() {
    for (int i = 0; i < backends.size(); i++) {
      TransferBackend b = backends.get(i);
      List<TransferStatusImpl> group = ops.get(i);
      List<long[][]> arrays = callerArrays.get(i);
      if (group.size() == 1) {
        TransferStatusImpl st = group.get(0);
        long[][] a = arrays.get(0);
        if (st.blockCount() > 1 && b.issueFromCaller(st)) continue;
        if (a != null) path.ownArrays(st, b, a[0], a[1], a[2]);
        b.submit(st);
        continue;
      }
      if (b.issueGroupFromCaller(group)) continue;
      for (int k = 0; k < group.size(); k++) {
        long[][] a = arrays.get(k);
        if (a != null) path.ownArrays(group.get(k), b, a[0], a[1], a[2]);
      }
      b.submitGroup(group);
    }
  }
}
