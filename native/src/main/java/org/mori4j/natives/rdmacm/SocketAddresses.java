package org.mori4j.natives.rdmacm;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.mori4j.natives.rdmacm.RdmaCmConstants.AF_INET;
import static org.mori4j.natives.rdmacm.RdmaCmConstants.AF_INET6;
import static org.mori4j.natives.rdmacm.RdmaCmLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;

/**
 * Java socket addresses to and from the C {@code sockaddr_in}/{@code sockaddr_in6} that the CM takes and
 * reports. The port and address go in network byte order, as the kernel reads them; the family field stays
 * in host order. Only resolved addresses are accepted: the CM resolves RDMA routes, not host names, and a
 * name lookup hidden in a control call would block where nobody expects it.
 */
public final class SocketAddresses {
  private static final ValueLayout.OfShort NET_SHORT = JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN);

  private SocketAddresses() {}

  /** A {@code struct sockaddr_in} or {@code sockaddr_in6} for {@code address}, allocated in {@code arena}. */
  public static MemorySegment encode(InetSocketAddress address, Arena arena) {
    if (address.isUnresolved()) {
      throw new IllegalArgumentException("the RDMA CM needs a resolved address, not the host name " + address);
    }
    InetAddress ip = address.getAddress();
    if (ip instanceof Inet4Address) {
      MemorySegment sin = arena.allocate(SOCKADDR_IN);
      sin.set(JAVA_SHORT, SIN_FAMILY, (short) AF_INET);
      sin.set(NET_SHORT, SIN_PORT, (short) address.getPort());
      MemorySegment.copy(ip.getAddress(), 0, sin, JAVA_BYTE, SIN_ADDR, 4);
      return sin;
    }
    Inet6Address ip6 = (Inet6Address) ip;
    MemorySegment sin6 = arena.allocate(SOCKADDR_IN6);
    sin6.set(JAVA_SHORT, SIN6_FAMILY, (short) AF_INET6);
    sin6.set(NET_SHORT, SIN6_PORT, (short) address.getPort());
    MemorySegment.copy(ip6.getAddress(), 0, sin6, JAVA_BYTE, SIN6_ADDR, 16);
    sin6.set(JAVA_INT, SIN6_SCOPE_ID, ip6.getScopeId());
    return sin6;
  }

  /**
   * The address in a {@code sockaddr} of any family (e.g. {@code rdma_cm_id.route.addr.src_storage});
   * null when its family is neither IPv4 nor IPv6 (an id not yet bound has family 0).
   */
  public static InetSocketAddress decode(MemorySegment sockaddr) {
    MemorySegment s = sockaddr.reinterpret(SOCKADDR_STORAGE.byteSize());
    int family = s.get(JAVA_SHORT, SS_FAMILY);
    try {
      if (family == AF_INET) {
        byte[] ip = s.asSlice(SIN_ADDR, 4).toArray(JAVA_BYTE);
        return new InetSocketAddress(InetAddress.getByAddress(ip), Short.toUnsignedInt(s.get(NET_SHORT, SIN_PORT)));
      }
      if (family == AF_INET6) {
        byte[] ip = s.asSlice(SIN6_ADDR, 16).toArray(JAVA_BYTE);
        int scope = s.get(JAVA_INT, SIN6_SCOPE_ID);
        return new InetSocketAddress(Inet6Address.getByAddress(null, ip, scope),
            Short.toUnsignedInt(s.get(NET_SHORT, SIN6_PORT)));
      }
      return null;
    } catch (UnknownHostException e) {
      throw new IllegalStateException("a " + family + " sockaddr with a malformed address", e);
    }
  }
}
