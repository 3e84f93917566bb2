package org.mori4j.transport.xgmi;

import java.util.List;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.mori4j.transport.TransferOp;

/**
 * Puts the members of a {@link FusedBatch} on the GPU, sharing kernel launches: the members between the same local
 * device and the same remote device in the same direction go into one block table of absolute addresses (the
 * kernel's bases are 0), in call order, cut where a table would pass {@link XgmiSettings#maxBatchBlocks()}; each
 * such chunk is one launch and one event, and when that event completes every member of the chunk is completed on its
 * own ({@link DeviceTransfers#issueFused}). Every member is checked on its own first, by the same checks and with the
 * same messages as a lone op ({@link XgmiIssuer#prepare}), so a bad member fails alone and the others still move. A
 * member that is not ready for that (its peer gone, its local region deregistered, the owner's answer about its remote
 * region not yet in) takes the worker's path for a lone op instead: the first batch with regions new to this backend
 * is therefore issued one launch per member, later ones are fused. Whoever holds the worker's turn only.
 */
final class FusedIssue {
  private final XgmiSettings settings;
  private final XgmiIssuer issuer;
  private final DeviceTransfers transfers;
  // scratch of one call: the members found ready, and the chunk being issued
  private TransferOp[] ops = new TransferOp[16];
  private RemoteRegion[] regions = new RemoteRegion[16];
  private long[] bases = new long[16];
  private long[] mins = new long[16];
  private long[] maxs = new long[16];
  private int[] index = new int[16];
  private boolean[] placed = new boolean[16];
  private TransferOp[] chunkOps = new TransferOp[16];
  private RemoteRegion[] chunkRegions = new RemoteRegion[16];
  private long[] chunkBases = new long[16];
  private int[] chunkIndex = new int[16];

  FusedIssue(XgmiSettings settings, XgmiIssuer issuer, DeviceTransfers transfers) {
    this.settings = settings;
    this.issuer = issuer;
    this.transfers = transfers;
  }

  /**
   * Worker: issues what it can of {@code g}; true when every member has left the group, false when a launch found no
   * free event slot (the group keeps the members not yet issued, to be tried again in order). Members not ready for a
   * shared launch go to {@code single} (the worker's path for a lone op; false: no slot), and to {@code later} when it
   * has no slot for them.
   */
  boolean issue(FusedBatch g, Predicate<TransferOp> single, Consumer<TransferOp> later) {
    int count = 0;
    for (int i = 0; i < g.size(); i++) {
      TransferOp m = g.member(i);
      if (m == null) continue;
      XgmiPeer peer = (XgmiPeer) m.peer();
      RemoteRegion r = peer.alive() && m.local().live() ? peer.region(m.remoteId()) : null;
      if (r == null || r.state != RemoteRegion.State.READY) {
        g.take(i);
        if (!single.test(m)) later.accept(m);
        continue;
      }
      long base = issuer.prepare(m, r, m.local().deviceId());
      if (base == 0) {
        g.take(i); // failed or handed to another backend, said why
        continue;
      }
      grow(count + 1);
      ops[count] = m;
      regions[count] = r;
      bases[count] = base;
      mins[count] = issuer.preparedMin;
      maxs[count] = issuer.preparedMax;
      index[count] = i;
      placed[count] = false;
      count++;
    }
    for (int first = 0; first < count; first++) {
      if (placed[first]) continue;
      int device = ops[first].local().deviceId(), remote = regions[first].localDevice;
      byte kind = ops[first].kind();
      while (true) {
        int c = 0;
        long blocks = 0, min = Long.MAX_VALUE, max = 0;
        for (int j = first; j < count; j++) {
          if (placed[j] || ops[j].local().deviceId() != device || regions[j].localDevice != remote || ops[j].kind() != kind) continue;
          int n = ops[j].blockCount();
          if (c > 0 && blocks + n > settings.maxBatchBlocks()) break;
          placed[j] = true;
          chunkOps[c] = ops[j];
          chunkRegions[c] = regions[j];
          chunkBases[c] = bases[j];
          chunkIndex[c] = j;
          c++;
          blocks += n;
          min = Math.min(min, mins[j]);
          max = Math.max(max, maxs[j]);
        }
        if (c == 0) break;
        int issued = c == 1
            ? transfers.issue(chunkOps[0], chunkRegions[0], device, chunkBases[0], min, max)
            : transfers.issueFused(chunkOps, chunkRegions, chunkBases, c, (int) blocks, min, max, device, false);
        if (issued == DeviceTransfers.NO_SLOT) {
          java.util.Arrays.fill(chunkOps, 0, c, null);
          return false;
        }
        for (int k = 0; k < c; k++) {
          if (issued == DeviceTransfers.ISSUED) chunkRegions[k].inFlight++;
          g.take(index[chunkIndex[k]]);
          chunkOps[k] = null;
          chunkRegions[k] = null;
        }
      }
    }
    java.util.Arrays.fill(ops, 0, count, null);
    java.util.Arrays.fill(regions, 0, count, null);
    return g.empty();
  }

