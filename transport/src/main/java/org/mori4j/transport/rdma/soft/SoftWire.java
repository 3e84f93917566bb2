package org.mori4j.transport.rdma.soft;

import java.nio.ByteBuffer;

/**
 * The software provider's wire, one TCP connection per requesting queue pair toward its remote queue pair:
 * requests flow from the requester, responses back on the same connection, both in order. All fields are
 * little-endian. A connection opens with a 24-byte hello; then
 * <pre>
 * request  (32 bytes): op u8 | flags u8 | 0 u16 | psn u32 | remote address u64 | rkey u32 | length u32 | immediate u32 | 0 u32
 *                      followed by length payload bytes for WRITE, WRITE_WITH_IMM and SEND
 * response (16 bytes): type u8 | aux u8 | 0 u16 | psn u32 | length u32 | 0 u32
 *                      followed by length payload bytes for READ_DATA
 * </pre>
 * PSNs are 24-bit as on InfiniBand: the requester numbers its requests from its RTS send PSN, the responder
 * expects them from its RTR receive PSN and drops any other. An ACK acknowledges every request up to its PSN
 * (responders coalesce them); READ_DATA and every NAK implicitly acknowledge the requests before theirs.
 */
final class SoftWire {
  private SoftWire() {}

  static final int MAGIC = 0x4d445253; // "SRDM" read little-endian
  static final short VERSION = 1;
  static final int HELLO_BYTES = 24;
  static final int REQUEST_BYTES = 32;
  static final int RESPONSE_BYTES = 16;
  static final int PSN_MASK = 0xffffff;

  // request ops
  static final byte OP_WRITE = 1;
  static final byte OP_WRITE_IMM = 2;
  static final byte OP_READ = 3;
  static final byte OP_SEND = 4;
  static final int FLAG_SOLICITED = 1;

  // response types
  static final byte ACK = 1;
  static final byte READ_DATA = 2;
  /** Receiver not ready: no receive posted for a SEND or WRITE_WITH_IMM; aux is the responder's min RNR timer. */
  static final byte NAK_RNR = 3;
  /** rkey, access flag or bounds violation: {@code IBV_WC_REM_ACCESS_ERR}. */
  static final byte NAK_ACCESS = 4;
  /** Invalid request (SEND longer than the receive, op not enabled on the QP): {@code IBV_WC_REM_INV_REQ_ERR}. */
  static final byte NAK_INVALID = 5;
  /** The responder failed locally (bad receive buffer, GPU copy): {@code IBV_WC_REM_OP_ERR}. */
  static final byte NAK_REMOTE_OP = 6;
  /**
   * The responder QP was not in RTR/RTS and dropped the request and everything behind it. A NIC says nothing
   * and the requester's ACK timer fires; this notice lets the requester start that same timer without guessing
   * which requests were lost, so the retransmission (after the ACK timeout, counted against retry_cnt) never
   * duplicates one.
   */
  static final byte DROPPED = 7;

  static boolean hasRequestPayload(int op) {
    return op == OP_WRITE || op == OP_WRITE_IMM || op == OP_SEND;
  }

  static void putHello(ByteBuffer b, int srcQpn, int dstQpn) {
    b.putInt(MAGIC).putShort(VERSION).putShort((short) 0).putInt(srcQpn).putInt(dstQpn).putLong(0);
  }

  static void putRequest(ByteBuffer b, int op, int flags, int psn, long remoteAddress, int rkey, int length, int imm) {
    b.put((byte) op).put((byte) flags).putShort((short) 0).putInt(psn).putLong(remoteAddress).putInt(rkey)
        .putInt(length).putInt(imm).putInt(0);
  }

  static void putResponse(ByteBuffer b, int type, int aux, int psn, int length) {
    b.put((byte) type).put((byte) aux).putShort((short) 0).putInt(psn).putInt(length).putInt(0);
  }

  /** The sequence number of {@code psn}, given that {@code refSeq} has PSN {@code refPsn} and they lie within 2^23. */
  static long seqOf(int psn, long refSeq, int refPsn) {
    int delta = ((psn - refPsn) << 8) >> 8; // sign-extend the 24-bit difference
    return refSeq + delta;
  }

  /** 4.096 us x 2^timeout: the local ACK timeout of {@code ibv_qp_attr.timeout} (0 means infinite: -1 here). */
  static long ackTimeoutNanos(int timeout) {
    return timeout == 0 ? -1 : 4096L << timeout;
  }

  private static final int[] RNR_TENS_OF_MICROS = {
      65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
      256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152};

  /** The delay an RNR NAK with timer code {@code code} asks for (IB's table: 1 = 0.01 ms ... 31 = 491.52 ms, 0 = 655.36 ms). */
  static long rnrDelayNanos(int code) {
    return RNR_TENS_OF_MICROS[code & 31] * 10_000L;
  }
}
