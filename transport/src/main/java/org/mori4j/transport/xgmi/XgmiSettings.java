package org.mori4j.transport.xgmi;

/**
 * Settings of one XGMI backend.
 *
 * @param numStreams     streams per device that copies and batch kernels are spread over (MORI's default 64)
 * @param numEvents      completion events per device, which is also how many transfers per device are on the
 *                       GPU at once; more wait in the backend's queue (MORI's default 64)
 * @param maxBatchBlocks most blocks in one batch (one kernel launch, one block table)
 * @param pollNapNanos   0: while transfers are on the GPU the worker keeps querying their events, yielding the
 *                       core between queries (lowest latency; one core busy while transfers run); more: it naps
 *                       that long between queries instead (Linux sleeps at least ~50 us)
 * @param mappedTable    true: a batch kernel reads its block table in place from the slot's page-locked buffer (mapped
 *                       into the device's address space, read over PCIe), so the call that issues a batch makes no
 *                       upload copy; false, or a runtime that cannot map it: the table is copied into device memory on
 *                       the kernel's stream first (one {@code cuMemcpyHtoDAsync}, several microseconds of the call)
 * @param fuseBatches    true: the batch entries of one batch-of-batches call that this backend carries from the same
 *                       local device to the same remote device in the same direction are issued as one kernel launch
 *                       (one per {@code maxBatchBlocks} blocks), with one status per entry as before; false: one launch
 *                       per entry ({@link org.mori4j.transport.TransferBackend#submitGroup})
 * @param callerPollNanos {@link #CALLER_OFF}: a single-block op always goes through the worker's queue (the worker issues
 *                       its copy and polls its event); 0 or more: when the worker is idle and set up for it, the
 *                       submitting thread issues the copy itself ({@link XgmiBackend#issueFromCaller}), and a thread that
 *                       awaits that op queries its event itself for up to this long before the engine's own wait
 *                       ({@link XgmiCallerPoll}); the worker polls it as well, so an op nobody awaits still completes
 */
public record XgmiSettings(int numStreams, int numEvents, int maxBatchBlocks, long pollNapNanos, boolean mappedTable,
                           boolean fuseBatches, long callerPollNanos) {
  /** A batch table of 1M blocks is 24 MiB of pinned memory; TCP's batch limit is the same. */
  public static final int DEFAULT_MAX_BATCH_BLOCKS = 1 << 20;
  /** Poll without napping: a 4 KiB copy takes a few microseconds, shorter than any sleep. */
  public static final long DEFAULT_POLL_NAP_NANOS = 0L;
  /** The block table is read in place by the kernel where the runtime can map it. */
  public static final boolean DEFAULT_MAPPED_TABLE = true;
  /**
   * Off: on 1x H100 one launch for a whole Llama-3-70B migration (table read in place) was slower than one launch per
   * entry (bench/results/20261125T0124Z-f0a8217-kv-fused-1xh100).
   */
  public static final boolean DEFAULT_FUSE_BATCHES = false;
  /** {@link #callerPollNanos} for "single-block ops go through the worker". */
  public static final long CALLER_OFF = -1;

  public XgmiSettings {
    if (numStreams < 1) throw new IllegalArgumentException("numStreams must be >= 1: " + numStreams);
    if (numEvents < 1) throw new IllegalArgumentException("numEvents must be >= 1: " + numEvents);
    if (maxBatchBlocks < 1) throw new IllegalArgumentException("maxBatchBlocks must be >= 1: " + maxBatchBlocks);
    if (pollNapNanos < 0) throw new IllegalArgumentException("pollNapNanos must not be negative: " + pollNapNanos);
    if (callerPollNanos < CALLER_OFF) throw new IllegalArgumentException("callerPollNanos must be CALLER_OFF (-1) or >= 0: " + callerPollNanos);
  }

  /** Single-block ops through the worker only ({@link #CALLER_OFF}). */
  public XgmiSettings(int numStreams, int numEvents, int maxBatchBlocks, long pollNapNanos, boolean mappedTable, boolean fuseBatches) {
    this(numStreams, numEvents, maxBatchBlocks, pollNapNanos, mappedTable, fuseBatches, CALLER_OFF);
  }

  /** Whether the submitting thread may issue a single-block op itself ({@link #callerPollNanos} not {@link #CALLER_OFF}). */
  public boolean callerIssuesSingles() {
    return callerPollNanos != CALLER_OFF;
  }

  /** With the default {@link #fuseBatches}. */
  public XgmiSettings(int numStreams, int numEvents, int maxBatchBlocks, long pollNapNanos, boolean mappedTable) {
    this(numStreams, numEvents, maxBatchBlocks, pollNapNanos, mappedTable, DEFAULT_FUSE_BATCHES);
  }

  /** With the default {@link #mappedTable}. */
  public XgmiSettings(int numStreams, int numEvents, int maxBatchBlocks, long pollNapNanos) {
    this(numStreams, numEvents, maxBatchBlocks, pollNapNanos, DEFAULT_MAPPED_TABLE);
  }

  public static XgmiSettings of(int numStreams, int numEvents) {
    return new XgmiSettings(numStreams, numEvents, DEFAULT_MAX_BATCH_BLOCKS, DEFAULT_POLL_NAP_NANOS);
  }
}
