package org.mori4j.transport.tcp.fuzz;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.transport.tcp.fuzz.FuzzTarget.*;
import static org.mori4j.transport.tcp.fuzz.RawClient.*;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.mori4j.transport.LocalRegion;

/**
 * An authenticated peer that asks for what it does not own: READs and WRITEs of unknown ids, with wrong access
 * keys or base addresses, blocks at and past every edge of a region, offsets and sizes that overflow, batches
 * with one bad block, stripes outside their whole, lengths that disagree with the blocks, writes to a read-only
 * region. A model of the target's rules decides for each request whether it must be served or refused; the
 * target's answer must agree, a READ's data must be the region's bytes, and at the end the writable region
 * must equal a shadow copy to which only the accepted writes were applied, while every canary is unchanged.
 */
class TcpRequestFuzzTest {
  private static final int REQUESTS = 1500;
  private static final long MAX_WRITE = 256 * 1024;

  private FuzzTarget t;
  private byte[] shadow;

  @BeforeEach
  void start(TestInfo info) throws Exception {
    t = new FuzzTarget(TcpWireFuzzTest.SEED ^ info.getDisplayName().hashCode());
    shadow = t.open.segment().toArray(ValueLayout.JAVA_BYTE);
  }

  @AfterEach
  void stop() throws InterruptedException {
    if (t != null) t.close();
  }

  /** An offset or size near the interesting values for a region of {@code size} bytes. */
  private static long edgy(SplittableRandom rnd, long size) {
    return switch (rnd.nextInt(12)) {
      case 0 -> 0;
      case 1 -> size;
      case 2 -> size - 1 - rnd.nextInt(3);
      case 3 -> size + 1 + rnd.nextInt(3);
      case 4 -> -1 - rnd.nextInt(3);
      case 5 -> Long.MAX_VALUE - rnd.nextInt(3);
      case 6 -> Long.MIN_VALUE + rnd.nextInt(3);
      case 7 -> 1 + rnd.nextInt(64);
      default -> rnd.nextLong(size + 1);
    };
  }

  private static boolean contains(long size, long off, long len) {
    return off >= 0 && len > 0 && len <= size && off <= size - len;
  }

