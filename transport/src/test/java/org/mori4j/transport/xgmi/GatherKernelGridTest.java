package org.mori4j.transport.xgmi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.Dim3;

/** The batch kernel's launch geometry: a group per 4 KiB work item, up to the CTAs the device holds at once. */
class GatherKernelGridTest {
  @Test
  void theGridGivesEachWorkItemAGroupUpToWhatTheDeviceHolds() {
    int h100 = 132 * 4; // 132 SMs x 4 CTAs of this kernel resident (the occupancy calculator's answer on an H100)
    // 4,096 x 4 KiB: one item per block, 8 groups per CTA
    assertEquals(new Dim3(512, 1, 1), GatherKernel.grid(h100, 4096, 4096));
    // 1,024 x 16 KiB: 4,096 items
    assertEquals(new Dim3(512, 1, 1), GatherKernel.grid(h100, 1024, 16384));
    // 256 x 32 KiB (one KV layer tensor): 2,048 items
    assertEquals(new Dim3(256, 1, 1), GatherKernel.grid(h100, 256, 32768));
    // 40,960 x 32 KiB and one 256 MiB block: the resident grid, groups stride over the items
    assertEquals(new Dim3(h100, 1, 1), GatherKernel.grid(h100, 40960, 32768));
    assertEquals(new Dim3(h100, 1, 1), GatherKernel.grid(h100, 1, 256L << 20));
    // a block not a multiple of a piece is one more item; tiny batches still launch one CTA
    assertEquals(3, GatherKernel.pieces(2 * GatherKernel.PIECE_BYTES + 1));
    assertEquals(1, GatherKernel.pieces(16));
    assertEquals(new Dim3(1, 1, 1), GatherKernel.grid(h100, 1, 16));
    assertEquals(new Dim3(1, 1, 1), GatherKernel.grid(0, 4096, 4096));
  }
}
