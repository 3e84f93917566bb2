package org.mori4j.transport.xgmi;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class XgmiMemoryDataTest {
  private static byte[] handle() {
    byte[] h = new byte[64];
    for (int i = 0; i < h.length; i++) h[i] = (byte) (i * 7 + 1);
    return h;
  }

  @Test
  void roundTripsWithAndWithoutAnIpcHandle() {
    XgmiMemoryData with = new XgmiMemoryData(3, 0x1b00L, 4096, 1L << 30, handle());
    byte[] b = with.encode();
    assertEquals(XgmiMemoryData.HEADER_BYTES + 64, b.length);
    assertNull(XgmiMemoryData.check(b));
    assertEquals(with, XgmiMemoryData.decode(b));
    assertEquals(3, XgmiMemoryData.device(b));
    assertEquals(0x1b00L, XgmiMemoryData.pciLocation(b));
    assertTrue(XgmiMemoryData.hasHandle(b));
    assertArrayEquals(handle(), XgmiMemoryData.decode(b).ipcHandle());

    XgmiMemoryData without = new XgmiMemoryData(0, -1, 0, 2 << 20, null);
    byte[] w = without.encode();
    assertEquals(XgmiMemoryData.HEADER_BYTES, w.length);
    assertFalse(XgmiMemoryData.hasHandle(w));
    assertEquals(without, XgmiMemoryData.decode(w));
    assertNull(XgmiMemoryData.decode(w).ipcHandle());
  }

  @Test
  void malformedDataIsNamedNotParsed() {
    byte[] good = new XgmiMemoryData(1, 7, 16, 4096, handle()).encode();
    assertNotNull(XgmiMemoryData.check(null));
    assertTrue(XgmiMemoryData.check(Arrays.copyOf(good, 10)).contains("too short"));
    assertTrue(XgmiMemoryData.check(Arrays.copyOf(good, good.length - 1)).contains("expected " + good.length));
    byte[] version = good.clone();
    version[0] = 9;
    assertTrue(XgmiMemoryData.check(version).contains("version 9"));
    byte[] flags = good.clone();
    flags[1] = 6;
    assertTrue(XgmiMemoryData.check(flags).contains("unknown flags"));
    byte[] offsetPastEnd = new XgmiMemoryData(1, 7, 16, 4096, null).encode();
    offsetPastEnd[20] = 0x20; // offset 16 -> 0x2010, beyond the 4096-byte allocation
    assertNotNull(XgmiMemoryData.check(offsetPastEnd));
    assertThrows(IllegalArgumentException.class, () -> XgmiMemoryData.decode(offsetPastEnd));
    assertThrows(IllegalArgumentException.class, () -> new XgmiMemoryData(0, 0, 4096, 4096, null));
    assertThrows(IllegalArgumentException.class, () -> new XgmiMemoryData(0, 0, 0, 4096, new byte[63]));
    assertThrows(IllegalArgumentException.class, () -> new XgmiMemoryData(-1, 0, 0, 4096, null));
  }

  @Test
  void pciBusIdsBecomeOneComparableNumber() {
    assertEquals(0x0000_1b_00L, XgmiMemoryData.parsePciBusId("0000:1b:00"));
    assertEquals((0x0001L << 16) | (0xc3 << 8) | 0x1f, XgmiMemoryData.parsePciBusId("0001:C3:1f.0"));
    assertEquals(-1, XgmiMemoryData.parsePciBusId("1b:00"));
    assertEquals(-1, XgmiMemoryData.parsePciBusId("zz:1b:00"));
    assertEquals(-1, XgmiMemoryData.parsePciBusId("0000:1ff:00"));
    assertEquals(-1, XgmiMemoryData.parsePciBusId(null));
  }
}
