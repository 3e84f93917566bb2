package org.mori4j.shmem;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.zip.CRC32;

/**
 * What {@link Shmem#getUniqueId()} hands out and {@link Shmem#initWithUniqueId} takes: where rank 0's
 * bootstrap listens and a random nonce that names this one group (so that a PE holding an id of another run,
 * or a stray connection, is refused instead of joining the wrong group). Encoded in 128 bytes like MORI's id:
 * magic {@code "M4JSHMID"}, version, address length (4 or 16), the address (16 bytes, IPv4 in the first 4),
 * port, the 16-byte nonce, zero padding, and a CRC32 of everything before it in the last 4 bytes, so a
 * truncated or damaged id is refused with the reason rather than sending a PE to a wrong address.
 *
 * @param address rank 0's bootstrap address
 * @param port rank 0's bootstrap port
 * @param nonce 16 random bytes naming the group
 */
public record UniqueId(InetAddress address, int port, byte[] nonce) {
  /** Bytes of an encoded id (MORI's {@code shmem_get_unique_id} returns 128 too). */
  public static final int BYTES = 128;
  private static final long MAGIC = 0x4d344a53_484d4944L; // "M4JSHMID"
  private static final byte VERSION = 1;
  private static final SecureRandom RANDOM = new SecureRandom();

  public UniqueId {
    if (address == null) throw new IllegalArgumentException("unique id without an address");
    if (port < 1 || port > 65535) throw new IllegalArgumentException("unique id port " + port + " is out of range 1..65535");
    if (nonce == null || nonce.length != 16) throw new IllegalArgumentException("unique id nonce must be 16 bytes");
    nonce = nonce.clone();
  }

  /** A fresh id for a bootstrap listening at {@code where}. */
  static UniqueId fresh(InetSocketAddress where) {
    byte[] nonce = new byte[16];
    RANDOM.nextBytes(nonce);
    return new UniqueId(where.getAddress(), where.getPort(), nonce);
  }

  @Override
  public byte[] nonce() {
    return nonce.clone();
  }

  public InetSocketAddress socketAddress() {
    return new InetSocketAddress(address, port);
  }

  /** The 128-byte form passed between processes out of band. */
  public byte[] toBytes() {
    ByteBuffer b = ByteBuffer.allocate(BYTES);
    byte[] a = address.getAddress();
    b.putLong(MAGIC).put(VERSION).put((byte) a.length).put(Arrays.copyOf(a, 16)).putShort((short) port).put(nonce);
    CRC32 crc = new CRC32();
    crc.update(b.array(), 0, BYTES - 4);
    b.putInt(BYTES - 4, (int) crc.getValue());
    return b.array();
  }

  /** Decodes {@link #toBytes()}; anything else throws {@link IllegalArgumentException} saying what is wrong with it. */
  public static UniqueId fromBytes(byte[] bytes) {
    if (bytes == null) throw new IllegalArgumentException("unique id is null");
    if (bytes.length != BYTES) throw new IllegalArgumentException("unique id has " + bytes.length + " bytes, not " + BYTES);
    ByteBuffer b = ByteBuffer.wrap(bytes);
    if (b.getLong() != MAGIC) throw new IllegalArgumentException("unique id does not start with M4JSHMID (not an id from Shmem.getUniqueId)");
    CRC32 crc = new CRC32();
    crc.update(bytes, 0, BYTES - 4);
    if ((int) crc.getValue() != b.getInt(BYTES - 4)) throw new IllegalArgumentException("unique id checksum does not match (damaged in transit)");
    byte version = b.get();
    if (version != VERSION) throw new IllegalArgumentException("unique id version " + version + " is not " + VERSION);
    int length = b.get();
    if (length != 4 && length != 16) throw new IllegalArgumentException("unique id address length " + length + " is neither 4 nor 16");
    byte[] a = new byte[16];
    b.get(a);
    int port = b.getShort() & 0xffff;
    byte[] nonce = new byte[16];
    b.get(nonce);
    try {
      return new UniqueId(InetAddress.getByAddress(Arrays.copyOf(a, length)), port, nonce);
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("unique id address is invalid: " + e.getMessage());
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof UniqueId u && u.address.equals(address) && u.port == port && Arrays.equals(u.nonce, nonce);
  }

  @Override
  public int hashCode() {
    return address.hashCode() * 31 + port + Arrays.hashCode(nonce);
  }

  @Override
  public String toString() {
    return "UniqueId[" + socketAddress() + ", nonce " + HexFormat.of().formatHex(nonce, 0, 4) + "...]";
  }
}