  /**
   * A submitting thread holding the turn: all members of {@code list} as one launch when every one is ready for it
   * ({@link XgmiIssuer#readyRegion}, a remote base needing nothing opened), all between the same two devices in the
   * same direction and within the block limit together: {@link DeviceTransfers#ISSUED}, {@link DeviceTransfers#FAILED}
   * (every member failed with the worker's message), or {@link DeviceTransfers#NO_SLOT} with nothing done.
   */
  int issueReady(List<? extends TransferOp> list) {
    int c = 0, device = -1, remote = -1;
    byte kind = 0;
    long blocks = 0, min = Long.MAX_VALUE, max = 0;
    for (TransferOp m : list) {
      RemoteRegion r = issuer.readyRegion(m);
      if (r == null) return DeviceTransfers.NO_SLOT;
      int d = m.local().deviceId();
      if (c == 0) {
        device = d;
        remote = r.localDevice;
        kind = m.kind();
      } else if (d != device || r.localDevice != remote || m.kind() != kind) {
        return DeviceTransfers.NO_SLOT; // the worker splits them by devices and direction
      }
      long base = issuer.readyBase(r, d);
      if (base == 0) return DeviceTransfers.NO_SLOT;
      int n = m.blockCount();
      blocks += n;
      if (blocks > settings.maxBatchBlocks()) return DeviceTransfers.NO_SLOT;
      grow(c + 1);
      chunkOps[c] = m;
      chunkRegions[c] = r;
      chunkBases[c] = base;
      c++;
      min = Math.min(min, n == 1 ? m.blockSize(0) : m.minBlockSize());
      max = Math.max(max, n == 1 ? m.blockSize(0) : m.maxBlockSize());
    }
    int issued = c < 2 ? DeviceTransfers.NO_SLOT
        : transfers.issueFused(chunkOps, chunkRegions, chunkBases, c, (int) blocks, min, max, device, true);
    for (int k = 0; k < c; k++) {
      if (issued == DeviceTransfers.ISSUED) chunkRegions[k].inFlight++;
      chunkOps[k] = null;
      chunkRegions[k] = null;
    }
    return issued;
  }

  private void grow(int n) {
    if (n <= ops.length) return;
    int size = Math.max(n, ops.length * 2);
    ops = java.util.Arrays.copyOf(ops, size);
    regions = java.util.Arrays.copyOf(regions, size);
    bases = java.util.Arrays.copyOf(bases, size);
    mins = java.util.Arrays.copyOf(mins, size);
    maxs = java.util.Arrays.copyOf(maxs, size);
    index = java.util.Arrays.copyOf(index, size);
    placed = java.util.Arrays.copyOf(placed, size);
    chunkOps = java.util.Arrays.copyOf(chunkOps, size);
    chunkRegions = java.util.Arrays.copyOf(chunkRegions, size);
    chunkBases = java.util.Arrays.copyOf(chunkBases, size);
    chunkIndex = java.util.Arrays.copyOf(chunkIndex, size);
  }
}
