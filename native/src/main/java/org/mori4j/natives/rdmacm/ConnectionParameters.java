package org.mori4j.natives.rdmacm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.mori4j.natives.rdmacm.RdmaCmLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * What {@code rdma_connect} and {@code rdma_accept} negotiate ({@code struct rdma_conn_param}), and what a
 * connect request, an established connection or a rejection reports back. Private data is how peers trade
 * a few bytes (a memory descriptor, a session token) inside the CM handshake itself; the CM caps it by
 * message (56 bytes on connect, 196 on accept in the TCP port space), and the C length is one byte, so we
 * refuse more than 255 here and let librdmacm refuse the rest with {@code EINVAL}.
 * {@code srq} and {@code qpNumber} matter only when the id has no QP of its own.
 */
public record ConnectionParameters(byte[] privateData, int responderResources, int initiatorDepth, int flowControl,
    int retryCount, int rnrRetryCount, boolean srq, int qpNumber) {

  public ConnectionParameters {
    privateData = privateData == null ? new byte[0] : privateData.clone();
    if (privateData.length > 255) {
      throw new IllegalArgumentException("CM private data is at most 255 bytes, not " + privateData.length);
    }
    requireByte("responderResources", responderResources);
    requireByte("initiatorDepth", initiatorDepth);
    requireByte("flowControl", flowControl);
    requireByte("retryCount", retryCount);
    requireByte("rnrRetryCount", rnrRetryCount);
  }

  /**
   * One outstanding RDMA read each way, and the retry counts MORI and perftest use: 7 transport retries,
   * 7 (infinite) RNR retries.
   */
  public static ConnectionParameters defaults(byte[] privateData) {
    return new ConnectionParameters(privateData, 1, 1, 0, 7, 7, false, 0);
  }

  @Override
  public byte[] privateData() {
    return privateData.clone();
  }

  /** Writes a {@code struct rdma_conn_param} (and a copy of the private data) into {@code arena}. */
  MemorySegment write(Arena arena) {
    MemorySegment p = arena.allocate(RDMA_CONN_PARAM);
    if (privateData.length > 0) {
      p.set(ADDRESS, CONN_PRIVATE_DATA, arena.allocateFrom(JAVA_BYTE, privateData));
    }
    p.set(JAVA_BYTE, CONN_PRIVATE_DATA_LEN, (byte) privateData.length);
    p.set(JAVA_BYTE, CONN_RESPONDER_RESOURCES, (byte) responderResources);
    p.set(JAVA_BYTE, CONN_INITIATOR_DEPTH, (byte) initiatorDepth);
    p.set(JAVA_BYTE, CONN_FLOW_CONTROL, (byte) flowControl);
    p.set(JAVA_BYTE, CONN_RETRY_COUNT, (byte) retryCount);
    p.set(JAVA_BYTE, CONN_RNR_RETRY_COUNT, (byte) rnrRetryCount);
    p.set(JAVA_BYTE, CONN_SRQ, (byte) (srq ? 1 : 0));
    p.set(JAVA_INT, CONN_QP_NUM, qpNumber);
    return p;
  }

  /** Copies a {@code struct rdma_conn_param}; the private data is copied too (it dies with the event's ack). */
  static ConnectionParameters read(MemorySegment param) {
    MemorySegment p = param.reinterpret(RDMA_CONN_PARAM.byteSize());
    int length = Byte.toUnsignedInt(p.get(JAVA_BYTE, CONN_PRIVATE_DATA_LEN));
    MemorySegment data = p.get(ADDRESS, CONN_PRIVATE_DATA);
    byte[] copy = data.equals(MemorySegment.NULL) ? new byte[0] : data.reinterpret(length).toArray(JAVA_BYTE);
    return new ConnectionParameters(copy, unsigned(p, CONN_RESPONDER_RESOURCES), unsigned(p, CONN_INITIATOR_DEPTH),
        unsigned(p, CONN_FLOW_CONTROL), unsigned(p, CONN_RETRY_COUNT), unsigned(p, CONN_RNR_RETRY_COUNT),
        p.get(JAVA_BYTE, CONN_SRQ) != 0, p.get(JAVA_INT, CONN_QP_NUM));
  }

  private static int unsigned(MemorySegment p, long offset) {
    return Byte.toUnsignedInt(p.get(JAVA_BYTE, offset));
  }

  private static void requireByte(String name, int value) {
    if (value < 0 || value > 255) throw new IllegalArgumentException(name + " is a uint8_t: 0..255, not " + value);
  }
}
