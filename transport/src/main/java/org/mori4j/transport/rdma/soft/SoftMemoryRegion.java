package org.mori4j.transport.rdma.soft;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import org.mori4j.transport.rdma.verbs.MemoryRegion;

/**
 * A memory region of the software RDMA device (emulation): host memory, which the device's I/O thread reads and
 * writes in place through a global-scope segment and direct-buffer views of it, or GPU memory, which it reaches
 * through {@link org.mori4j.transport.DeviceStaging} copies. Its lkey and rkey are distinct random 32-bit values
 * unique on the device. The I/O thread pins the region around each system call or copy that touches it, and
 * {@link #close()} waits for the pins to go, so once deregistration returns no byte of the memory is touched
 * again and requests naming its keys fail as on a NIC. A host region whose owner freed the memory while it was still
 * registered (its segment's arena closed) counts as deregistered too: a NIC would go on writing into the pages its
 * registration pins, but this device's I/O thread works through the process's own mappings, and touching freed
 * memory would crash the process, so such requests fail with the access errors of a deregistered region instead.
 */
final class SoftMemoryRegion implements MemoryRegion {
  final SoftProtectionDomain pd;
  private final long address;
  private final long length;
  private final int lkey;
  private final int rkey;
  private final int access;
  /** GPU memory (reached through staging) rather than host memory. */
  final boolean gpu;
  final int gpuDevice;
  /** Host regions: the whole region, global scope (the caller's segment may be confined to another thread). */
  final MemorySegment segment;
  /** Host regions up to 2 GiB: a direct-buffer view of the whole region, duplicated per connection. */
  private final ByteBuffer view;
  private volatile boolean live = true;
  /** The scope of the memory the owner registered (host regions; null for GPU): closed means the memory was freed. */
  private final MemorySegment.Scope owner;
  private final AtomicInteger pins = new AtomicInteger();

  SoftMemoryRegion(SoftProtectionDomain pd, long address, long length, int lkey, int rkey, int access, boolean gpu, int gpuDevice,
                   MemorySegment.Scope owner) {
    this.pd = pd;
    this.address = address;
    this.length = length;
    this.lkey = lkey;
    this.rkey = rkey;
    this.access = access;
    this.gpu = gpu;
    this.gpuDevice = gpuDevice;
    this.owner = owner;
    this.segment = gpu ? null : MemorySegment.ofAddress(address).reinterpret(length);
    this.view = gpu || length > Integer.MAX_VALUE ? null : segment.asByteBuffer();
  }

  @Override
  public long address() {
    return address;
  }

  @Override
  public long length() {
    return length;
  }

  @Override
  public int lkey() {
    return lkey;
  }

  @Override
  public int rkey() {
    return rkey;
  }

  @Override
  public int access() {
    return access;
  }

  boolean live() {
    return live && (owner == null || owner.isAlive());
  }

  /** Whether {@code [addr, addr + len)} lies inside the region. */
  boolean contains(long addr, long len) {
    return len >= 0 && addr >= address && addr - address <= length - len;
  }

  /** A view of the whole region for one connection's exclusive use; null when the region exceeds a buffer's 2 GiB. */
  ByteBuffer newView() {
    return view == null ? null : view.duplicate();
  }

  /** Holds off deregistration until {@link #unpin()}; false (and nothing held) when the region is already gone. */
  boolean pin() {
    pins.incrementAndGet();
    if (live()) return true;
    pins.decrementAndGet();
    return false;
  }

  void unpin() {
    pins.decrementAndGet();
  }

  /** Deregisters: its keys stop naming it at once; returns when no I/O touches the memory any more. Idempotent. */
  @Override
  public void close() {
    if (!live) return;
    live = false;
    pd.forget(this);
    while (pins.get() != 0) Thread.onSpinWait();
  }

  @Override
  public String toString() {
    return (gpu ? "GPU " + gpuDevice + " " : "") + "MR [" + SoftErrors.hex(address) + ", +" + length + ") lkey "
        + SoftErrors.hex(lkey & 0xffffffffL) + " rkey " + SoftErrors.hex(rkey & 0xffffffffL);
  }
}
