package org.mori4j.natives.cuda;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.KernelArgs;

/**
 * {@link LaunchScratch}: one holder at a time (a launch that finds the spare taken gets null and uses an arena of
 * its own), arguments larger than the spare never take it, and the spare is the same memory again once given back.
 */
class LaunchScratchTest {
  @Test
  void oneHolderAtATimeAndOnlyForArgumentsThatFit() {
    KernelArgs small = KernelArgs.of().pointer(1).i32(2);
    LaunchScratch s = LaunchScratch.take(small);
    assertNotNull(s);
    try {
      assertNull(LaunchScratch.take(small), "taken: a second launch must not share it");
    } finally {
      s.giveBack();
    }
    assertNull(LaunchScratch.take(KernelArgs.of().struct(new byte[LaunchScratch.VALUE_BYTES + 1], 8)), "too many bytes");
    KernelArgs many = KernelArgs.of();
    for (int i = 0; i <= LaunchScratch.MAX_PARAMS; i++) many.i32(i);
    assertNull(LaunchScratch.take(many), "too many parameters");
    LaunchScratch again = LaunchScratch.take(small);
    try {
      assertSame(s, again);
      assertNotNull(again.write(small));
    } finally {
      again.giveBack();
    }
  }
}
