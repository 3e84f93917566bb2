package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.mori4j.natives.verbs.WorkRequestLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.mori4j.natives.NativeException;

/**
 * A reusable array of {@code struct ibv_wc} that {@link VerbsCompletionQueue#poll} fills, read in place
 * (a flyweight: no object per completion). Index {@code i} is valid up to the count the last poll returned.
 */
public final class WorkCompletions {
  /** {@code imm_data} is {@code __be32}: network order on the wire and in the struct. */
  private static final ValueLayout.OfInt NETWORK_INT = JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN);

  private final MemorySegment wcs;
  private final int capacity;

  /** {@code capacity} completions, allocated in {@code arena}. */
  public WorkCompletions(Arena arena, int capacity) {
    if (capacity <= 0) throw new IllegalArgumentException("capacity must be positive: " + capacity);
    this.wcs = arena.allocate(IBV_WC, capacity);
    this.capacity = capacity;
  }

  public int capacity() {
    return capacity;
  }

  /** The native array, for {@code ibv_poll_cq}. */
  public MemorySegment segment() {
    return wcs;
  }

  public long wrId(int i) {
    return wcs.get(JAVA_LONG, at(i) + WC_WR_ID);
  }

  /** {@code IBV_WC_SUCCESS} or an error status ({@link #statusString}). */
  public int status(int i) {
    return wcs.get(JAVA_INT, at(i) + WC_STATUS);
  }

  public boolean succeeded(int i) {
    return status(i) == VerbsConstants.IBV_WC_SUCCESS;
  }

  /** {@code IBV_WC_*} opcode; receive completions have {@code IBV_WC_RECV} set. */
  public int opcode(int i) {
    return wcs.get(JAVA_INT, at(i) + WC_OPCODE);
  }

  public int vendorError(int i) {
    return wcs.get(JAVA_INT, at(i) + WC_VENDOR_ERR);
  }

  /** Bytes received (receive completions only). */
  public int byteLength(int i) {
    return wcs.get(JAVA_INT, at(i) + WC_BYTE_LEN);
  }

  /** The immediate value in host order, as the sender passed it (valid when {@link #hasImmediate}). */
  public int immediate(int i) {
    return wcs.get(NETWORK_INT, at(i) + WC_IMM_DATA);
  }

  public boolean hasImmediate(int i) {
    return (flags(i) & VerbsConstants.IBV_WC_WITH_IMM) != 0;
  }

  public int qpNumber(int i) {
    return wcs.get(JAVA_INT, at(i) + WC_QP_NUM);
  }

  /** {@code IBV_WC_GRH}, {@code IBV_WC_WITH_IMM}, ... */
  public int flags(int i) {
    return wcs.get(JAVA_INT, at(i) + WC_FLAGS);
  }

  /** {@code ibv_wc_status_str} of completion {@code i}. */
  public String statusString(int i) {
    return IbVerbs.wcStatusStr(status(i));
  }

  /** The exception for a failed completion: work request id, status, its string and the vendor error. */
  public NativeException failure(int i) {
    int status = status(i);
    String text = IbVerbs.wcStatusStr(status);
    return new NativeException(IbVerbs.LIBRARY, status, text, "work request " + wrId(i) + " completed with "
        + text + " (status " + status + ", vendor error 0x" + Integer.toHexString(vendorError(i)) + ")");
  }

  private long at(int i) {
    return IBV_WC.byteSize() * i;
  }
}
