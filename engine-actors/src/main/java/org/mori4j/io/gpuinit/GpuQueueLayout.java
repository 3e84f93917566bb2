package org.mori4j.io.gpuinit;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The byte layout of a GPU-initiated endpoint's memory, shared by the host proxy (this package) and the device
 * library ({@code mori_rdma.cuh}, structs {@code MoriRdmaEndpoint}, {@code MoriRdmaWqe}, {@code MoriRdmaCqe},
 * {@code MoriRdmaRecvWqe}): every offset, size, opcode, flag, status and state value lives here and nowhere else
 * on the Java side. Little-endian. An endpoint block is the control block ({@link #CTRL_BYTES}, 64-byte aligned)
 * followed by the send ring (sqDepth x {@link #WQE_BYTES}), the completion ring (cqDepth x {@link #CQE_BYTES}),
 * the receive ring (rqDepth x {@link #RECV_WQE_BYTES}) and the atomic result cells (sqDepth x 8 bytes), in one
 * allocation. Counters written by the device and by the proxy each sit on their own 64-byte line where the table
 * allows, so the two sides do not share cache lines they both write. {@link #cNames()} maps the C spelling of
 * each constant ({@code offsetof(MoriRdmaEndpoint, sqPostIdx)}) to its value, for the gcc test that compares the
 * CUDA header with this class. engine-actors/docs/gpu-initiated.md, "GPU-initiated transfers", has the tables.
 */
public final class GpuQueueLayout {
  private GpuQueueLayout() {}

  /** {@code "MREP"} as little-endian bytes 'M','R','E','P'. */
  public static final int MAGIC = 0x5045524D;
  public static final int VERSION = 1;

  // ---- control block MoriRdmaEndpoint ----
  public static final int CTRL_BYTES = 1024;
  public static final int CTRL_ALIGN = 64;
  public static final int CTRL_MAGIC = 0;
  public static final int CTRL_VERSION = 4;
  public static final int CTRL_QPN = 8;
  public static final int CTRL_SQ_DEPTH = 12;
  public static final int CTRL_CQ_DEPTH = 16;
  public static final int CTRL_RQ_DEPTH = 20;
  public static final int CTRL_INTERNAL_LKEY = 24;
  public static final int CTRL_RESERVED0 = 28;
  public static final int CTRL_SQ_RING = 32;
  public static final int CTRL_CQ_RING = 40;
  public static final int CTRL_RQ_RING = 48;
  public static final int CTRL_ATOMIC_RESULTS = 56;
  /** Device: next WQE index to reserve (atomicAdd). */
  public static final int CTRL_SQ_POST_IDX = 64;
  public static final int CTRL_WAIT_TIMEOUT_NS = 72;
  /** Device: WQEs [0, v) are fully written. */
  public static final int CTRL_SQ_DBR_RECORD = 128;
  /** Device: the index to process up to (monotonic max). */
  public static final int CTRL_SQ_DOORBELL = 192;
  /** Device: CQEs [0, v) consumed. */
  public static final int CTRL_CQ_DBR_RECORD = 256;
  /** Device-private: the poller's next CQE index. */
  public static final int CTRL_CQ_POLL_IDX = 264;
  /** Proxy: WQEs [0, v) executed and completed; their slots may be reused. */
  public static final int CTRL_SQ_RETIRED = 320;
  /** Proxy: CQEs [0, v) written. */
  public static final int CTRL_CQ_PRODUCER_IDX = 384;
  public static final int CTRL_ERROR_COUNT = 448;
  public static final int CTRL_FIRST_ERROR_STATUS = 452;
  public static final int CTRL_FIRST_ERROR_WR_ID = 456;
  public static final int CTRL_STATE = 464;
  /** Device: next receive WQE index to reserve. */
  public static final int CTRL_RQ_POST_IDX = 512;
  /** Device: receive WQEs [0, v) written. */
  public static final int CTRL_RQ_DBR_RECORD = 576;
  /** Proxy: receive WQEs consumed by incoming SEND / WRITE_WITH_IMM. */
  public static final int CTRL_RQ_RETIRED = 640;

  // ---- send WQE MoriRdmaWqe ----
  public static final int WQE_BYTES = 64;
  public static final int WQE_OPCODE = 0;
  public static final int WQE_FLAGS = 1;
  public static final int WQE_RESERVED0 = 2;
  public static final int WQE_IMMEDIATE = 4;
  public static final int WQE_WR_ID = 8;
  public static final int WQE_LOCAL_ADDR = 16;
  public static final int WQE_LKEY = 24;
  public static final int WQE_LENGTH = 28;
  public static final int WQE_REMOTE_ADDR = 32;
  public static final int WQE_RKEY = 40;
  public static final int WQE_RESERVED1 = 44;
  public static final int WQE_COMPARE_ADD = 48;
  public static final int WQE_SWAP = 56;

  // ---- completion MoriRdmaCqe ----
  public static final int CQE_BYTES = 32;
  public static final int CQE_WR_ID = 0;
  public static final int CQE_STATUS = 8;
  public static final int CQE_OPCODE = 12;
  public static final int CQE_FLAGS = 13;
  public static final int CQE_RESERVED0 = 14;
  public static final int CQE_BYTE_LEN = 16;
  public static final int CQE_IMMEDIATE = 20;
  public static final int CQE_WQE_INDEX = 24;
  /** (uint32)(cqIndex + 1), stored last with release ordering. */
  public static final int CQE_OWNER = 28;
  /** CQE flags bit 0: the immediate field is valid. */
  public static final int CQE_FLAG_HAS_IMM = 1;

  // ---- receive WQE MoriRdmaRecvWqe ----
  public static final int RECV_WQE_BYTES = 32;
  public static final int RECV_WR_ID = 0;
  public static final int RECV_ADDR = 8;
  public static final int RECV_LKEY = 16;
  public static final int RECV_LENGTH = 20;
  public static final int RECV_RESERVED0 = 24;

  public static final int ATOMIC_RESULT_BYTES = 8;

  // ---- ibv_wr_opcode ----
  public static final int OP_RDMA_WRITE = 0;
  public static final int OP_RDMA_WRITE_WITH_IMM = 1;
  public static final int OP_SEND = 2;
  public static final int OP_RDMA_READ = 4;
  public static final int OP_ATOMIC_CMP_AND_SWP = 5;
  public static final int OP_ATOMIC_FETCH_AND_ADD = 6;

  // ---- ibv_send_flags ----
  public static final int FLAG_FENCE = 1;
  public static final int FLAG_SIGNALED = 2;
  /** Accepted and ignored (no solicited events here). */
  public static final int FLAG_SOLICITED = 4;
  /** Accepted and ignored (the proxy reads the payload from memory either way). */
  public static final int FLAG_INLINE = 8;

  // ---- ibv_wc_status ----
  public static final int WC_SUCCESS = 0;
  public static final int WC_LOC_LEN_ERR = 1;
  public static final int WC_LOC_PROT_ERR = 4;
  public static final int WC_WR_FLUSH_ERR = 5;
  public static final int WC_REM_INV_REQ_ERR = 9;
  public static final int WC_REM_ACCESS_ERR = 10;
  public static final int WC_REM_OP_ERR = 11;
  public static final int WC_RETRY_EXC_ERR = 12;
  public static final int WC_RNR_RETRY_EXC_ERR = 13;
  public static final int WC_GENERAL_ERR = 21;

  // ---- ibv_wc_opcode ----
  public static final int WC_OP_SEND = 0;
  public static final int WC_OP_RDMA_WRITE = 1;
  public static final int WC_OP_RDMA_READ = 2;
  public static final int WC_OP_COMP_SWAP = 3;
  public static final int WC_OP_FETCH_ADD = 4;
  public static final int WC_OP_RECV = 128;
  public static final int WC_OP_RECV_RDMA_WITH_IMM = 129;

  // ---- endpoint state ----
  public static final int STATE_RESET = 0;
  public static final int STATE_RTS = 1;
  public static final int STATE_ERROR = 2;

  // ---- ibv_access_flags ----
  public static final int ACCESS_LOCAL_WRITE = 1;
  public static final int ACCESS_REMOTE_WRITE = 2;
  public static final int ACCESS_REMOTE_READ = 4;
  public static final int ACCESS_REMOTE_ATOMIC = 8;
  public static final int ACCESS_ALL = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC;

  /** Largest SEND payload. */
  public static final int MAX_SEND_BYTES = 64 * 1024;

  /** Offset of the send ring in an endpoint block. */
  public static long sqRingOffset() {
    return CTRL_BYTES;
  }

  public static long cqRingOffset(int sqDepth) {
    return sqRingOffset() + (long) sqDepth * WQE_BYTES;
  }

  public static long rqRingOffset(int sqDepth, int cqDepth) {
    return cqRingOffset(sqDepth) + (long) cqDepth * CQE_BYTES;
  }

  public static long atomicResultsOffset(int sqDepth, int cqDepth, int rqDepth) {
    return rqRingOffset(sqDepth, cqDepth) + (long) rqDepth * RECV_WQE_BYTES;
  }

  /** Bytes of a whole endpoint block of these depths. */
  public static long blockBytes(int sqDepth, int cqDepth, int rqDepth) {
    return atomicResultsOffset(sqDepth, cqDepth, rqDepth) + (long) sqDepth * ATOMIC_RESULT_BYTES;
  }

  /** ibv_wc_status name of {@code status} ({@code "WC_12"} for one this layout does not name). */
  public static String statusName(int status) {
    return switch (status) {
      case WC_SUCCESS -> "SUCCESS";
      case WC_LOC_LEN_ERR -> "LOC_LEN_ERR";
      case WC_LOC_PROT_ERR -> "LOC_PROT_ERR";
      case WC_WR_FLUSH_ERR -> "WR_FLUSH_ERR";
      case WC_REM_INV_REQ_ERR -> "REM_INV_REQ_ERR";
      case WC_REM_ACCESS_ERR -> "REM_ACCESS_ERR";
      case WC_REM_OP_ERR -> "REM_OP_ERR";
      case WC_RETRY_EXC_ERR -> "RETRY_EXC_ERR";
      case WC_RNR_RETRY_EXC_ERR -> "RNR_RETRY_EXC_ERR";
      case WC_GENERAL_ERR -> "GENERAL_ERR";
      default -> "WC_" + status;
    };
  }

  /**
   * Every constant under its C spelling: {@code offsetof(MoriRdmaEndpoint, field)}, {@code sizeof(MoriRdmaWqe)},
   * {@code MORI_RDMA_OP_RDMA_WRITE} and so on, in declaration order. The device library's layout test compiles
   * the header with gcc and compares each against this map.
   */
  public static Map<String, Long> cNames() {
    Map<String, Long> m = new LinkedHashMap<>();
    String ep = "MoriRdmaEndpoint";
    m.put("sizeof(" + ep + ")", (long) CTRL_BYTES);
    m.put("alignof(" + ep + ")", (long) CTRL_ALIGN);
    off(m, ep, "magic", CTRL_MAGIC);
    off(m, ep, "version", CTRL_VERSION);
    off(m, ep, "qpn", CTRL_QPN);
    off(m, ep, "sqDepth", CTRL_SQ_DEPTH);
    off(m, ep, "cqDepth", CTRL_CQ_DEPTH);
    off(m, ep, "rqDepth", CTRL_RQ_DEPTH);
    off(m, ep, "internalLkey", CTRL_INTERNAL_LKEY);
    off(m, ep, "sqRing", CTRL_SQ_RING);
    off(m, ep, "cqRing", CTRL_CQ_RING);
    off(m, ep, "rqRing", CTRL_RQ_RING);
    off(m, ep, "atomicResults", CTRL_ATOMIC_RESULTS);
    off(m, ep, "sqPostIdx", CTRL_SQ_POST_IDX);
    off(m, ep, "waitTimeoutNs", CTRL_WAIT_TIMEOUT_NS);
    off(m, ep, "sqDbrRecord", CTRL_SQ_DBR_RECORD);
    off(m, ep, "sqDoorbell", CTRL_SQ_DOORBELL);
    off(m, ep, "cqDbrRecord", CTRL_CQ_DBR_RECORD);
    off(m, ep, "cqPollIdx", CTRL_CQ_POLL_IDX);
    off(m, ep, "sqRetired", CTRL_SQ_RETIRED);
    off(m, ep, "cqProducerIdx", CTRL_CQ_PRODUCER_IDX);
    off(m, ep, "errorCount", CTRL_ERROR_COUNT);
    off(m, ep, "firstErrorStatus", CTRL_FIRST_ERROR_STATUS);
    off(m, ep, "firstErrorWrId", CTRL_FIRST_ERROR_WR_ID);
    off(m, ep, "state", CTRL_STATE);
    off(m, ep, "rqPostIdx", CTRL_RQ_POST_IDX);
    off(m, ep, "rqDbrRecord", CTRL_RQ_DBR_RECORD);
    off(m, ep, "rqRetired", CTRL_RQ_RETIRED);
    String w = "MoriRdmaWqe";
    m.put("sizeof(" + w + ")", (long) WQE_BYTES);
    off(m, w, "opcode", WQE_OPCODE);
    off(m, w, "flags", WQE_FLAGS);
    off(m, w, "immediate", WQE_IMMEDIATE);
    off(m, w, "wrId", WQE_WR_ID);
    off(m, w, "localAddr", WQE_LOCAL_ADDR);
    off(m, w, "lkey", WQE_LKEY);
    off(m, w, "length", WQE_LENGTH);
    off(m, w, "remoteAddr", WQE_REMOTE_ADDR);
    off(m, w, "rkey", WQE_RKEY);
    off(m, w, "compareAdd", WQE_COMPARE_ADD);
    off(m, w, "swap", WQE_SWAP);
    String c = "MoriRdmaCqe";
    m.put("sizeof(" + c + ")", (long) CQE_BYTES);
    off(m, c, "wrId", CQE_WR_ID);
    off(m, c, "status", CQE_STATUS);
    off(m, c, "opcode", CQE_OPCODE);
    off(m, c, "flags", CQE_FLAGS);
    off(m, c, "byteLen", CQE_BYTE_LEN);
    off(m, c, "immediate", CQE_IMMEDIATE);
    off(m, c, "wqeIndex", CQE_WQE_INDEX);
    off(m, c, "owner", CQE_OWNER);
    String r = "MoriRdmaRecvWqe";
    m.put("sizeof(" + r + ")", (long) RECV_WQE_BYTES);
    off(m, r, "wrId", RECV_WR_ID);
    off(m, r, "addr", RECV_ADDR);
    off(m, r, "lkey", RECV_LKEY);
    off(m, r, "length", RECV_LENGTH);
    m.put("MORI_RDMA_MAGIC", (long) MAGIC);
    m.put("MORI_RDMA_VERSION", (long) VERSION);
    m.put("MORI_RDMA_OP_RDMA_WRITE", (long) OP_RDMA_WRITE);
    m.put("MORI_RDMA_OP_RDMA_WRITE_WITH_IMM", (long) OP_RDMA_WRITE_WITH_IMM);
    m.put("MORI_RDMA_OP_SEND", (long) OP_SEND);
    m.put("MORI_RDMA_OP_RDMA_READ", (long) OP_RDMA_READ);
    m.put("MORI_RDMA_OP_ATOMIC_CMP_AND_SWP", (long) OP_ATOMIC_CMP_AND_SWP);
    m.put("MORI_RDMA_OP_ATOMIC_FETCH_AND_ADD", (long) OP_ATOMIC_FETCH_AND_ADD);
    m.put("MORI_RDMA_FLAG_FENCE", (long) FLAG_FENCE);
    m.put("MORI_RDMA_FLAG_SIGNALED", (long) FLAG_SIGNALED);
    m.put("MORI_RDMA_FLAG_SOLICITED", (long) FLAG_SOLICITED);
    m.put("MORI_RDMA_FLAG_INLINE", (long) FLAG_INLINE);
    m.put("MORI_RDMA_WC_SUCCESS", (long) WC_SUCCESS);
    m.put("MORI_RDMA_WC_LOC_LEN_ERR", (long) WC_LOC_LEN_ERR);
    m.put("MORI_RDMA_WC_LOC_PROT_ERR", (long) WC_LOC_PROT_ERR);
    m.put("MORI_RDMA_WC_WR_FLUSH_ERR", (long) WC_WR_FLUSH_ERR);
    m.put("MORI_RDMA_WC_REM_INV_REQ_ERR", (long) WC_REM_INV_REQ_ERR);
    m.put("MORI_RDMA_WC_REM_ACCESS_ERR", (long) WC_REM_ACCESS_ERR);
    m.put("MORI_RDMA_WC_REM_OP_ERR", (long) WC_REM_OP_ERR);
    m.put("MORI_RDMA_WC_RETRY_EXC_ERR", (long) WC_RETRY_EXC_ERR);
    m.put("MORI_RDMA_WC_RNR_RETRY_EXC_ERR", (long) WC_RNR_RETRY_EXC_ERR);
    m.put("MORI_RDMA_WC_GENERAL_ERR", (long) WC_GENERAL_ERR);
    m.put("MORI_RDMA_WC_OP_SEND", (long) WC_OP_SEND);
    m.put("MORI_RDMA_WC_OP_RDMA_WRITE", (long) WC_OP_RDMA_WRITE);
    m.put("MORI_RDMA_WC_OP_RDMA_READ", (long) WC_OP_RDMA_READ);
    m.put("MORI_RDMA_WC_OP_COMP_SWAP", (long) WC_OP_COMP_SWAP);
    m.put("MORI_RDMA_WC_OP_FETCH_ADD", (long) WC_OP_FETCH_ADD);
    m.put("MORI_RDMA_WC_OP_RECV", (long) WC_OP_RECV);
    m.put("MORI_RDMA_WC_OP_RECV_RDMA_WITH_IMM", (long) WC_OP_RECV_RDMA_WITH_IMM);
    m.put("MORI_RDMA_CQE_FLAG_HAS_IMM", (long) CQE_FLAG_HAS_IMM);
    m.put("MORI_RDMA_STATE_RESET", (long) STATE_RESET);
    m.put("MORI_RDMA_STATE_RTS", (long) STATE_RTS);
    m.put("MORI_RDMA_STATE_ERROR", (long) STATE_ERROR);
    return Collections.unmodifiableMap(m);
  }

  private static void off(Map<String, Long> m, String struct, String field, int offset) {
    m.put("offsetof(" + struct + ", " + field + ")", (long) offset);
  }
}
