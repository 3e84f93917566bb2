package org.mori4j.transport;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * A registered local memory region as the backends see it: the owner's registration id and access key,
 * and the memory itself as a {@link MemorySegment}. Backends read and write it through direct
 * {@link ByteBuffer} views of up to {@link #WINDOW} bytes each (a ByteBuffer cannot span more than 2 GiB),
 * so no byte is copied onto the Java heap. GPU memory ({@link #gpu(long, long, long, long, int)}) is a device
 * address and a size: its segment has length zero, so a host access by mistake fails with a bounds error
 * instead of touching an address the CPU cannot map; backends move it through staging buffers
 * ({@link DeviceStaging}). Deregistration flips {@link #live()} to false; a request that finds a dead region
 * is refused.
 */
public final class LocalRegion {
  /** Largest view window; 1 GiB keeps every view well inside ByteBuffer's int range. */
  public static final long WINDOW = 1L << 30;

  private final long id;
  private final long accessKey;
  private final MemorySegment segment;
  private final long address;
  private final long size;
  private final boolean gpu;
  private final int deviceId;
  private volatile boolean live = true;

  public LocalRegion(long id, long accessKey, MemorySegment segment, boolean gpu, int deviceId) {
    if (segment.byteSize() <= 0) throw new IllegalArgumentException("region size must be positive: " + segment.byteSize());
    this.id = id;
    this.accessKey = accessKey;
    if (gpu) throw new IllegalArgumentException("GPU memory is registered with LocalRegion.gpu(...), not as a host segment");
    this.segment = segment;
    this.address = segment.address();
    this.size = segment.byteSize();
    this.gpu = false;
    this.deviceId = deviceId;
  }

  private LocalRegion(long id, long accessKey, long address, long size, int deviceId) {
    if (size <= 0) throw new IllegalArgumentException("region size must be positive: " + size);
    if (deviceId < 0) throw new IllegalArgumentException("GPU region needs a device id >= 0: " + deviceId);
    this.id = id;
    this.accessKey = accessKey;
    this.segment = MemorySegment.ofAddress(address);
    this.address = address;
    this.size = size;
    this.gpu = true;
    this.deviceId = deviceId;
  }

  /** Device memory {@code [address, address + size)} on {@code deviceId}, already checked by the caller. */
  public static LocalRegion gpu(long id, long accessKey, long address, long size, int deviceId) {
    return new LocalRegion(id, accessKey, address, size, deviceId);
  }

  public long id() { return id; }
  public long accessKey() { return accessKey; }
  /** Host memory; for GPU memory a zero-length segment at the device address (never dereference it). */
  public MemorySegment segment() { return segment; }
  public long address() { return address; }
  public long size() { return size; }
  public boolean gpu() { return gpu; }
  public int deviceId() { return deviceId; }
  public boolean live() { return live; }

  /** Marks the region deregistered: every later request that names it is refused. */
  public void kill() {
    live = false;
  }

  /** Whether [offset, offset+length) lies inside the region, without overflow. */
  public boolean contains(long offset, long length) {
    return offset >= 0 && length > 0 && length <= size() && offset <= size() - length;
  }

  /** A new direct view of window {@code w} (callers cache it; see {@link RegionViews}). */
  ByteBuffer newWindowView(int w) {
    long start = w * WINDOW;
    return segment.asSlice(start, Math.min(WINDOW, size() - start)).asByteBuffer();
  }

  public int windowCount() {
    return (int) ((size() + WINDOW - 1) / WINDOW);
  }

  @Override
  public String toString() {
    return "LocalRegion[id=" + id + ", size=" + size() + (gpu ? ", gpu:" + deviceId : "") + (live ? "" : ", deregistered") + "]";
  }
}
