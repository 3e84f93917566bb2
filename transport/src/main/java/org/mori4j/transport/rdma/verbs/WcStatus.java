package org.mori4j.transport.rdma.verbs;

import static org.mori4j.natives.verbs.VerbsConstants.*;

/**
 * Names of work-completion statuses as the enum ({@code IBV_WC_REM_ACCESS_ERR}) and {@code ibv_wc_status_str}
 * ({@code remote access error}) spell them, without loading libibverbs: error messages name both.
 */
public final class WcStatus {
  private WcStatus() {}

  public static String name(int status) {
    return switch (status) {
      case IBV_WC_SUCCESS -> "IBV_WC_SUCCESS (success)";
      case IBV_WC_LOC_LEN_ERR -> "IBV_WC_LOC_LEN_ERR (local length error)";
      case IBV_WC_LOC_QP_OP_ERR -> "IBV_WC_LOC_QP_OP_ERR (local QP operation error)";
      case IBV_WC_LOC_PROT_ERR -> "IBV_WC_LOC_PROT_ERR (local protection error)";
      case IBV_WC_WR_FLUSH_ERR -> "IBV_WC_WR_FLUSH_ERR (Work Request Flushed Error)";
      case IBV_WC_REM_INV_REQ_ERR -> "IBV_WC_REM_INV_REQ_ERR (invalid request error)";
      case IBV_WC_REM_ACCESS_ERR -> "IBV_WC_REM_ACCESS_ERR (remote access error)";
      case IBV_WC_REM_OP_ERR -> "IBV_WC_REM_OP_ERR (remote operation error)";
      case IBV_WC_RETRY_EXC_ERR -> "IBV_WC_RETRY_EXC_ERR (transport retry counter exceeded)";
      case IBV_WC_RNR_RETRY_EXC_ERR -> "IBV_WC_RNR_RETRY_EXC_ERR (RNR retry counter exceeded)";
      case IBV_WC_GENERAL_ERR -> "IBV_WC_GENERAL_ERR (general error)";
      default -> "IBV_WC status " + status;
    };
  }
}
