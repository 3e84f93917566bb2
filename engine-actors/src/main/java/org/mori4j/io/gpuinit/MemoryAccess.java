package org.mori4j.io.gpuinit;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashMap;
import java.util.Map;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.PinnedBuffer;

/**
 * The proxy's own small reads and writes of registered memory: a SEND's payload (at most 64 KiB), a received
 * SEND's landing, an atomic's old value. Host memory is copied directly. GPU memory goes through a pinned bounce
 * buffer and an asynchronous copy on a non-blocking stream of that GPU that the proxy then waits for: it never
 * orders after the application's kernels (a kernel spinning on its CQ keeps running while the copy completes on a
 * copy engine). Proxy thread only.
 */
final class MemoryAccess implements AutoCloseable {
  private final RdmaDeviceContext ctx;
  private final Map<Integer, GpuStream> streams = new HashMap<>();
  private PinnedBuffer bounce;

  MemoryAccess(RdmaDeviceContext ctx) {
    this.ctx = ctx;
  }

  byte[] read(Region r, long addr, int len) {
    byte[] out = new byte[len];
    if (len == 0) return out;
    if (!r.gpu()) {
      MemorySegment.copy(r.host(), ValueLayout.JAVA_BYTE, addr - r.address(), out, 0, len);
      return out;
    }
    MemorySegment b = bounce();
    GpuStream s = stream(r.deviceId());
    ctx.gpuRuntime().copyDeviceToHostAsync(b, addr, len, s);
    s.synchronize();
    MemorySegment.copy(b, ValueLayout.JAVA_BYTE, 0, out, 0, len);
    return out;
  }

  void write(Region r, long addr, byte[] data) {
    if (data.length == 0) return;
    if (!r.gpu()) {
      MemorySegment.copy(data, 0, r.host(), ValueLayout.JAVA_BYTE, addr - r.address(), data.length);
      return;
    }
    MemorySegment b = bounce();
    MemorySegment.copy(data, 0, b, ValueLayout.JAVA_BYTE, 0, data.length);
    GpuStream s = stream(r.deviceId());
    ctx.gpuRuntime().copyHostToDeviceAsync(addr, b, data.length, s);
    s.synchronize();
  }

  void writeLong(Region r, long addr, long v) {
    if (!r.gpu()) {
      r.host().set(ValueLayout.JAVA_LONG_UNALIGNED, addr - r.address(), v);
      return;
    }
    byte[] b = new byte[8];
    for (int i = 0; i < 8; i++) b[i] = (byte) (v >>> (8 * i));
    write(r, addr, b);
  }

  /** The bounce buffer and {@code device}'s stream, made at registration rather than while kernels run. */
  void prepare(int device) {
    bounce();
    stream(device);
  }

  private MemorySegment bounce() {
    if (bounce == null) bounce = ctx.gpuRuntime().allocPinned(GpuQueueLayout.MAX_SEND_BYTES);
    return bounce.segment();
  }

  private GpuStream stream(int device) {
    return streams.computeIfAbsent(device, ctx.gpuRuntime()::createStream);
  }

  @Override
  public void close() {
    streams.values().forEach(GpuStream::close);
    streams.clear();
    if (bounce != null) bounce.close();
    bounce = null;
  }
}
