package org.mori4j.shmem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/** The 128 bytes passed out of band: they round-trip, and anything else is refused with the reason. */
class UniqueIdTest {

  @Test
  void encodesTo128BytesAndBack() throws Exception {
    UniqueId id = UniqueId.fresh(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 41234));
    byte[] b = id.toBytes();
    assertEquals(128, b.length);
    assertEquals(id, UniqueId.fromBytes(b));
    UniqueId v6 = UniqueId.fresh(new InetSocketAddress(InetAddress.getByName("::1"), 65535));
    assertEquals(v6, UniqueId.fromBytes(v6.toBytes()));
  }

  @Test
  void twoIdsDifferInTheirNonce() throws Exception {
    InetSocketAddress at = new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 5000);
    assertNotEquals(UniqueId.fresh(at), UniqueId.fresh(at));
  }

  @Test
  void getUniqueIdReservesAListeningAddress() {
    UniqueId id = UniqueId.fromBytes(Shmem.getUniqueId(ShmemConfig.load().withBootstrapHost("127.0.0.1")));
    assertEquals("127.0.0.1", id.address().getHostAddress());
    assertTrue(id.port() > 0);
    // the reserved port is taken: binding it again fails
    assertThrows(java.io.IOException.class, () -> {
      try (java.net.ServerSocket s = new java.net.ServerSocket()) {
        s.bind(id.socketAddress());
      }
    });
  }

  @Test
  void badIdsAreRefusedSayingWhy() throws Exception {
    byte[] good = UniqueId.fresh(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 4000)).toBytes();
    assertRefused(null, "null");
    assertRefused(new byte[127], "127 bytes");
    assertRefused(new byte[128], "M4JSHMID");
    byte[] flipped = good.clone();
    flipped[40] ^= 1;
    assertRefused(flipped, "checksum");
    byte[] truncated = java.util.Arrays.copyOf(good, 64);
    assertRefused(truncated, "64 bytes");
  }

  private static void assertRefused(byte[] bytes, String why) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> UniqueId.fromBytes(bytes));
    assertTrue(e.getMessage().contains(why), e.getMessage());
    // and init refuses it the same way, before touching a GPU or the network
    IllegalArgumentException init = assertThrows(IllegalArgumentException.class, () -> Shmem.initWithUniqueId(0, 2, bytes));
    assertTrue(init.getMessage().contains(why), init.getMessage());
  }
}
