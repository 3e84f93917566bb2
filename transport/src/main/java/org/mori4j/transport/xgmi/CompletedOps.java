package org.mori4j.transport.xgmi;

import java.util.ArrayList;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ops the XGMI worker's poll found done, kept until the worker has given its turn back and then reported in the order
 * they were found: a caller woken by its op's completion usually submits its next batch at once, and while the poll
 * that completed it still held the turn that batch could not be launched from the caller's thread (on the 2-core VM
 * the turn was the worker's poll in 2,310 of 2,311 refused tries) and went to the worker instead. Worker thread only;
 * a submitting thread never touches it.
 */
final class CompletedOps {
  private static final Logger log = LoggerFactory.getLogger(CompletedOps.class);
  private final ArrayList<TransferOp> ops = new ArrayList<>();
  /** Null for a success, else the failure message; one per op. */
  private final ArrayList<String> failures = new ArrayList<>();

  void add(TransferOp op, String failure) {
    ops.add(op);
    failures.add(failure);
  }

  /** Completes every op kept ({@code worker}: the worker's name, for the log), and forgets them; returns how many. */
  int report(String worker) {
    int n = ops.size();
    if (n == 0) return 0;
    for (int i = 0; i < n; i++) complete(ops.get(i), failures.get(i), worker);
    ops.clear();
    failures.clear();
    return n;
  }

  /** Ends {@code op} as succeeded ({@code failure} null) or failed on the GPU. */
  static void complete(TransferOp op, String failure, String worker) {
    try {
      if (failure == null) op.transferSucceeded();
      else op.transferFailed(TransportError.GPU_OP, failure);
    } catch (RuntimeException e) {
      // one op's listener must not keep the others from completing
      log.warn("{}: completing an XGMI transfer: {}", worker, e.toString());
    }
  }
}
