package org.mori4j.transport.tcp;

import java.nio.ByteBuffer;

/**
 * The TCP data-plane frames, written and read in place in reusable direct buffers (no frame objects).
 *
 * <pre>
 * request (initiator to target), 64 bytes, then entryCount x (u64 remoteOffset, u64 size), then a WRITE's payload
 *   0 u32 magic 'M4JQ' | 4 u8 version | 5 u8 type | 6 u16 flags | 8 u32 entryCount | 12 u32 parts
 *  16 u64 seq | 24 u64 uid (HELLO: token) | 32 u64 memId | 40 u64 accessKey | 48 u64 baseAddress | 56 u64 payloadBytes
 * response (target to initiator), 32 bytes, then payloadBytes (READ data, or an error message)
 *   0 u32 magic 'M4JR' | 4 u8 version | 5 u8 type | 6 u8 status (0 ok, else TransportError wire code) | 7 u8 0
 *   8 u64 seq | 16 u64 payloadBytes | 24 u64 0
 * </pre>
 * A stripe of a large transfer (flag PART) carries two entries: its own (offset, size), then the whole
 * transfer's, so that the target refuses every stripe of a transfer that does not fit as a whole.
 * Requests on one connection are answered in order, so the initiator matches a response with the oldest
 * request in flight and checks its sequence number.
 */
final class WireFormat {
  static final int VERSION = 1;
  static final int REQ_MAGIC = 0x4d344a51;
  static final int RESP_MAGIC = 0x4d344a52;
  static final int REQ_HEADER = 64;
  static final int RESP_HEADER = 32;
  static final int ENTRY = 16;

  static final int T_HELLO = 1;
  static final int T_WRITE = 2;
  static final int T_READ = 3;
  static final int T_HELLO_OK = 0x11;
  static final int T_WRITE_DONE = 0x12;
  static final int T_READ_DATA = 0x13;

  static final int F_NOTIFY = 1;
  static final int F_PART = 2;
  /** On a HELLO: this connection is a bulk lane (it carries only stripes); the target serves it on its bulk loop. */
  static final int F_BULK = 4;

  /**
   * WRITE payloads up to this size are copied into the request frame by the initiator: a 16 KiB copy costs
   * less than a second system call or the JDK's per-buffer bookkeeping of a gathering write.
   */
  static final int INLINE_MAX = 16 * 1024;

  /** Longest error message or hello key on the wire. */
  static final int MAX_SMALL_PAYLOAD = 4096;

  private WireFormat() {}

  static void putRequest(ByteBuffer b, int type, int flags, int entries, int parts, long seq, long uid, long memId,
                         long accessKey, long baseAddress, long payloadBytes) {
    b.clear();
    appendRequest(b, type, flags, entries, parts, seq, uid, memId, accessKey, baseAddress, payloadBytes);
  }

  /** {@link #putRequest} at {@code b}'s position, after requests already there. */
  static void appendRequest(ByteBuffer b, int type, int flags, int entries, int parts, long seq, long uid, long memId,
                            long accessKey, long baseAddress, long payloadBytes) {
    b.putInt(REQ_MAGIC).put((byte) VERSION).put((byte) type).putShort((short) flags).putInt(entries).putInt(parts)
        .putLong(seq).putLong(uid).putLong(memId).putLong(accessKey).putLong(baseAddress).putLong(payloadBytes);
  }

  static void putResponse(ByteBuffer b, int type, int status, long seq, long payloadBytes) {
    b.clear();
    appendResponse(b, type, status, seq, payloadBytes);
  }

  /** {@link #putResponse} at {@code b}'s position, after responses already there. */
  static void appendResponse(ByteBuffer b, int type, int status, long seq, long payloadBytes) {
    b.putInt(RESP_MAGIC).put((byte) VERSION).put((byte) type).put((byte) status).put((byte) 0)
        .putLong(seq).putLong(payloadBytes).putLong(0);
  }
}
