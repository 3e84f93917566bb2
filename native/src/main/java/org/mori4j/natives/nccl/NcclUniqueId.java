package org.mori4j.natives.nccl;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * The 128 bytes of an {@code ncclUniqueId}: made by one rank with {@link Nccl#uniqueId()} and handed to every
 * rank out of band (a child process's argument, a cluster message), which all pass it to
 * {@link NcclCommunicator#initRank}. It carries the bootstrap address of the rank that made it, so it is only
 * good for one communicator's creation. Immutable: the bytes are copied in and out.
 */
public final class NcclUniqueId {
  /** {@code NCCL_UNIQUE_ID_BYTES}. */
  public static final int BYTES = 128;

  private final byte[] bytes;

  private NcclUniqueId(byte[] bytes) {
    this.bytes = bytes;
  }

  /** The id from its 128 bytes; any other length is refused, naming it. */
  public static NcclUniqueId of(byte[] bytes) {
    if (bytes == null || bytes.length != BYTES)
      throw new IllegalArgumentException("an NCCL unique id is " + BYTES + " bytes, got " + (bytes == null ? "null" : bytes.length));
    return new NcclUniqueId(bytes.clone());
  }

  /** The id from {@link #toHex()}'s text (how the bench passes it on a child's command line). */
  public static NcclUniqueId fromHex(String hex) {
    if (hex == null || hex.length() != 2 * BYTES)
      throw new IllegalArgumentException("an NCCL unique id is " + 2 * BYTES + " hex digits, got " + (hex == null ? "null" : hex.length() + ": '" + hex + "'"));
    try {
      return new NcclUniqueId(HexFormat.of().parseHex(hex));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("an NCCL unique id must be hex digits: '" + hex + "'", e);
    }
  }

  public byte[] bytes() {
    return bytes.clone();
  }

  public String toHex() {
    return HexFormat.of().formatHex(bytes);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof NcclUniqueId other && Arrays.equals(bytes, other.bytes);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(bytes);
  }

  @Override
  public String toString() {
    return "NcclUniqueId[" + toHex().substring(0, 16) + "...]";
  }
}
