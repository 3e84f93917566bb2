package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

class WireAndPatternTest {
  @Test
  void readyLineRoundTrips() {
    ReadyLine r = new ReadyLine("127.0.0.1", 25520, 40001);
    assertEquals("MORI4J-READY host=127.0.0.1 port=25520 nio=40001", r.format());
    assertEquals(r, ReadyLine.parse(r.format()));
    assertThrows(IllegalArgumentException.class, () -> ReadyLine.parse("MORI4J-READY host=x port=1"));
    assertThrows(IllegalArgumentException.class, () -> ReadyLine.parse("MORI4J-READY host=x port=99999 nio=1"));
  }

  @Test
  void peerAddressAcceptsIpv6Brackets() {
    assertEquals(new PeerAddress("::1", 2552), PeerAddress.parse("[::1]:2552", IllegalArgumentException::new));
    assertEquals(new PeerAddress("node-b", 7), PeerAddress.parse("node-b:7", IllegalArgumentException::new));
    assertThrows(IllegalArgumentException.class, () -> PeerAddress.parse(":7", IllegalArgumentException::new));
  }

  @Test
  void patternFillMatchesByteAtAndDetectsDamage() {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment s = a.allocate(4096);
      DataPattern.fill(s, 1001, 42);
      assertEquals(-1, DataPattern.firstMismatch(s, 0, 0, 1001, 42));
      assertEquals(-1, DataPattern.firstMismatch(s, 500, 500, 200, 42));
      assertNotEquals(-1, DataPattern.firstMismatch(s, 0, 0, 64, 43), "another seed must not match");
      s.set(ValueLayout.JAVA_BYTE, 777, (byte) ~s.get(ValueLayout.JAVA_BYTE, 777));
      assertEquals(777 - 700, DataPattern.firstMismatch(s, 700, 700, 200, 42));
      assertNotEquals(-1, DataPattern.firstMismatch(s, 0, 8, 64, 42), "a shifted block must not match");
    }
  }

  @Test
  void chunkedFillAtGivesTheBytesOfTheWholeBufferFill() {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment whole = a.allocate(8192);
      DataPattern.fill(whole, 8192, 7);
      MemorySegment chunk = a.allocate(1000);
      for (long off : new long[] {0, 8, 3, 4093, 7000}) {
        long n = Math.min(1000, 8192 - off);
        chunk.fill((byte) 0);
        DataPattern.fillAt(chunk, off, n, 7);
        assertEquals(-1, DataPattern.firstMismatch(chunk, 0, off, n, 7), "chunk at " + off);
        assertEquals(-1L, chunk.asSlice(0, n).mismatch(whole.asSlice(off, n)), "chunk at " + off);
      }
      assertThrows(IndexOutOfBoundsException.class, () -> DataPattern.fillAt(chunk, 0, 1001, 7));
    }
  }
}
