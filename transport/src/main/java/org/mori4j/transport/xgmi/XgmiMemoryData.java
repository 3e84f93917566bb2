package org.mori4j.transport.xgmi;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Locale;

/**
 * What the XGMI backend adds to a GPU region's descriptor: the region's device (as its owner numbers it, and
 * where it sits on the PCI bus, which every process of the machine sees the same), where the region starts
 * inside its driver allocation, how big that allocation is, and the allocation's 64-byte IPC handle, with
 * which another process of the host maps it (absent when the driver cannot export the allocation, e.g.
 * memory from a pool or a virtual-memory reservation; such a region is reached by XGMI only from its own
 * process). A peer maps the whole allocation and addresses the region at its offset.
 *
 * <p>Fixed layout, big-endian, so the data path reads single fields in place without parsing or allocating:
 * version (1 byte), flags (1; bit 0: has an IPC handle), device (int), PCI location (long; see
 * {@link #pciLocation}), offset in allocation (long), allocation size (long), then the handle (64 bytes).
 */
public record XgmiMemoryData(int device, long pciLocation, long offsetInAllocation, long allocationSize, byte[] ipcHandle) {
  static final int VERSION = 1;
  static final int HANDLE_BYTES = 64;
  static final int HEADER_BYTES = 1 + 1 + 4 + 8 + 8 + 8;
  private static final int FLAG_HANDLE = 1;
  private static final int AT_FLAGS = 1, AT_DEVICE = 2, AT_PCI = 6, AT_OFFSET = 14, AT_ALLOCATION = 22;
  private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  public XgmiMemoryData {
    if (device < 0) throw new IllegalArgumentException("device must be >= 0: " + device);
    if (offsetInAllocation < 0 || allocationSize <= 0 || offsetInAllocation >= allocationSize)
      throw new IllegalArgumentException("offset " + offsetInAllocation + " must lie inside the allocation of " + allocationSize + " bytes");
    if (ipcHandle != null && ipcHandle.length != HANDLE_BYTES)
      throw new IllegalArgumentException("an IPC handle is " + HANDLE_BYTES + " bytes, not " + ipcHandle.length);
    ipcHandle = ipcHandle == null ? null : ipcHandle.clone();
  }

  @Override
  public byte[] ipcHandle() {
    return ipcHandle == null ? null : ipcHandle.clone();
  }

  public byte[] encode() {
    byte[] b = new byte[HEADER_BYTES + (ipcHandle == null ? 0 : HANDLE_BYTES)];
    b[0] = VERSION;
    b[AT_FLAGS] = (byte) (ipcHandle == null ? 0 : FLAG_HANDLE);
    INT.set(b, AT_DEVICE, device);
    LONG.set(b, AT_PCI, pciLocation);
    LONG.set(b, AT_OFFSET, offsetInAllocation);
    LONG.set(b, AT_ALLOCATION, allocationSize);
    if (ipcHandle != null) System.arraycopy(ipcHandle, 0, b, HEADER_BYTES, HANDLE_BYTES);
    return b;
  }

  /** Parses {@link #encode()}'s output; throws {@link IllegalArgumentException} naming what is wrong. */
  public static XgmiMemoryData decode(byte[] b) {
    String bad = check(b);
    if (bad != null) throw new IllegalArgumentException(bad);
    byte[] handle = (b[AT_FLAGS] & FLAG_HANDLE) != 0 ? Arrays.copyOfRange(b, HEADER_BYTES, HEADER_BYTES + HANDLE_BYTES) : null;
    return new XgmiMemoryData(device(b), pciLocation(b), (long) LONG.get(b, AT_OFFSET), (long) LONG.get(b, AT_ALLOCATION), handle);
  }

  /** Null when {@code b} is well-formed XGMI data, otherwise what is wrong with it. Allocates nothing when it is fine. */
  static String check(byte[] b) {
    if (b == null) return "no XGMI data";
    if (b.length < HEADER_BYTES) return "XGMI data of " + b.length + " bytes is too short";
    if (b[0] != VERSION) return "XGMI data version " + b[0] + " (this build reads " + VERSION + ")";
    int flags = b[AT_FLAGS];
    if ((flags & ~FLAG_HANDLE) != 0) return "XGMI data with unknown flags 0x" + Integer.toHexString(flags & 0xff);
    int expected = HEADER_BYTES + ((flags & FLAG_HANDLE) != 0 ? HANDLE_BYTES : 0);
    if (b.length != expected) return "XGMI data of " + b.length + " bytes, expected " + expected;
    long offset = (long) LONG.get(b, AT_OFFSET);
    long allocation = (long) LONG.get(b, AT_ALLOCATION);
    if (device(b) < 0 || offset < 0 || allocation <= 0 || offset >= allocation) return "XGMI data with a bad device, offset or allocation size";
    return null;
  }

  // in-place field reads for the data path (the array has passed check())
  static int device(byte[] b) { return (int) INT.get(b, AT_DEVICE); }
  static long pciLocation(byte[] b) { return (long) LONG.get(b, AT_PCI); }
  static boolean hasHandle(byte[] b) { return (b[AT_FLAGS] & FLAG_HANDLE) != 0; }

  /**
   * {@code "dddd:bb:dd"} (a runtime's {@code pciBusId}) as one number, {@code domain << 16 | bus << 8 | device},
   * so that the data path compares devices without strings; -1 when the text is not such a location.
   */
  public static long parsePciBusId(String busId) {
    if (busId == null) return -1;
    String[] p = busId.trim().toLowerCase(Locale.ROOT).split(":");
    if (p.length != 3) return -1;
    try {
      long domain = Long.parseLong(p[0], 16), bus = Long.parseLong(p[1], 16), dev = Long.parseLong(p[2].split("\\.")[0], 16);
      if (domain < 0 || domain > 0xffff_ffffL || bus > 0xff || dev > 0xff) return -1;
      return domain << 16 | bus << 8 | dev;
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof XgmiMemoryData d && device == d.device && pciLocation == d.pciLocation && offsetInAllocation == d.offsetInAllocation
        && allocationSize == d.allocationSize && Arrays.equals(ipcHandle, d.ipcHandle);
  }

  @Override
  public int hashCode() {
    return Long.hashCode(offsetInAllocation) * 31 + Arrays.hashCode(ipcHandle);
  }

  @Override
  public String toString() {
    return "XgmiMemoryData[device " + device + " (pci " + Long.toHexString(pciLocation) + "), +" + offsetInAllocation + " in "
        + allocationSize + " bytes, " + (ipcHandle == null ? "no IPC handle" : "IPC handle") + "]";
  }
}
