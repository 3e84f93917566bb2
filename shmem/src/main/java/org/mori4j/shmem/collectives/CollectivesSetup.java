package org.mori4j.shmem.collectives;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Locale;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.shmem.GpuStates;
import org.mori4j.shmem.Shmem;
import org.mori4j.shmem.ShmemException;
import org.mori4j.shmem.ShmemKernels;
import org.mori4j.shmem.collectives.ShmemCollectives.Settings;

/**
 * The collective set-up behind {@link ShmemCollectives#create}: the signal words and kernel B's scratch in the
 * symmetric heap, the PEs' agreement on the grid size and on the settings (a mismatch fails every PE alike and gives
 * the memory back together), and the kernels compiled and loaded on every PE before any of them may spin in a barrier.
 */
final class CollectivesSetup {
  private CollectivesSetup() {}

  static ShmemCollectives create(Shmem shmem, Settings settings) {
    int n = shmem.nPes(), me = shmem.myPe();
    GpuRuntime gpu = shmem.gpu();
    // (before any collective step: paths are symmetric, so every PE of such a group refuses alike)
    if (n > 1 && !ShmemCollectives.allDirect(shmem) && settings.putScratchBytes() == 0)
      throw new IllegalArgumentException("ShmemCollectives.create: PE " + me + " has no direct path to some peer (another host, or MORI_DISABLE_P2P), "
          + "so all-reduce must run kernel B (PUT_SIGNAL) over the GPU-initiated endpoints, and Settings.putScratchBytes is 0");
    long controlBytes = ShmemCollectives.SIGNAL_BYTES + (long) GpuStates.MAX_PES * ShmemCollectives.AGREEMENT_LONGS * 8;
    long control = shmem.malloc(controlBytes);
    long scratch = 0;
    int blocks = ShmemCollectives.MAX_BLOCKS;
    String mismatch = null;
    // A failure before the agreement may be this PE's alone (no direct path, a GPU error) while the others wait
    // in a collective call: nothing collective is attempted then, and the group's timeout ends their wait.
    if (n > 1 && settings.putScratchBytes() > 0) {
      try {
        scratch = shmem.malloc(Math.multiplyExact(settings.putScratchBytes(), (long) (n - 1)));
      } catch (ShmemException e) {
        shmem.free(control); // a full heap fails every PE's malloc alike, so all free together
        throw e;
      }
    }
    gpu.fill(control, (byte) 0, controlBytes);
    int local = settings.maxBlocks() > 0 ? settings.maxBlocks() : localBlockLimit(shmem);
    long[] mine = {local, settings.putScratchBytes(), settings.putSignalMaxBytes(), n};
    long[][] all = ShmemCollectives.allDirect(shmem) ? agree(shmem, control + ShmemCollectives.SIGNAL_BYTES, mine) : shmem.exchangeLongs(mine);
    for (int p = 0; p < n; p++) {
      for (int k = 1; k < ShmemCollectives.AGREEMENT_LONGS && mismatch == null; k++)
        if (all[p][k] != mine[k])
          mismatch = String.format(Locale.ROOT, "ShmemCollectives.create: PE %d has settings (scratch %d, put-signal max %d, nPes %d), PE %d has "
              + "(%d, %d, %d): every PE must pass the same Settings", p, all[p][1], all[p][2], all[p][3], me, mine[1], mine[2], mine[3]);
      blocks = (int) Math.min(blocks, all[p][0]);
    }
    if (mismatch != null) {
      // every PE read the same rows, so every PE is here: give the memory back together
      if (scratch != 0) shmem.free(scratch);
      shmem.free(control);
      throw new ShmemException(mismatch);
    }
    GpuModule module = ShmemKernels.compile(shmem, ShmemCollectives.source(), "collectives.cu");
    try {
      ShmemCollectives.preload(shmem, module, ShmemCollectives.KERNELS);
      // no PE launches a kernel that spins in a barrier before every PE has loaded its kernels
      shmem.barrierAll();
    } catch (RuntimeException e) {
      module.close();
      throw e;
    }
    return new ShmemCollectives(shmem, settings, Math.max(1, blocks), control, scratch, module);
  }

  /**
   * The SM count over the number of PEs whose heap lives on this PE's GPU (this one included): a kernel's blocks
   * spin in barriers until the other PEs' kernels arrive, so the kernels of PEs sharing a GPU must all fit at
   * once (one 512-thread block per SM, as the launch bound's registers allow).
   */
  static int localBlockLimit(Shmem shmem) {
    GpuRuntime gpu = shmem.gpu();
    int sharing = 0;
    for (int p = 0; p < shmem.nPes(); p++) if (shmem.sharesGpuWith(p)) sharing++;
    return Math.clamp(gpu.multiprocessorCount(shmem.device()) / Math.max(1, sharing), 1, ShmemCollectives.MAX_BLOCKS);
  }

  /**
   * Every PE writes {@code mine} into its row of every PE's agreement area (once every PE has zeroed its area),
   * then all meet in a barrier and read the rows. Synchronous reads back after the fill and the writes make sure they have landed before the barrier
   * (a copy from pageable memory may return before its DMA is done).
   */
  private static long[][] agree(Shmem shmem, long area, long[] mine) {
    GpuRuntime gpu = shmem.gpu();
    int n = shmem.nPes(), me = shmem.myPe();
    long rowBytes = ShmemCollectives.AGREEMENT_LONGS * 8L;
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment row = arena.allocate(rowBytes, 8);
      MemorySegment check = arena.allocate(rowBytes, 8);
      gpu.copyDeviceToHost(check, area, rowBytes); // the fill above is done
      shmem.barrierAll(); // and so is every other PE's: no PE writes its row into an area that is yet to be zeroed
      for (int k = 0; k < ShmemCollectives.AGREEMENT_LONGS; k++) row.setAtIndex(JAVA_LONG, k, mine[k]);
      for (int p = 0; p < n; p++) {
        long at = shmem.ptrP2p(area, me, p) + me * rowBytes;
        gpu.copyHostToDevice(at, row, rowBytes);
        gpu.copyDeviceToHost(check, at, rowBytes);
      }
      shmem.barrierAll();
      MemorySegment rows = arena.allocate(n * rowBytes, 8);
      gpu.copyDeviceToHost(rows, area, n * rowBytes);
      shmem.barrierAll(); // nobody returns (and launches kernels) before all have read
      long[][] all = new long[n][ShmemCollectives.AGREEMENT_LONGS];
      for (int p = 0; p < n; p++) for (int k = 0; k < ShmemCollectives.AGREEMENT_LONGS; k++) all[p][k] = rows.getAtIndex(JAVA_LONG, p * ShmemCollectives.AGREEMENT_LONGS + k);
      return all;
    }
  }
}
