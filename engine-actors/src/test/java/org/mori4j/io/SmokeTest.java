package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

class SmokeTest {
  @Test
  void writeAndReadBackOverTcp() {
    try (EnginePair p = new EnginePair(64L << 20)) {
      EnginePair.fill(p.localBuf, 1);
      for (long size : new long[] {1, 4096, 1 << 20, 64L << 20}) {
        TransferStatus s = p.initiator.write(p.local, 0, p.remote, 0, size, p.initiator.allocateTransferUid()).await();
        assertTrue(s.succeeded(), s.toString());
        assertEquals(-1, EnginePair.mismatch(p.localBuf, 0, p.remoteBuf, 0, size), "size " + size);
      }
      EnginePair.fill(p.remoteBuf, 2);
      TransferStatus r = p.initiator.read(p.local, 0, p.remote, 0, 64L << 20, 7).await();
      assertTrue(r.succeeded(), r.toString());
      assertEquals(-1, EnginePair.mismatch(p.localBuf, 0, p.remoteBuf, 0, 64L << 20));
    }
  }
}
