package org.mori4j.transport.rdma.verbs;

import static org.mori4j.natives.verbs.VerbsConstants.*;

/**
 * A reusable array of work completions ({@code struct ibv_wc}) that {@link CompletionQueue#poll} fills from
 * index 0, as parallel primitive arrays (no allocation per completion).
 */
public final class Completions {
  private final long[] wrId;
  private final int[] status;
  private final int[] opcode;
  private final int[] byteLength;
  private final int[] immediate;
  private final int[] qpNumber;
  private final int[] wcFlags;
  private final int[] vendorError;

  public Completions(int capacity) {
    if (capacity < 1) throw new IllegalArgumentException("capacity must be >= 1: " + capacity);
    wrId = new long[capacity];
    status = new int[capacity];
    opcode = new int[capacity];
    byteLength = new int[capacity];
    immediate = new int[capacity];
    qpNumber = new int[capacity];
    wcFlags = new int[capacity];
    vendorError = new int[capacity];
  }

  public int capacity() {
    return wrId.length;
  }

  /** Providers fill entry {@code i}. */
  public void set(int i, long wrId, int status, int opcode, int byteLength, int immediate, int qpNumber, int wcFlags, int vendorError) {
    this.wrId[i] = wrId;
    this.status[i] = status;
    this.opcode[i] = opcode;
    this.byteLength[i] = byteLength;
    this.immediate[i] = immediate;
    this.qpNumber[i] = qpNumber;
    this.wcFlags[i] = wcFlags;
    this.vendorError[i] = vendorError;
  }

  public long wrId(int i) { return wrId[i]; }
  /** {@code IBV_WC_*} status. */
  public int status(int i) { return status[i]; }
  public boolean succeeded(int i) { return status[i] == IBV_WC_SUCCESS; }
  /** {@code IBV_WC_*} opcode; receive completions have {@code IBV_WC_RECV} set. */
  public int opcode(int i) { return opcode[i]; }
  public int byteLength(int i) { return byteLength[i]; }
  public int immediate(int i) { return immediate[i]; }
  public boolean hasImmediate(int i) { return (wcFlags[i] & IBV_WC_WITH_IMM) != 0; }
  public int qpNumber(int i) { return qpNumber[i]; }
  public int wcFlags(int i) { return wcFlags[i]; }
  public int vendorError(int i) { return vendorError[i]; }

  /** The status's name as {@code ibv_wc_status_str} and the enum spell it: {@code IBV_WC_REM_ACCESS_ERR (remote access error)}. */
  public static String statusName(int status) {
    return WcStatus.name(status);
  }
}