  @Test
  void requestsOutsideWhatThePeerOwnsAreRefusedAndMoveNoByte() throws Exception {
    SplittableRandom rnd = new SplittableRandom(t.seed);
    long token = t.token(FUZZER);
    LocalRegion[] regions = {t.open, t.sealed, t.readOnly};
    int served = 0, refused = 0;
    RawClient c = t.authenticated(token);
    try {
      for (int i = 0; i < REQUESTS; i++) {
        if (i == REQUESTS / 2) t.awaitGoodRounds(1, 10_000); // served during the attack
        String at = "request " + i + " (seed " + t.seed + ")";
        boolean write = rnd.nextBoolean();
        int which = rnd.nextInt(4); // 3: an id that is not registered
        LocalRegion r = which < 3 ? regions[which] : null;
        long memId = r != null ? r.id() : switch (rnd.nextInt(4)) {
          case 0 -> 0;
          case 1 -> -1;
          case 2 -> Long.MAX_VALUE;
          default -> 100 + rnd.nextInt(1000);
        };
        long size = r != null ? r.size() : OPEN_SIZE;
        long key = r != null ? r.accessKey() : rnd.nextLong();
        long base = r != null ? r.address() : t.open.address();
        boolean keyRight = true, baseRight = true;
        // sealed is only ever named wrongly; the others sometimes
        int wrong = r == t.sealed ? 1 + rnd.nextInt(3) : (rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(3) : 0);
        if ((wrong & 1) != 0) {
          key ^= 1L << rnd.nextInt(64);
          keyRight = false;
        }
        if ((wrong & 2) != 0) {
          base += rnd.nextBoolean() ? 1 : -(1L << rnd.nextInt(1, 40));
          baseRight = false;
        }
        boolean part = rnd.nextInt(8) == 0;
        int blocks = part ? 1 : (rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(6) : 1);
        long[] off = new long[part ? 2 : blocks];
        long[] len = new long[off.length];
        boolean inside = true;
        long sum = 0;
        for (int b = 0; b < blocks; b++) {
          if (rnd.nextInt(3) == 0) { // mostly well inside, so that accepted requests are common
            len[b] = edgy(rnd, size);
            off[b] = edgy(rnd, size);
          } else {
            len[b] = 1 + rnd.nextLong(Math.min(size, 32 * 1024));
            off[b] = rnd.nextInt(3) == 0 ? size - len[b] + rnd.nextInt(-1, 2) : rnd.nextLong(size - len[b] + 1);
          }
          inside &= contains(size, off[b], len[b]);
          sum += len[b];
        }
        if (part) {
          long wholeOff = rnd.nextInt(3) == 0 ? edgy(rnd, size) : Math.max(0, off[0] - rnd.nextLong(4096));
          long wholeLen = rnd.nextInt(3) == 0 ? edgy(rnd, size) : (off[0] - wholeOff) + len[0] + rnd.nextLong(4096);
          off[1] = wholeOff;
          len[1] = wholeLen;
          inside &= contains(size, wholeOff, wholeLen) && off[0] >= wholeOff && len[0] >= 0 && off[0] - wholeOff <= wholeLen - len[0];
        }
        long payload = rnd.nextInt(10) == 0 ? sum + rnd.nextInt(-2, 3) : sum;
        // a WRITE's payload follows its header, so only sizes this test can send are used for writes
        if (write && (payload < 0 || payload > MAX_WRITE)) write = false;
        if (!write && payload <= 0) payload = sum > 0 ? sum : 1;
        boolean accept = r != null && keyRight && baseRight && inside && payload == sum && !(write && r == t.readOnly);
        assertFalse(accept && r == t.sealed, "the model never grants sealed");
        byte[] data = write ? new byte[(int) payload] : null;
        if (data != null) for (int k = 0; k < data.length; k++) data[k] = (byte) rnd.nextInt(256);
        c.send(request(write ? T_WRITE : T_READ, part ? F_PART : (rnd.nextBoolean() ? F_NOTIFY : 0), i, memId, key, base,
            payload, off, len, data));
        Response resp = c.response();
        assertNotNull(resp, "the target closed the connection on a well-formed " + at);
        assertEquals(i, resp.seq(), "response out of order at " + at);
        assertEquals(write ? T_WRITE_DONE : T_READ_DATA, resp.type(), at);
        if (!accept) {
          assertNotEquals(0, resp.status(), "the target served a request the model refuses: " + at + " region "
              + (r == null ? "unknown id " + memId : r.id()) + " key ok " + keyRight + " base ok " + baseRight
              + " inside " + inside + " payload " + payload + " sum " + sum);
          assertTrue(resp.payload().length > 0, "a refusal without a reason at " + at);
          refused++;
          continue;
        }
        assertEquals(0, resp.status(), "the target refused a request the model allows: " + at + ": " + resp.text());
        served++;
        int blocksUsed = part ? 1 : blocks;
        if (write) {
          int p = 0;
          for (int b = 0; b < blocksUsed; b++) {
            System.arraycopy(data, p, shadow, (int) off[b], (int) len[b]);
            p += (int) len[b];
          }
        } else {
          byte[] expected = new byte[(int) sum];
          int p = 0;
          MemorySegment seg = r.segment();
          for (int b = 0; b < blocksUsed; b++) {
            MemorySegment.copy(seg, ValueLayout.JAVA_BYTE, off[b], expected, p, (int) len[b]);
            p += (int) len[b];
          }
          assertArrayEquals(expected, resp.payload(), "READ data differs at " + at);
        }
      }
    } finally {
      c.close();
    }
    System.out.printf("request fuzz: %d requests, %d served, %d refused%n", REQUESTS, served, refused);
    assertTrue(served > REQUESTS / 10 && refused > REQUESTS / 10, "the mix should hold both: " + served + " served, " + refused + " refused");
    long diff = t.open.segment().mismatch(MemorySegment.ofArray(shadow));
    assertEquals(-1, diff, "the writable region differs from the accepted writes at byte " + diff + " (seed " + t.seed + ")");
    t.assertHealthy("request fuzz");
  }
}
