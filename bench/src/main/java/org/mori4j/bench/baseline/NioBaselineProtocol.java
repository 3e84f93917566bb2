package org.mori4j.bench.baseline;

import java.nio.ByteBuffer;

/**
 * The plain-NIO baseline's wire format, shared by {@link NioBaselineServer} and {@link NioBaselineClient}: a
 * 16-byte big-endian header (magic, message size, slots), then messages of exactly that size, each answered
 * by an 8-byte ack with its sequence number. There is deliberately no per-message header: the baseline is the
 * floor of what moving bytes over one TCP connection costs, so anything the engine adds shows up as overhead.
 */
public final class NioBaselineProtocol {
  static final int MAGIC = 0x4d344e42; // "M4NB"
  static final int HEADER_BYTES = 16;
  /** Unacknowledged messages a client may have outstanding; keeps the 8-byte acks (8 KiB) well inside socket buffers. */
  static final int ACK_WINDOW = 1024;

  private NioBaselineProtocol() {}

  /**
   * The connection header.
   *
   * @param msgSize bytes per message, 1 .. 2^31-1 (a direct ByteBuffer is int-indexed)
   * @param slots   how many distinct message slots the receiver cycles through
   */
  record Header(long msgSize, int slots) {
    Header {
      if (msgSize <= 0 || msgSize > Integer.MAX_VALUE) throw new IllegalArgumentException("bad message size " + msgSize);
      if (slots <= 0) throw new IllegalArgumentException("bad slot count " + slots);
    }

    void encode(ByteBuffer b) {
      b.putInt(MAGIC).putLong(msgSize).putInt(slots);
    }

    static Header decode(ByteBuffer b) {
      int magic = b.getInt();
      if (magic != MAGIC) throw new IllegalArgumentException("not a NIO baseline client (magic 0x" + Integer.toHexString(magic) + ")");
      return new Header(b.getLong(), b.getInt());
    }
  }
}
