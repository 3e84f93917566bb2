package org.mori4j.transport;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * A registered local memory region as the backends see it: the owner's registration id and access key,
 * and the memory itself as a {@link MemorySegment}. Backends read and write it through direct
 * {@link ByteBuffer} views of up to {@link #WINDOW} bytes each (a ByteBuffer cannot span more than 2 GiB),
 * so no byte is copied onto the Java heap. Deregistration flips {@link #live()} to false; a request that
 * finds a dead region is refused.
 */
public final class LocalRegion {
  /** Largest view window; 1 GiB keeps every view well inside ByteBuffer's int range. */
  public static final long WINDOW = 1L << 30;

  private final long id;
  private final long accessKey;
  private final MemorySegment segment;
  private final boolean gpu;
  private final int deviceId;
  private volatile boolean live = true;

  public LocalRegion(long id, long accessKey, MemorySegment segment, boolean gpu, int deviceId) {
    if (segment.byteSize() <= 0) throw new IllegalArgumentException("region size must be positive: " + segment.byteSize());
    this.id = id;
    this.accessKey = accessKey;
    this.segment = segment;
    this.gpu = gpu;
    this.deviceId = deviceId;
  }

  public long id() { return id; }
  public long accessKey() { return accessKey; }
  public MemorySegment segment() { return segment; }
  public long address() { return segment.address(); }
  public long size() { return segment.byteSize(); }
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
