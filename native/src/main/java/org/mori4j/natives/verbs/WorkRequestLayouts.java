package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.mori4j.natives.verbs.CLayout.offset;
import static org.mori4j.natives.verbs.CLayout.struct;
import static org.mori4j.natives.verbs.CLayout.union;
import static org.mori4j.natives.verbs.CLayout.bytes;
import static org.mori4j.natives.verbs.CLayout.concat;
import static org.mori4j.natives.verbs.CLayout.ints;
import static org.mori4j.natives.verbs.CLayout.shorts;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.util.List;

/**
 * The data-path structs of {@code <infiniband/verbs.h>}: scatter/gather entries, send and receive work
 * requests and work completions, as FFM layouts with the offsets {@link SendWorkRequests},
 * {@link ReceiveWorkRequests} and {@link WorkCompletions} write and read in place. Checked field by field
 * against the header by {@code VerbsAbiConformanceTest}.
 */
public final class WorkRequestLayouts {
  private WorkRequestLayouts() {}

  public static final StructLayout IBV_SGE = struct("ibv_sge", JAVA_LONG.withName("addr"),
      JAVA_INT.withName("length"), JAVA_INT.withName("lkey"));

  private static final MemoryLayout MW_BIND_INFO = struct("bind_info", ADDRESS.withName("mr"),
      JAVA_LONG.withName("addr"), JAVA_LONG.withName("length"), JAVA_INT.withName("mw_access_flags"));

  /**
   * {@code ibv_send_wr}, its unions included whole so the size matches: the header's two anonymous unions
   * ({@code imm_data}/{@code invalidate_rkey} and {@code bind_mw}/{@code tso}) are named {@code $anon...}.
   */
  public static final StructLayout IBV_SEND_WR = struct("ibv_send_wr",
      JAVA_LONG.withName("wr_id"), ADDRESS.withName("next"), ADDRESS.withName("sg_list"),
      JAVA_INT.withName("num_sge"), JAVA_INT.withName("opcode"), JAVA_INT.withName("send_flags"),
      union("$anon_imm", JAVA_INT.withName("imm_data"), JAVA_INT.withName("invalidate_rkey")),
      union("wr",
          struct("rdma", JAVA_LONG.withName("remote_addr"), JAVA_INT.withName("rkey")),
          struct("atomic", JAVA_LONG.withName("remote_addr"), JAVA_LONG.withName("compare_add"),
              JAVA_LONG.withName("swap"), JAVA_INT.withName("rkey")),
          struct("ud", ADDRESS.withName("ah"), JAVA_INT.withName("remote_qpn"), JAVA_INT.withName("remote_qkey"))),
      union("qp_type", struct("xrc", JAVA_INT.withName("remote_srqn"))),
      union("$anon_bind_tso",
          struct("bind_mw", ADDRESS.withName("mw"), JAVA_INT.withName("rkey"), MW_BIND_INFO),
          struct("tso", ADDRESS.withName("hdr"), JAVA_SHORT.withName("hdr_sz"), JAVA_SHORT.withName("mss"))));

  public static final StructLayout IBV_RECV_WR = struct("ibv_recv_wr", JAVA_LONG.withName("wr_id"),
      ADDRESS.withName("next"), ADDRESS.withName("sg_list"), JAVA_INT.withName("num_sge"));

  /** {@code ibv_wc}; its anonymous {@code imm_data}/{@code invalidated_rkey} union is {@code $anon_imm}. */
  public static final StructLayout IBV_WC = struct("ibv_wc", concat(
      new MemoryLayout[] {JAVA_LONG.withName("wr_id")},
      ints("status", "opcode", "vendor_err", "byte_len"),
      new MemoryLayout[] {union("$anon_imm", JAVA_INT.withName("imm_data"), JAVA_INT.withName("invalidated_rkey"))},
      ints("qp_num", "src_qp", "wc_flags"),
      shorts("pkey_index", "slid"),
      bytes("sl", "dlid_path_bits")));

  /** Every layout above, for the conformance test. */
  public static final List<MemoryLayout> ALL = List.of(IBV_SGE, IBV_SEND_WR, IBV_RECV_WR, IBV_WC);

  static final long SGE_ADDR = offset(IBV_SGE, "addr");
  static final long SGE_LENGTH = offset(IBV_SGE, "length");
  static final long SGE_LKEY = offset(IBV_SGE, "lkey");

  static final long SEND_WR_ID = offset(IBV_SEND_WR, "wr_id");
  static final long SEND_NEXT = offset(IBV_SEND_WR, "next");
  static final long SEND_SG_LIST = offset(IBV_SEND_WR, "sg_list");
  static final long SEND_NUM_SGE = offset(IBV_SEND_WR, "num_sge");
  static final long SEND_OPCODE = offset(IBV_SEND_WR, "opcode");
  static final long SEND_FLAGS = offset(IBV_SEND_WR, "send_flags");
  static final long SEND_IMM_DATA = offset(IBV_SEND_WR, "$anon_imm.imm_data");
  static final long SEND_RDMA_REMOTE_ADDR = offset(IBV_SEND_WR, "wr.rdma.remote_addr");
  static final long SEND_RDMA_RKEY = offset(IBV_SEND_WR, "wr.rdma.rkey");

  static final long RECV_WR_ID = offset(IBV_RECV_WR, "wr_id");
  static final long RECV_NEXT = offset(IBV_RECV_WR, "next");
  static final long RECV_SG_LIST = offset(IBV_RECV_WR, "sg_list");
  static final long RECV_NUM_SGE = offset(IBV_RECV_WR, "num_sge");

  static final long WC_WR_ID = offset(IBV_WC, "wr_id");
  static final long WC_STATUS = offset(IBV_WC, "status");
  static final long WC_OPCODE = offset(IBV_WC, "opcode");
  static final long WC_VENDOR_ERR = offset(IBV_WC, "vendor_err");
  static final long WC_BYTE_LEN = offset(IBV_WC, "byte_len");
  static final long WC_IMM_DATA = offset(IBV_WC, "$anon_imm.imm_data");
  static final long WC_QP_NUM = offset(IBV_WC, "qp_num");
  static final long WC_FLAGS = offset(IBV_WC, "wc_flags");
}
