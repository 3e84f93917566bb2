package org.mori4j.natives.rdmacm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mori4j.natives.rdmacm.RdmaCmConstants.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.verbs.Errno;
import org.mori4j.natives.verbs.RdmaDevices;

/**
 * The connection manager through the real librdmacm on whatever this machine has. On the project's
 * machines (librdmacm installed, no RDMA device) opening a channel fails with {@code ENODEV} and a message
 * that says there is no RDMA device and why; on a machine with a device the same calls succeed. Either way
 * nothing crashes and nothing hangs. The address and connection-parameter codecs run everywhere.
 */
class ConnectionManagerTest {
  private static final InetSocketAddress LOOPBACK = new InetSocketAddress(InetAddress.getLoopbackAddress(), 7471);

  private static void assumeLibrary() {
    Assumptions.assumeTrue(RdmaCm.available(), "librdmacm.so.1 is not installed: " + RdmaCm.absence());
  }

  @Test
  void aChannelAndAnIdEitherOpenOrFailSayingWhy() {
    assumeLibrary();
    RdmaDevices.Inventory found = RdmaDevices.inventory();
    try (RdmaEventChannel channel = RdmaEventChannel.create(); RdmaCmId id = channel.createId(RDMA_PS_TCP)) {
      assertTrue(channel.fd() >= 0, "fd " + channel.fd());
      assertEquals(RDMA_PS_TCP, id.portSpace());
      assertNull(id.localAddress(), "an id neither bound nor resolved has no address");
      assertThrows(IllegalStateException.class, id::device);
      System.out.println("rdma_cm here: channel and id open (devices " + found.devices() + ")");
    } catch (NativeException e) {
      assertClearCmFailure(e, found);
      System.out.println("rdma_cm here: " + e.getMessage());
    }
  }

  @Test
  void resolvingLoopbackWithoutADeviceFailsClearly() {
    assumeLibrary();
    RdmaDevices.Inventory found = RdmaDevices.inventory();
    Assumptions.assumeTrue(found.isEmpty(), "this machine has RDMA devices " + found.devices());
    try (RdmaEventChannel channel = RdmaEventChannel.create(); RdmaCmId id = channel.createId(RDMA_PS_TCP)) {
      id.resolveAddress(null, LOOPBACK, Duration.ofSeconds(2));
      RdmaCmEvent event = channel.nextEvent();
      // Without a device the address cannot resolve to one; the CM may only say so with an error event.
      assertEquals(RDMA_CM_EVENT_ADDR_ERROR, event.type(), event.toString());
      assertTrue(event.status() < 0, event.toString());
    } catch (NativeException e) {
      assertClearCmFailure(e, found);
      assertTrue(e.getMessage().contains("no RDMA device on this machine: " + found.whyNone()), e.getMessage());
      System.out.println("resolving " + LOOPBACK + " here: " + e.getMessage());
    }
  }

  private static void assertClearCmFailure(NativeException e, RdmaDevices.Inventory found) {
    assertEquals(RdmaCm.LIBRARY, e.library());
    assertEquals(Errno.name(e.code()), e.codeName());
    assertTrue(e.getMessage().startsWith("rdma_"), e.getMessage());
    assertTrue(e.getMessage().contains(" failed: " + e.codeName() + " ("), e.getMessage());
    if (e.code() == Errno.ENODEV && found.isEmpty()) {
      assertTrue(e.getMessage().endsWith(": no RDMA device on this machine: " + found.whyNone()), e.getMessage());
    }
  }

  @Test
  void everyEventTypeIsNamedByTheLibrary() throws IllegalAccessException {
    assumeLibrary();
    int named = 0;
    for (Field f : RdmaCmConstants.class.getFields()) {
      if (!f.getName().startsWith("RDMA_CM_EVENT_")) continue;
      assertEquals(f.getName(), RdmaCm.eventStr(f.getInt(null)));
      named++;
    }
    assertEquals(16, named);
  }

  @Test
  void failuresNameTheFunctionAndTheErrno() {
    NativeException e = RdmaCm.failure("rdma_connect", Errno.ETIMEDOUT);
    assertEquals(RdmaCm.LIBRARY, e.library());
    assertEquals(Errno.ETIMEDOUT, e.code());
    assertEquals("ETIMEDOUT", e.codeName());
    assertEquals("rdma_connect failed: ETIMEDOUT (Connection timed out)", e.getMessage());
  }

  @Test
  void socketAddressesAreWrittenInNetworkByteOrder() throws Exception {
    try (Arena arena = Arena.ofConfined()) {
      InetSocketAddress v4 = new InetSocketAddress(InetAddress.getByAddress(new byte[] {10, 1, 2, 3}), 4791);
      MemorySegment sin = SocketAddresses.encode(v4, arena);
      assertEquals(RdmaCmLayouts.SOCKADDR_IN.byteSize(), sin.byteSize());
      assertArrayEquals(new byte[] {AF_INET, 0, 0x12, (byte) 0xB7, 10, 1, 2, 3}, sin.asSlice(0, 8).toArray(
          java.lang.foreign.ValueLayout.JAVA_BYTE));
      assertEquals(v4, SocketAddresses.decode(sin));

      InetSocketAddress v6 = new InetSocketAddress(InetAddress.getByName("fe80::1"), 65535);
      MemorySegment sin6 = SocketAddresses.encode(v6, arena);
      assertEquals(RdmaCmLayouts.SOCKADDR_IN6.byteSize(), sin6.byteSize());
      assertEquals(v6, SocketAddresses.decode(sin6));

      assertNull(SocketAddresses.decode(arena.allocate(RdmaCmLayouts.SOCKADDR_STORAGE)), "family 0: no address");
      assertThrows(IllegalArgumentException.class,
          () -> SocketAddresses.encode(InetSocketAddress.createUnresolved("example.org", 1), arena));
    }
  }

  @Test
  void connectionParametersRoundTripThroughTheCStruct() {
    byte[] token = {1, 2, 3, 4, 5};
    ConnectionParameters p = new ConnectionParameters(token, 16, 8, 1, 7, 6, true, 0x123456);
    try (Arena arena = Arena.ofConfined()) {
      ConnectionParameters back = ConnectionParameters.read(p.write(arena));
      assertArrayEquals(token, back.privateData());
      assertEquals(16, back.responderResources());
      assertEquals(8, back.initiatorDepth());
      assertEquals(1, back.flowControl());
      assertEquals(7, back.retryCount());
      assertEquals(6, back.rnrRetryCount());
      assertTrue(back.srq());
      assertEquals(0x123456, back.qpNumber());

      ConnectionParameters none = ConnectionParameters.read(ConnectionParameters.defaults(null).write(arena));
      assertEquals(0, none.privateData().length);
      assertFalse(none.srq());
    }
    token[0] = 9;
    assertEquals(1, p.privateData()[0], "the record keeps its own copy");
    assertThrows(IllegalArgumentException.class, () -> ConnectionParameters.defaults(new byte[256]));
    assertThrows(IllegalArgumentException.class, () -> new ConnectionParameters(null, 256, 1, 0, 7, 7, false, 0));
  }
}
