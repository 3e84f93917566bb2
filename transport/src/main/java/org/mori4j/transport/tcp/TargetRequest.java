package org.mori4j.transport.tcp;

import static org.mori4j.transport.tcp.WireFormat.*;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.RegionTable;
import org.mori4j.transport.TransportError;

/**
 * The request a target connection is serving: the fields of its header, its block list, and the verdict of
 * the checks against this engine's registrations (unknown or deregistered id, wrong access key, shifted base
 * address, a freed or read-only region, a block or stripe outside the region, blocks that do not add up to
 * the payload). A frame that breaks the protocol throws {@link PeerFault}; a request that is well formed but
 * refused sets {@link #error} and {@link #errorText}, which go back to the initiator in its response. One
 * instance per connection, reused for every request, so serving a request allocates nothing.
 */
final class TargetRequest {
  int type, flags, entryCount, parts;
  long seq, uid, memId, accessKey, baseAddress, payloadBytes;
  LocalRegion region;
  TransportError error;
  String errorText;
  /** The block list, (offset, size) pairs; the first comes with the header. */
  ByteBuffer entries = TcpConnection.direct(ENTRY * 64);
  private long firstOffset, firstSize;

  /** Reads the fields of {@code header} (flipped, then cleared) and checks magic, version and entry count. */
  void decode(ByteBuffer header, int maxEntries) throws PeerFault {
    int magic = header.getInt();
    int version = header.get();
    type = header.get();
    flags = header.getShort() & 0xffff;
    entryCount = header.getInt();
    parts = header.getInt();
    seq = header.getLong();
    uid = header.getLong();
    memId = header.getLong();
    accessKey = header.getLong();
    baseAddress = header.getLong();
    payloadBytes = header.getLong();
    firstOffset = header.getLong();
    firstSize = header.getLong();
    header.clear();
    if (magic != REQ_MAGIC || version != VERSION)
      throw new PeerFault(PeerFault.MALFORMED, String.format("magic 0x%08x, version %d", magic, version & 0xff));
    if (entryCount < 1 || entryCount > maxEntries)
      throw new PeerFault(PeerFault.MALFORMED, "entry count " + entryCount + " outside 1.." + maxEntries);
  }

  /** A hello's key length (its only entry's size), checked. */
  int helloKeyBytes() throws PeerFault {
    if (firstSize <= 0 || firstSize > MAX_SMALL_PAYLOAD) throw new PeerFault(PeerFault.MALFORMED, "hello key of " + firstSize + " bytes");
    return (int) firstSize;
  }

  /**
   * Checks a WRITE's or READ's frame and readies {@link #entries} for its block list (the first entry already in);
   * true when that list is complete, false when the rest of it follows on the socket.
   */
  boolean startBlocks() throws PeerFault {
    if (type != T_WRITE && type != T_READ) throw new PeerFault(PeerFault.MALFORMED, "unknown request type " + type);
    if (payloadBytes < 0 || (type == T_READ && payloadBytes == 0)) throw new PeerFault(PeerFault.MALFORMED, "payload length " + payloadBytes);
    if ((flags & F_PART) != 0 && entryCount != 2) throw new PeerFault(PeerFault.MALFORMED, "a stripe carries 2 entries, not " + entryCount);
    int need = ENTRY * entryCount;
    if (entries.capacity() < need) entries = TcpConnection.direct(Math.max(need, entries.capacity() * 2));
    entries.clear();
    entries.putLong(firstOffset).putLong(firstSize);
    entries.limit(need);
    if (entryCount > 1) return false;
    entries.flip();
    return true;
  }

  /** Checks the request (its block list in, flipped) against {@code regions}; a refusal sets {@link #error}. */
  void check(RegionTable regions) {
    error = null;
    region = regions.get(memId);
    if (region == null || !region.live()) {
      refuse(TransportError.NOT_FOUND, "memory id " + memId + " is not registered here (or was deregistered)");
    } else if (region.accessKey() != accessKey) {
      refuse(TransportError.NOT_FOUND, "descriptor for memory id " + memId + " does not match its registration (access key)");
    } else if (region.address() != baseAddress) {
      // the region under that id and key is here: the descriptor is wrong, not gone (as RDMA and XGMI say it)
      refuse(TransportError.INVALID_ARGS, "descriptor for memory id " + memId + " says address 0x" + Long.toHexString(baseAddress)
          + " but it is registered at 0x" + Long.toHexString(region.address()));
    } else if (!region.segment().scope().isAlive()) {
      refuse(TransportError.BAD_STATE, "memory id " + memId + " was freed by its owner");
    } else if (type == T_WRITE && region.segment().isReadOnly()) {
      refuse(TransportError.INVALID_ARGS, "memory id " + memId + " is read-only");
    } else if ((flags & F_PART) != 0 && !stripeInsideWhole()) {
      refuse(TransportError.INVALID_ARGS, "transfer [offset " + entries.getLong(ENTRY) + ", size " + entries.getLong(ENTRY + 8)
          + "] lies outside memory id " + memId + " (size " + region.size() + ")");
    } else {
      if ((flags & F_PART) != 0) entryCount = 1; // the second entry only described the whole transfer
      long total = 0;
      for (int i = 0; i < entryCount; i++) {
        long off = entries.getLong(i * ENTRY);
        long len = entries.getLong(i * ENTRY + 8);
        if (!region.contains(off, len)) {
          refuse(TransportError.INVALID_ARGS, "block " + i + " [offset " + off + ", size " + len
              + "] lies outside memory id " + memId + " (size " + region.size() + ")");
          break;
        }
        total += len;
      }
      if (error == null && total != payloadBytes)
        refuse(TransportError.INVALID_ARGS, "blocks add up to " + total + " bytes but the request says " + payloadBytes);
    }
  }

  /** A stripe's second entry is its whole transfer: every stripe is refused unless all of it fits. */
  private boolean stripeInsideWhole() {
    long off = entries.getLong(0), len = entries.getLong(8);
    long wholeOff = entries.getLong(ENTRY), wholeLen = entries.getLong(ENTRY + 8);
    return region.contains(wholeOff, wholeLen) && off >= wholeOff && len >= 0
        && off - wholeOff <= wholeLen - len;
  }

  /** The blocks' offsets ({@code field} 0) or sizes ({@code field} 8). */
  long[] offsets(int field) {
    long[] a = new long[entryCount];
    for (int i = 0; i < entryCount; i++) a[i] = entries.getLong(i * ENTRY + field);
    return a;
  }

  void refuse(TransportError e, String text) {
    error = e;
    errorText = text;
  }

  /** The request is answered: the next one starts without a verdict. */
  void done() {
    error = null;
    region = null;
  }

  /** The current refusal's reason as it goes on the wire: UTF-8, cut to {@code MAX_SMALL_PAYLOAD} bytes. */
  byte[] errorBytes() {
    byte[] text = errorText.getBytes(StandardCharsets.UTF_8);
    return text.length <= MAX_SMALL_PAYLOAD ? text : java.util.Arrays.copyOf(text, MAX_SMALL_PAYLOAD);
  }
}
