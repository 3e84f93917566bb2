package org.mori4j.transport;

/**
 * How a backend that stages GPU memory through host buffers (the TCP backend's {@code GpuStager}) cuts a transfer
 * and waits for its device copies; the engine reads both from its configuration ({@code mori4j.tcp.gpu-staging-pieces},
 * {@code mori4j.tcp.gpu-copy-spin}) and hands them over with its {@link DeviceStaging}.
 *
 * @param middlePieces  the middle of a transfer (between the small pieces that start and end it) is cut into about this
 *                      many pieces, each at most one staging buffer and at least 64 KiB: fewer pieces mean fewer copy
 *                      calls and events on the I/O thread, more mean more overlap of device copies with socket I/O
 * @param copySpinNanos how long the I/O thread keeps asking an unfinished staging copy before it goes back to its loop
 *                      (which then asks again every round): a copy that finishes within it is seen at once instead of
 *                      one loop round later; 0 never spins
 * @param registeredMemory staging buffers are ordinary host memory page-locked with the runtime's host registration
 *                      ({@code cuMemHostRegister}) instead of the runtime's page-locked allocation
 *                      ({@code cuMemAllocHost}): {@code mori4j.tcp.gpu-staging-memory}
 * @param gatherPieces  the sending side writes the current piece and every following piece whose device copy is done
 *                      in one gathering socket call, instead of one call per piece: {@code mori4j.tcp.gpu-staging-gather}
 * @param scatterPieces the receiving side reads into the current piece and the following pieces whose buffers are free
 *                      (their previous copy onto the device done) in one scattering socket call, instead of one call
 *                      per piece: {@code mori4j.tcp.gpu-staging-scatter}
 * @param earlyRefill   with {@code gatherPieces}, while pieces still wait for a staging buffer, one gathering write
 *                      carries at most half the buffers' pieces, so that the first buffers come free (and the device
 *                      copies of the waiting pieces start) while the socket takes the rest, instead of after the whole
 *                      gathered write: {@code mori4j.tcp.gpu-staging-early-refill}
 */
public record StagingTuning(int middlePieces, long copySpinNanos, boolean registeredMemory, boolean gatherPieces, boolean scatterPieces,
                            boolean earlyRefill) {
  /** What the stager did before these were settings: quarters in the middle, no spinning, the runtime's pinned allocation, one socket call per piece each way. */
  public static final StagingTuning DEFAULT = new StagingTuning(4, 0);

  /** Staging buffers from the runtime's pinned allocation. */
  public StagingTuning(int middlePieces, long copySpinNanos) {
    this(middlePieces, copySpinNanos, false, false);
  }

  /** One socket call per piece. */
  public StagingTuning(int middlePieces, long copySpinNanos, boolean registeredMemory) {
    this(middlePieces, copySpinNanos, registeredMemory, false);
  }

  /** One socket read per piece. */
  public StagingTuning(int middlePieces, long copySpinNanos, boolean registeredMemory, boolean gatherPieces) {
    this(middlePieces, copySpinNanos, registeredMemory, gatherPieces, false);
  }

  /** Gathering writes carry every ready piece. */
  public StagingTuning(int middlePieces, long copySpinNanos, boolean registeredMemory, boolean gatherPieces, boolean scatterPieces) {
    this(middlePieces, copySpinNanos, registeredMemory, gatherPieces, scatterPieces, false);
  }

  public StagingTuning {
    if (middlePieces < 1 || middlePieces > 64) throw new IllegalArgumentException("middlePieces must be in 1..64: " + middlePieces);
    if (copySpinNanos < 0 || copySpinNanos > 10_000_000L)
      throw new IllegalArgumentException("copySpinNanos must be in 0..10 ms: " + copySpinNanos + " ns");
  }
}
