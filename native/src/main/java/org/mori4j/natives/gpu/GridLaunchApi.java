package org.mori4j.natives.gpu;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * Cooperative launches and occupancy, written once for CUDA and HIP: the two APIs differ only in their names
 * ({@code cuLaunchCooperativeKernel} / {@code hipModuleLaunchCooperativeKernel}, and
 * {@code cuOccupancyMaxActiveBlocksPerMultiprocessor} / {@code hipModuleOccupancyMaxActiveBlocksPerMultiprocessor}
 * take the same arguments in the same order), so each binding class makes one of these over its own
 * {@link FunctionTable} (where the ABI tests see the symbols) with its own {@link StatusCalls}.
 *
 * <p>Why they matter: a kernel whose blocks wait for each other (a signal/wait exchange between the blocks of
 * one grid, a grid-wide barrier) deadlocks when the grid is larger than what the GPU holds at once; occupancy
 * says how many blocks fit per multiprocessor, and a cooperative launch is refused by the driver instead of
 * deadlocking when the grid does not fit.
 */
public final class GridLaunchApi {
  private final String cooperativeName;
  private final String occupancyName;
  private final MethodHandle cooperative;
  private final MethodHandle occupancy;
  private final StatusCalls calls;

  /**
   * Binds {@code cooperativeApi} and {@code occupancyApi} (under the symbols their headers map them to) in
   * {@code table}; both use the driver-handle types of their API ({@code CUfunction}, {@code CUstream} are
   * pointers).
   */
  public GridLaunchApi(FunctionTable table, String cooperativeApi, String cooperativeSymbol, String occupancyApi, String occupancySymbol,
                       StatusCalls calls) {
    this.cooperativeName = cooperativeApi;
    this.occupancyName = occupancyApi;
    this.calls = calls;
    this.cooperative = table.bind(cooperativeApi, cooperativeSymbol, FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT,
        JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
    this.occupancy = table.bind(occupancyApi, occupancySymbol, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG));
  }

  /**
   * Launches {@code function} so that all its blocks run at once (they may wait for each other); the driver
   * refuses a grid larger than the GPU holds. The caller has made the function's context current.
   */
  public void launchCooperative(MemorySegment function, Dim3 grid, Dim3 block, int sharedMemBytes, MemorySegment stream, MemorySegment kernelParams) {
    int rc;
    try {
      rc = (int) cooperative.invokeExact(function, grid.x(), grid.y(), grid.z(), block.x(), block.y(), block.z(), sharedMemBytes, stream, kernelParams);
    } catch (Throwable t) {
      throw FunctionTable.rethrow(t);
    }
    calls.check(rc, cooperativeName);
  }

  /** Blocks of {@code function} that fit on one multiprocessor at {@code blockThreads} threads and {@code dynamicSharedBytes}. */
  public int maxActiveBlocksPerMultiprocessor(MemorySegment function, int blockThreads, long dynamicSharedBytes) {
    if (blockThreads < 1) throw new IllegalArgumentException("block size " + blockThreads + " must be positive");
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_INT);
      int rc;
      try {
        rc = (int) occupancy.invokeExact(out, function, blockThreads, dynamicSharedBytes);
      } catch (Throwable t) {
        throw FunctionTable.rethrow(t);
      }
      calls.check(rc, occupancyName);
      return out.get(JAVA_INT, 0);
    }
  }
}
