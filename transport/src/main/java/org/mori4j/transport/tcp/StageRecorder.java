package org.mori4j.transport.tcp;

/**
 * One {@link GpuStager}'s {@link GpuStageTrace} record of the transfer in progress: the stager tells it what happened
 * (copies issued and seen done, socket calls, spins) and it keeps the stamps and counts, handing the record to the
 * trace at the end. Exists only while the trace is on (the stager holds null otherwise), so the data path pays one
 * null check per event. Loop thread only, like its stager.
 */
final class StageRecorder {
  private final long[] r = new long[GpuStageTrace.FIELDS];
  private final long[] issuedAt;
  private final boolean[] waited;
  /** Bytes the last next()/fill() offered, to count socket calls that moved less (socket full or empty). */
  private long offered;

  StageRecorder(int slots) {
    issuedAt = new long[slots];
    waited = new boolean[slots];
  }

  void begin(boolean out, long total) {
    java.util.Arrays.fill(r, 0);
    r[GpuStageTrace.DIR] = out ? 1 : 0;
    r[GpuStageTrace.TOTAL] = total;
    r[GpuStageTrace.T0] = System.nanoTime();
  }

  /** The socket was offered {@code bytes} more for its next call. */
  void offered(long bytes) {
    if (r[GpuStageTrace.T_OFFER] == 0 && bytes > 0) r[GpuStageTrace.T_OFFER] = System.nanoTime();
    offered += bytes;
  }

  /** A socket call moved {@code n} bytes; {@code last}: they were the payload's last. */
  void socketCall(long n, boolean last) {
    r[GpuStageTrace.OPS]++;
    if (n < offered) r[GpuStageTrace.SHORT]++;
    offered = 0;
    if (n > 0) {
      long now = System.nanoTime();
      if (r[GpuStageTrace.T_FIRST] == 0) r[GpuStageTrace.T_FIRST] = now;
      if (last) r[GpuStageTrace.T_LAST] = now;
    }
  }

  /** Copies into slot {@code s} were issued; the calls took since {@code startNanos}. */
  void issued(int s, long startNanos) {
    long now = System.nanoTime();
    r[GpuStageTrace.API] += now - startNanos;
    r[GpuStageTrace.PIECES]++;
    issuedAt[s] = now;
    waited[s] = false;
  }

  /** Slot {@code s}'s copies were found unfinished (the loop waits for them). */
  void waited(int s) {
    waited[s] = true;
  }

  /** Slot {@code s}'s copies were just seen done. */
  void seen(int s) {
    long lat = System.nanoTime() - issuedAt[s];
    if (r[GpuStageTrace.COPIES] == 0) r[GpuStageTrace.FIRST_COPY] = lat;
    r[GpuStageTrace.COPIES]++;
    r[GpuStageTrace.COPY_SUM] += lat;
    r[GpuStageTrace.COPY_MAX] = Math.max(r[GpuStageTrace.COPY_MAX], lat);
    if (waited[s]) r[GpuStageTrace.WAITS]++;
  }

  /** A spin on an unfinished copy lasted {@code nanos}; {@code done}: it saw the copy finish. */
  void spun(long nanos, boolean done) {
    r[GpuStageTrace.SPIN] += nanos;
    if (done) r[GpuStageTrace.SPUN]++;
  }

  /** The transfer ended: the record goes to the trace. */
  void end() {
    r[GpuStageTrace.T_END] = System.nanoTime();
    GpuStageTrace.record(r);
  }
}
