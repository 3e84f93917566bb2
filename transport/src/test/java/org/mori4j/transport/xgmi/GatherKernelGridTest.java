package org.mori4j.transport.xgmi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The batch kernel's launch geometry: a group of threads per block, big blocks cut into pieces while the GPU has room. */
class GatherKernelGridTest {
  @Test
  void theGridGivesEachBlockAGroupAndSplitsBigBlocks() {
    // 132 SMs (H100): 4,096 x 4 KiB is 512 CTAs of 8 groups, one step each
    assertEquals(new org.mori4j.natives.gpu.Dim3(512, 1, 1), GatherKernel.grid(132, 4096, 4096));
    // 1,024 x 16 KiB: 128 CTAs would leave SMs idle; y = 4 pieces of 4 KiB
    assertEquals(new org.mori4j.natives.gpu.Dim3(128, 4, 1), GatherKernel.grid(132, 1024, 16384));
    // 8 x 4 MiB: one CTA's groups take a block each, y cuts each block into its 1,024 pieces of 4 KiB
    assertEquals(new org.mori4j.natives.gpu.Dim3(1, 1024, 1), GatherKernel.grid(132, 8, 4L << 20));
    // very many blocks: x stops at the CTAs the device holds, groups stride
    assertEquals(new org.mori4j.natives.gpu.Dim3(2112, 1, 1), GatherKernel.grid(132, 1 << 20, 4096));
  }
}
