package org.mori4j.transport.rdma.soft;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/**
 * The software device's GID, which carries everything a peer needs to reach it. RoCEv2 derives a port's GID
 * from its IPv4 address as the IPv4-mapped IPv6 address {@code ::ffff:a.b.c.d} (bytes 10-11 are {@code ff ff},
 * bytes 12-15 the address, the rest zero). The software device does the same and puts its TCP listen port,
 * big-endian, into bytes 8-9, which are zero in a real mapped address. So the destination GID and QP number
 * that RTR takes, exactly what a NIC's queue pair gets, are all a peer's queue pair needs to connect.
 */
final class SoftGid {
  static final int LENGTH = 16;

  private SoftGid() {}

  static byte[] encode(Inet4Address address, int port) {
    if (port <= 0 || port > 0xffff) throw new IllegalArgumentException("TCP port out of range: " + port);
    byte[] gid = new byte[LENGTH];
    gid[8] = (byte) (port >>> 8);
    gid[9] = (byte) port;
    gid[10] = (byte) 0xff;
    gid[11] = (byte) 0xff;
    System.arraycopy(address.getAddress(), 0, gid, 12, 4);
    return gid;
  }

  /** The address a GID of {@link #encode} names; null when {@code gid} is not a software device's GID. */
  static InetSocketAddress decode(byte[] gid) {
    if (gid == null || gid.length != LENGTH) return null;
    for (int i = 0; i < 8; i++) if (gid[i] != 0) return null;
    if (gid[10] != (byte) 0xff || gid[11] != (byte) 0xff) return null;
    int port = ((gid[8] & 0xff) << 8) | (gid[9] & 0xff);
    if (port == 0) return null;
    byte[] ip = new byte[4];
    System.arraycopy(gid, 12, ip, 0, 4);
    try {
      return new InetSocketAddress(InetAddress.getByAddress(ip), port);
    } catch (UnknownHostException e) {
      throw new IllegalStateException("4 bytes are always an IPv4 address", e);
    }
  }

  /** The GID in IPv6 notation, e.g. {@code 0000:0000:0000:0000:a1f3:ffff:7f00:0001}. */
  static String format(byte[] gid) {
    if (gid == null) return "null";
    StringBuilder b = new StringBuilder(39);
    for (int i = 0; i < gid.length; i += 2) {
      if (i > 0) b.append(':');
      b.append(String.format("%02x%02x", gid[i] & 0xff, i + 1 < gid.length ? gid[i + 1] & 0xff : 0));
    }
    return b.toString();
  }
}
