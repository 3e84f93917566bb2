package org.mori4j.transport.xgmi;

import java.lang.foreign.MemorySegment;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The XGMI worker's transfers on the GPU (worker thread only): puts a checked op on a stream of its device (a
 * copy for one block; the block table's upload and one gather/scatter kernel launch for a batch; one launch for the
 * entries of a fused batch-of-batches call, {@link #issueFused}) with a pooled event behind it, asks those events ({@code cuEventQuery}, never blocking) which ops are done, and owns what
 * that takes: a {@link DevicePool} per device and the kernel's modules. Which device pairs have peer access is
 * {@link PeerAccess}'s.
 */
final class DeviceTransfers implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(DeviceTransfers.class);
  static final int ISSUED = 1, NO_SLOT = 0, FAILED = -1;

  /** Told of every op that leaves the GPU: {@code error} is null when it succeeded. */
  @FunctionalInterface
  interface Finished {
    void finished(TransferOp op, RemoteRegion region, String error);
  }

  private final String name;
  private final GpuRuntime gpu;
  private final XgmiSettings settings;
  private final DevicePool[] pools;
  private final GatherKernel kernel;
  /** Told of each kernel launch (the engine's metrics count them). */
  private final org.mori4j.transport.BackendListener listener;
  private int onGpu;
  /** The worker's scratch for a fused table (reused: one per backend, the worker's turn guards it). */
  private final FusedTable fusedTable = new FusedTable();

  DeviceTransfers(String engineKey, GpuRuntime gpu, XgmiSettings settings, int devices,
                  org.mori4j.transport.BackendListener listener) {
    this.listener = listener;
    this.name = "xgmi-" + engineKey;
    this.gpu = gpu;
    this.settings = settings;
    this.pools = new DevicePool[devices];
    this.kernel = new GatherKernel(gpu);
  }

  /** Ops on the GPU now. */
  int onGpu() {
    return onGpu;
  }

  /**
   * Puts {@code op} (checked; {@code remoteBase} usable from {@code device}; its blocks between {@code minBlock}
   * and {@code maxBlock} bytes) on the GPU: {@link #ISSUED},
   * {@link #NO_SLOT} when every event of the device is in use (nothing was done), or {@link #FAILED} after
   * failing the op.
   */
  int issue(TransferOp op, RemoteRegion r, int device, long remoteBase, long minBlock, long maxBlock) {
    if (XgmiTrace.ON) XgmiTrace.part(XgmiTrace.PART_CHECK);
    DevicePool pool = pool(device);
    int slot;
    try {
      slot = pool.acquire();
    } catch (RuntimeException e) {
      op.transferFailed(TransportError.GPU_OP, "XGMI cannot create an event on device " + device + ": " + e.getMessage());
      return FAILED;
    }
    if (slot < 0) {
      if (XgmiTrace.ON) XgmiTrace.noFreeEvent();
      return NO_SLOT;
    }
    GpuStream stream = pool.stream();
    if (XgmiTrace.ON) XgmiTrace.part(XgmiTrace.PART_SLOT);
    int issued = issue(op, r, device, remoteBase, minBlock, maxBlock, pool, slot, stream);
    if (XgmiTrace.ON && issued == ISSUED) XgmiTrace.workerIssued();
    return issued;
  }

  /**
   * {@link #issue} from a submitting thread (holding the worker's turn): only when the device's pool, a slot with its
   * event and a block table big enough, and the next stream exist already, since that thread creates no native
   * resource; {@link #NO_SLOT} (nothing done) otherwise.
   */
  int issueReady(TransferOp op, RemoteRegion r, int device, long remoteBase, long minBlock, long maxBlock) {
    int n = op.blockCount();
    DevicePool pool = readyPool(device, n > 1);
    int slot = pool == null ? -1 : pool.acquireReady(n == 1 ? 0 : GatherKernel.tableBytes(n, minBlock == maxBlock));
    if (slot < 0) return NO_SLOT;
    int issued = issue(op, r, device, remoteBase, minBlock, maxBlock, pool, slot, pool.readyStream());
    if (XgmiTrace.ON && issued == ISSUED) XgmiTrace.callerIssued();
    return issued;
  }

  /**
   * {@code device}'s pool for a submitting thread, which creates no native resource: null unless the pool, its next
   * stream and (for a launch, {@code kernel}) the loaded kernel exist already. A slot the caller then takes with
   * {@link DevicePool#acquireReady} can be issued on {@link DevicePool#readyStream}.
   */
  private DevicePool readyPool(int device, boolean kernel) {
    DevicePool pool = device < pools.length ? pools[device] : null;
    if (pool == null || !pool.hasReadyStream() || kernel && !this.kernel.loaded(device)) return null;
    return pool;
  }

  private int issue(TransferOp op, RemoteRegion r, int device, long remoteBase, long minBlock, long maxBlock, DevicePool pool, int slot,
                    GpuStream stream) {
    int n = op.blockCount();
    LocalRegion local = op.local();
    boolean queued = false; // work that may read the slot's table is on the stream
    try {
      if (XgmiTrace.ON) {
        pool.traceStart(slot, stream);
        XgmiTrace.part(XgmiTrace.PART_TRACE);
      }
      boolean write = op.kind() == TransferOp.WRITE;
      long localBase = local.address();
      if (n == 1) {
        long src = write ? localBase + op.localOffset(0) : remoteBase + op.remoteOffset(0);
        long dst = write ? remoteBase + op.remoteOffset(0) : localBase + op.localOffset(0);
        if (r.peer.sameProcess && r.localDevice != device) {
          gpu.copyPeerAsync(dst, write ? r.localDevice : device, src, write ? device : r.localDevice, op.blockSize(0), stream);
        } else {
          gpu.copyDeviceToDeviceAsync(dst, src, op.blockSize(0), stream);
        }
        if (XgmiTrace.ON) XgmiTrace.part(XgmiTrace.PART_LAUNCH);
      } else {
        boolean sameSize = minBlock == maxBlock;
        long bytes = GatherKernel.tableBytes(n, sameSize);
        MemorySegment table = pool.hostTable(slot, bytes);
        // offsets straight from the op's arrays: sources first, then destinations, then sizes when they differ
        op.copyBlocks(write ? 0 : 1, table, 0);
        op.copyBlocks(write ? 1 : 0, table, 8L * n);
        if (!sameSize) op.copyBlocks(2, table, 16L * n);
        long kernelTable = pool.kernelTable(slot, bytes, stream);
        queued = true;
        if (XgmiTrace.ON) XgmiTrace.part(XgmiTrace.PART_TABLE);
        kernel.launch(stream, kernelTable, n, write ? localBase : remoteBase, write ? remoteBase : localBase,
            sameSize ? maxBlock : 0, maxBlock);
        listener.kernelLaunched();
      }
      pool.event(slot).record(stream);
      if (XgmiTrace.ON) {
        XgmiTrace.part(XgmiTrace.PART_RECORD);
        XgmiTrace.launched();
      }
    } catch (RuntimeException e) {
      releaseAfterFailure(pool, slot, stream, queued);
      op.transferFailed(TransportError.GPU_OP, "XGMI " + (n == 1 ? "copy" : "batch kernel") + " for " + r.describe() + " could not be issued: "
          + e.getMessage());
      return FAILED;
    }
    pool.ops[slot] = op;
    pool.regions[slot] = r;
    onGpu++;
    return ISSUED;
  }

  /**
   * The pool of {@code device} when it exists (null otherwise; never creates one): a caller that issued an op looks up
   * where it went ({@link DevicePool#slotOf}) under the worker's turn.
   */
  DevicePool existingPool(int device) {
    return device >= 0 && device < pools.length ? pools[device] : null;
  }

  /**
   * A caller that saw the event of {@code op}'s {@code slot} completed gives the slot back (under the worker's turn), as a
   * poll would: true when {@code op} (alone, not a fused group) was still on that slot; the caller then completes it.
   */
  boolean takeDone(DevicePool p, TransferOp op, int slot) {
    if (p.ops[slot] != op || p.groupOps[slot] != null) return false;
    for (int i = p.busyCount - 1; i >= 0; i--) {
      if (p.busy[i] != slot) continue;
      if (XgmiTrace.ON) p.traceDone(slot, null);
      p.releaseAt(i);
      onGpu--;
      return true;
    }
    return false;
  }

  /**
   * Puts {@code count} checked ops ({@code ops[k]} to region {@code regions[k]} at {@code bases[k]}, usable from
   * {@code device}; {@code blocks} blocks in all, between {@code minBlock} and {@code maxBlock} bytes; all from
   * {@code device} to the same remote device in the same direction) on the GPU as one kernel launch with one event:
   * the table holds absolute addresses and the kernel's bases are 0. {@code ready}: from a submitting thread, which
   * creates nothing ({@link #issueReady}). {@link #ISSUED}; {@link #NO_SLOT}, nothing done; or {@link #FAILED} after
   * failing every op with the same message.
   */
  int issueFused(TransferOp[] ops, RemoteRegion[] regions, long[] bases, int count, int blocks, long minBlock, long maxBlock, int device,
                 boolean ready) {
    boolean sameSize = minBlock == maxBlock;
    long bytes = GatherKernel.tableBytes(blocks, sameSize);
    DevicePool pool;
    int slot;
    GpuStream stream;
    if (ready) {
      pool = readyPool(device, true);
      slot = pool == null ? -1 : pool.acquireReady(bytes);
      if (slot < 0) return NO_SLOT;
      stream = pool.readyStream();
    } else {
      pool = pool(device);
      try {
        slot = pool.acquire();
      } catch (RuntimeException e) {
        for (int k = 0; k < count; k++)
          ops[k].transferFailed(TransportError.GPU_OP, "XGMI cannot create an event on device " + device + ": " + e.getMessage());
        return FAILED;
      }
      if (slot < 0) {
        if (XgmiTrace.ON) XgmiTrace.noFreeEvent();
        return NO_SLOT;
      }
      stream = null;
    }
    boolean queued = false;
    try {
      if (stream == null) stream = pool.stream();
      if (XgmiTrace.ON) XgmiTrace.part(XgmiTrace.PART_SLOT);
      MemorySegment table = pool.hostTable(slot, bytes);
      fusedTable.write(ops, bases, count, blocks, sameSize, table, bytes);
      if (XgmiTrace.ON) {
        XgmiTrace.part(XgmiTrace.PART_TABLE);
        pool.traceStart(slot, stream);
        XgmiTrace.part(XgmiTrace.PART_TRACE);
      }
      long kernelTable = pool.kernelTable(slot, bytes, stream);
      queued = true;
      if (XgmiTrace.ON) XgmiTrace.part(XgmiTrace.PART_TABLE);
      kernel.launch(stream, kernelTable, blocks, 0, 0, sameSize ? maxBlock : 0, maxBlock);
      listener.kernelLaunched();
      pool.event(slot).record(stream);
      if (XgmiTrace.ON) {
        XgmiTrace.part(XgmiTrace.PART_RECORD);
        XgmiTrace.launched();
      }
    } catch (RuntimeException e) {
      releaseAfterFailure(pool, slot, stream, queued);
      for (int k = 0; k < count; k++)
        ops[k].transferFailed(TransportError.GPU_OP, "XGMI batch kernel for " + regions[k].describe() + " (one launch with " + (count - 1)
            + " other batch entries) could not be issued: " + e.getMessage());
      return FAILED;
    }
    pool.ops[slot] = ops[0];
    pool.regions[slot] = regions[0];
    pool.groupOps[slot] = java.util.Arrays.copyOf(ops, count);
    pool.groupRegions[slot] = java.util.Arrays.copyOf(regions, count);
    onGpu++;
    if (XgmiTrace.ON) {
      if (ready) XgmiTrace.callerIssued();
      else XgmiTrace.workerIssued();
    }
    return ISSUED;
  }

  /**
   * Gives a slot back after a failed issue. When an upload or a launch that reads the slot's table had been queued
   * ({@code queued}: the failure came after, e.g. recording the event), the stream is waited for first, so that the
   * table is not handed to the next op while the kernel may still read it.
   */
  private void releaseAfterFailure(DevicePool pool, int slot, GpuStream stream, boolean queued) {
    if (queued && stream != null) {
      try {
        stream.synchronize();
      } catch (RuntimeException e) {
        // a stream in error runs nothing more: the table is no longer read
        log.debug("{}: waiting for a stream after a failed issue: {}", name, e.getMessage());
      }
    }
    pool.releaseSlot(slot);
  }

  private DevicePool pool(int device) {
    DevicePool p = pools[device];
    if (p == null) pools[device] = p = new DevicePool(gpu, device, settings.numStreams(), settings.numEvents(), settings.mappedTable());
    return p;
  }

  /** Hands every op whose event has completed (or failed) to {@code done}; returns how many. */
  int poll(Finished done) {
    return poll(done, null);
  }

  /** {@link #poll(Finished)}, leaving out the slots whose awaiting caller queries their event now ({@code callers}, may be null). */
  int poll(Finished done, XgmiCallerPoll callers) {
    if (onGpu == 0) return 0;
    int count = 0;
    long now = callers == null ? 0 : System.nanoTime();
    for (DevicePool p : pools) {
      if (p == null) continue;
      for (int i = p.busyCount - 1; i >= 0; i--) {
        int slot = p.busy[i];
        if (p.ops[slot] == null) continue;
        if (callers != null && callers.polling(p.device, slot, now, p.ops[slot])) continue;
        String error = null;
        try {
          if (!p.event(slot).isComplete()) continue;
        } catch (RuntimeException e) {
          error = e.getMessage();
        }
        leave(p, i, error, done);
        count++;
      }
    }
    return count;
  }

  /** Waits for every op on the GPU and hands each to {@code done} (closing). */
  void drain(Finished done) {
    for (DevicePool p : pools) {
      if (p == null) continue;
      for (int i = p.busyCount - 1; i >= 0; i--) {
        int slot = p.busy[i];
        if (p.ops[slot] == null) {
          p.releaseAt(i);
          continue;
        }
        String error = null;
        try {
          p.event(slot).synchronize();
        } catch (RuntimeException e) {
          error = e.getMessage();
        }
        leave(p, i, error, done);
      }
    }
  }

  private void leave(DevicePool p, int busyIndex, String error, Finished done) {
    int slot = p.busy[busyIndex];
    TransferOp op = p.ops[slot];
    RemoteRegion r = p.regions[slot];
    TransferOp[] group = p.groupOps[slot];
    RemoteRegion[] groupRegions = p.groupRegions[slot];
    if (XgmiTrace.ON) p.traceDone(slot, error);
    p.releaseAt(busyIndex);
    onGpu--;
    if (group == null) {
      done.finished(op, r, error);
    } else {
      for (int k = 0; k < group.length; k++) done.finished(group[k], groupRegions[k], error);
    }
  }

  /** Streams, events, block tables and kernel modules held now. */
  int openResources() {
    int n = kernel.loadedModules();
    for (DevicePool p : pools) if (p != null) n += p.openResources();
    return n;
  }

  /** Frees every pool (after waiting for its streams) and unloads the kernel; call after {@link #drain}. */
  @Override
  public void close() {
    for (int d = 0; d < pools.length; d++) {
      if (pools[d] == null) continue;
      try {
        pools[d].close();
      } catch (RuntimeException e) {
        log.warn("{}: closing the streams of device {}: {}", name, d, e.getMessage());
      }
      pools[d] = null;
    }
    try {
      kernel.close();
    } catch (RuntimeException e) {
      log.warn("{}: unloading the batch kernel: {}", name, e.getMessage());
    }
  }
}
