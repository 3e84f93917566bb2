package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Bursts of small requests issued without waiting, over one connection with 64 KiB socket buffers, so that
 * writes end part-way (smaller buffers than loopback's 64 KiB segment stall the kernel's window updates): the TCP backend packs queued small requests into one write and the target answers
 * them together, so these check that every transfer still lands exactly once, in its own place, and gets
 * its own answer (refusals with their messages in between), whatever the write boundaries.
 */
class SmallRequestBurstTest {
  private static final int SLOT = 20 * 1024;
  private static final int OPS = 1500;

  private static TcpBackendConfig tinySockets() {
    TcpBackendConfig d = TcpBackendConfig.defaults();
    return new TcpBackendConfig(1, 1, d.stripeThreshold(), 64 * 1024, d.peerTimeout(), d.connectTimeout(), d.enableNotification());
  }

  /** Mostly inline sizes (up to 16 KiB, some of a byte or two), every 16th one past the inline limit. */
  private static long size(SplittableRandom r, int i) {
    if (i % 16 == 15) return 16 * 1024 + 1 + r.nextInt(SLOT - 16 * 1024 - 1);
    if (i % 5 == 0) return 1 + r.nextInt(3);
    return 1 + r.nextInt(16 * 1024);
  }

  @Test
  void aBurstOfSmallWritesLandsEachInItsPlace() {
    try (EnginePair p = new EnginePair((long) SLOT * OPS, tinySockets())) {
      Bytes.randomize(p.localBuf, 1);
      p.remoteBuf.fill((byte) 0);
      SplittableRandom r = new SplittableRandom(2);
      long[] sizes = new long[OPS];
      List<TransferStatus> st = new ArrayList<>(OPS);
      for (int i = 0; i < OPS; i++) {
        sizes[i] = size(r, i);
        // local and remote slots differ, so a block written from or to the wrong place shows
        long lo = (long) ((i * 7) % OPS) * SLOT;
        st.add(p.initiator.write(p.local, lo, p.remote, (long) i * SLOT, sizes[i], p.initiator.allocateTransferUid()));
      }
      assertEquals(StatusCode.SUCCESS, p.initiator.waitAll(st, Duration.ofSeconds(60)), () -> firstFailure(st));
      for (int i = 0; i < OPS; i++) {
        long lo = (long) ((i * 7) % OPS) * SLOT, ro = (long) i * SLOT;
        Bytes.assertRangeEquals(p.localBuf, lo, p.remoteBuf, ro, sizes[i], "write " + i + " (" + sizes[i] + " bytes)");
        // nothing past the block: the next request's bytes did not spill into this slot
        if (sizes[i] < SLOT) assertEquals(0, p.remoteBuf.get(java.lang.foreign.ValueLayout.JAVA_BYTE, ro + sizes[i]), "write " + i + " overran");
      }
    }
  }

  @Test
  void readsWritesAndRefusalsInOneBurstEachGetTheirOwnAnswer() {
    int n = OPS / 3;
    try (EnginePair p = new EnginePair((long) SLOT * 3 * n, tinySockets())) {
      Bytes.randomize(p.localBuf, 3);
      Bytes.randomize(p.remoteBuf, 4);
      byte[] before = p.remoteBuf.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
      // the same region under a key its owner never issued: the target refuses it after reading its payload
      MemoryDesc forged = new MemoryDesc(p.remote.engineKey(), p.remote.id(), p.remote.deviceId(), p.remote.address(),
          p.remote.size(), p.remote.location(), p.remote.accessKey() ^ 0x5a5a, p.remote.backendData(), p.remote.ownerIncarnation());
      SplittableRandom r = new SplittableRandom(5);
      List<TransferStatus> st = new ArrayList<>();
      List<long[]> what = new ArrayList<>(); // kind (0 read, 1 write, 2 forged write), local offset, remote offset, size
      for (int i = 0; i < 3 * n; i++) {
        int kind = i % 7 == 3 ? 2 : i % 2;
        long sz = size(r, i), lo = (long) i * SLOT, ro = (long) ((i * 11) % (3 * n)) * SLOT;
        long uid = p.initiator.allocateTransferUid();
        st.add(switch (kind) {
          case 0 -> p.initiator.read(p.local, lo, p.remote, ro, sz, uid);
          case 1 -> p.initiator.write(p.local, lo, p.remote, ro, sz, uid);
          default -> p.initiator.write(p.local, lo, forged, ro, sz, uid);
        });
        what.add(new long[] {kind, lo, ro, sz});
      }
      p.initiator.waitAll(st, Duration.ofSeconds(60));
      for (int i = 0; i < st.size(); i++) {
        long[] w = what.get(i);
        TransferStatus s = st.get(i);
        String name = (w[0] == 0 ? "read " : w[0] == 1 ? "write " : "forged write ") + i + " (" + w[3] + " bytes)";
        if (w[0] == 2) {
          assertEquals(StatusCode.ERR_NOT_FOUND, s.code(), name + ": " + s);
          assertTrue(s.message().contains("memory id " + p.remote.id()), name + ": " + s.message());
          continue;
        }
        assertTrue(s.succeeded(), name + ": " + s);
        // reads and writes touch disjoint remote slots (i * 11 mod 3n is a permutation), so each is checkable alone
        if (w[0] == 0) {
          Bytes.assertRangeEquals(java.lang.foreign.MemorySegment.ofArray(before), w[2], p.localBuf, w[1], w[3], name);
        } else {
          Bytes.assertRangeEquals(p.localBuf, w[1], p.remoteBuf, w[2], w[3], name);
        }
      }
      // refused writes left their slots as they were
      for (int i = 0; i < st.size(); i++) {
        long[] w = what.get(i);
        if (w[0] == 2) Bytes.assertRangeEquals(java.lang.foreign.MemorySegment.ofArray(before), w[2], p.remoteBuf, w[2], SLOT, "slot of forged write " + i);
      }
    }
  }

  private static String firstFailure(List<TransferStatus> st) {
    for (int i = 0; i < st.size(); i++) if (!st.get(i).succeeded()) return "transfer " + i + ": " + st.get(i);
    return "all succeeded";
  }
}
