package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.SplittableRandom;

/** Byte-level helpers for the transfer tests: fill, snapshot, compare, and status checks. */
final class Bytes {
  private Bytes() {}

  /** Fills {@code [off, off+len)} of {@code s} with bytes derived from {@code seed}. */
  static void randomize(MemorySegment s, long off, long len, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    long i = 0;
    for (; i + 8 <= len; i += 8) s.set(ValueLayout.JAVA_LONG_UNALIGNED, off + i, r.nextLong());
    for (; i < len; i++) s.set(ValueLayout.JAVA_BYTE, off + i, (byte) r.nextInt());
  }

  static void randomize(MemorySegment s, long seed) {
    randomize(s, 0, s.byteSize(), seed);
  }

  /** Fails with the first differing offset unless both segments hold the same bytes. */
  static void assertSameBytes(MemorySegment expected, MemorySegment actual, String what) {
    assertEquals(expected.byteSize(), actual.byteSize(), what + ": sizes differ");
    long at = expected.mismatch(actual);
    if (at >= 0)
      fail(what + ": first difference at offset " + at + " (expected " + expected.get(ValueLayout.JAVA_BYTE, at)
          + ", found " + actual.get(ValueLayout.JAVA_BYTE, at) + ")");
  }

  static void assertRangeEquals(MemorySegment a, long aOff, MemorySegment b, long bOff, long len, String what) {
    long at = MemorySegment.mismatch(a, aOff, aOff + len, b, bOff, bOff + len);
    if (at >= 0) fail(what + ": first difference " + at + " bytes into the range");
  }

  /** Waits (bounded) and asserts success. */
  static TransferStatus assertSucceeds(TransferStatus s, String what) {
    assertTrue(s.await(Duration.ofSeconds(60)), what + ": still in progress after 60 s");
    assertTrue(s.succeeded(), what + ": " + s);
    return s;
  }

  static TransferStatus assertSucceeds(TransferStatus s) {
    return assertSucceeds(s, "transfer");
  }

  /** Bad input: the status has failed already when the call returns, with this code, naming every fragment. */
  static void assertRefused(TransferStatus s, StatusCode code, String... fragments) {
    assertNotNull(s, "a transfer call must return a status");
    assertFalse(s.inProgress(), "bad input must fail at once, got " + s);
    assertTrue(s.failed(), "bad input must fail at once, got " + s);
    assertFalse(s.succeeded());
    assertEquals(code, s.code(), "code of " + s);
    for (String f : fragments)
      assertTrue(s.message().contains(f), "message '" + s.message() + "' should name '" + f + "'");
  }

  /** Waits (bounded) and asserts the transfer failed with one of {@code codes}. */
  static void assertFailsWith(TransferStatus s, String what, StatusCode... codes) {
    assertTrue(s.await(Duration.ofSeconds(30)), what + ": still in progress after 30 s");
    assertTrue(s.failed(), what + ": should have failed, got " + s);
    assertTrue(java.util.Arrays.asList(codes).contains(s.code()), what + ": code " + s.code() + " not in "
        + java.util.Arrays.toString(codes) + " (" + s.message() + ")");
  }
}
