package org.mori4j.transport.rdma;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The RDMA backend's part of a memory descriptor: the region's rkey on each of the owner's devices, in the
 * owner's device order (a lane connected to the owner's device {@code d} uses rkey {@code d}). Read on the data
 * path without allocating. The initiator never trusts the caller's copy: it uses the rkeys that the region's
 * owner confirmed.
 */
public final class RdmaMemoryData {
  private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
  private static final byte VERSION = 1;

  private RdmaMemoryData() {}

  public static byte[] encode(int[] rkeys) {
    byte[] b = new byte[2 + 4 * rkeys.length];
    b[0] = VERSION;
    b[1] = (byte) rkeys.length;
    for (int i = 0; i < rkeys.length; i++) INT.set(b, 2 + 4 * i, rkeys[i]);
    return b;
  }

  /** Whether {@code data} is well formed RDMA data with at least one rkey. */
  public static boolean valid(byte[] data) {
    return data != null && data.length >= 6 && data[0] == VERSION && (data[1] & 0xff) >= 1 && data.length == 2 + 4 * (data[1] & 0xff);
  }

  public static int devices(byte[] data) {
    return data[1] & 0xff;
  }

  public static int rkey(byte[] data, int device) {
    return (int) INT.get(data, 2 + 4 * device);
  }
}
