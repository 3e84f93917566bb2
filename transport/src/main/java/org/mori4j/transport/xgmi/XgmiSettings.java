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
 */
public record XgmiSettings(int numStreams, int numEvents, int maxBatchBlocks, long pollNapNanos) {
  /** A batch table of 1M blocks is 24 MiB of pinned memory; TCP's batch limit is the same. */
  public static final int DEFAULT_MAX_BATCH_BLOCKS = 1 << 20;
  /** Poll without napping: a 4 KiB copy takes a few microseconds, shorter than any sleep. */
  public static final long DEFAULT_POLL_NAP_NANOS = 0L;

  public XgmiSettings {
    if (numStreams < 1) throw new IllegalArgumentException("numStreams must be >= 1: " + numStreams);
    if (numEvents < 1) throw new IllegalArgumentException("numEvents must be >= 1: " + numEvents);
    if (maxBatchBlocks < 1) throw new IllegalArgumentException("maxBatchBlocks must be >= 1: " + maxBatchBlocks);
    if (pollNapNanos < 0) throw new IllegalArgumentException("pollNapNanos must not be negative: " + pollNapNanos);
  }

  public static XgmiSettings of(int numStreams, int numEvents) {
    return new XgmiSettings(numStreams, numEvents, DEFAULT_MAX_BATCH_BLOCKS, DEFAULT_POLL_NAP_NANOS);
  }
}
