package org.mori4j.transport.xgmi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuModule.GpuFunction;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.KernelArgs;

/**
 * The kernels of {@link HostBackedGpuRuntime}: modules "compiled" from their source text (a kernel exists when the
 * source declares it; globals other tests declare get zeroed device memory), kernels other tests teach the device
 * run on the stream's thread, and the XGMI gather kernel's own contract (block table in device memory or in a mapped
 * pinned buffer, each block moved) for everything else.
 */
final class HostBackedKernels {
  private final HostBackedGpuRuntime rt;
  private final Map<String, HostBackedGpuRuntime.KernelBody> kernels = new ConcurrentHashMap<>();
  private final Map<String, Long> globalSizes = new ConcurrentHashMap<>();
  private final Map<Long, Map<String, GpuModule.GlobalSymbol>> moduleGlobals = new ConcurrentHashMap<>();
  private final AtomicLong moduleIds = new AtomicLong(1);

  HostBackedKernels(HostBackedGpuRuntime rt) {
    this.rt = rt;
  }

  void defineKernel(String name, HostBackedGpuRuntime.KernelBody body) {
    kernels.put(name, body);
  }

  void defineGlobal(String name, long size) {
    globalSizes.put(name, size);
  }

  GpuModule loadModule(int device, byte[] image) {
    String source = new String(image, StandardCharsets.UTF_8);
    long id = moduleIds.getAndIncrement();
    Map<String, GpuModule.GlobalSymbol> globals = new ConcurrentHashMap<>();
    Map<String, DeviceBuffer> globalMemory = new ConcurrentHashMap<>();
    globalSizes.forEach((name, size) -> {
      if (!source.contains(name)) return;
      DeviceBuffer b = rt.allocDevice(device, size);
      globalMemory.put(name, b);
      globals.put(name, new GpuModule.GlobalSymbol(name, b.address(), size));
    });
    moduleGlobals.put(id, globals);
    rt.liveModules.incrementAndGet();
    return new GpuModule() {
      private boolean closed;

      @Override
      public int device() {
        return device;
      }

      @Override
      public GpuFunction function(String name) {
        if (!java.util.regex.Pattern.compile("__global__ void (__launch_bounds__\\(\\d+\\) )?" + java.util.regex.Pattern.quote(name) + "\\(").matcher(source).find()) throw HostBackedGpuRuntime.fail("cuModuleGetFunction", "no kernel " + name);
        return new GpuFunction(name, device, id);
      }

      @Override
      public GlobalSymbol global(String name) {
        GlobalSymbol g = globals.get(name);
        if (g == null) throw HostBackedGpuRuntime.fail("cuModuleGetGlobal", "no global " + name + " in the module (the test device knows " + globalSizes.keySet() + ")");
        return g;
      }

      @Override
      public void close() {
        if (!closed) {
          rt.liveModules.decrementAndGet();
          globalMemory.values().forEach(DeviceBuffer::close);
          moduleGlobals.remove(id);
        }
        closed = true;
      }
    };
  }

  /**
   * Runs the gather kernel's contract: arguments (table, n, source base, destination base, common size); the
   * table holds n source offsets, n destination offsets and, when the common size is 0, n sizes.
   */
  void launch(GpuFunction function, Dim3 grid, Dim3 block, int sharedMemBytes, GpuStream stream, KernelArgs args) {
    HostBackedGpuRuntime.KernelBody body = kernels.get(function.name());
    if (body != null) {
      if (stream == null || stream.device() != function.device()) throw HostBackedGpuRuntime.fail("cuLaunchKernel", "stream and kernel on different devices");
      java.util.List<byte[]> bytes = new java.util.ArrayList<>();
      for (int i = 0; i < args.count(); i++) bytes.add(args.bytes(i));
      HostBackedGpuRuntime.Launch launch = new HostBackedGpuRuntime.Launch(function, grid, block, java.util.List.copyOf(bytes), Map.copyOf(moduleGlobals.getOrDefault(function.handle(), Map.of())));
      rt.launches.incrementAndGet();
      ((HostBackedStream) stream).enqueue(() -> body.run(launch));
      return;
    }
    if (!function.name().equals(GatherKernel.NAME)) throw HostBackedGpuRuntime.fail("cuLaunchKernel", "unknown kernel " + function.name());
    if (args.count() != 6) throw HostBackedGpuRuntime.fail("cuLaunchKernel", "the gather kernel takes 6 arguments, got " + args.count());
    if (grid.x() < 1 || grid.y() > 65535 || block.x() != GatherKernel.THREADS) throw HostBackedGpuRuntime.fail("cuLaunchKernel", "bad launch shape " + grid + " " + block);
    long table, srcBase, dstBase, sameSize, pieces;
    int n;
    try (Arena a = Arena.ofConfined()) {
      MemorySegment p = args.toNative(a);
      table = p.getAtIndex(ValueLayout.ADDRESS, 0).reinterpret(8).get(ValueLayout.JAVA_LONG, 0);
      n = p.getAtIndex(ValueLayout.ADDRESS, 1).reinterpret(4).get(ValueLayout.JAVA_INT, 0);
      srcBase = p.getAtIndex(ValueLayout.ADDRESS, 2).reinterpret(8).get(ValueLayout.JAVA_LONG, 0);
      dstBase = p.getAtIndex(ValueLayout.ADDRESS, 3).reinterpret(8).get(ValueLayout.JAVA_LONG, 0);
      sameSize = p.getAtIndex(ValueLayout.ADDRESS, 4).reinterpret(8).get(ValueLayout.JAVA_LONG, 0);
      pieces = p.getAtIndex(ValueLayout.ADDRESS, 5).reinterpret(8).get(ValueLayout.JAVA_LONG, 0);
    }
    if (stream.device() != function.device()) throw HostBackedGpuRuntime.fail("cuLaunchKernel", "stream and kernel on different devices");
    if (pieces < 1) throw HostBackedGpuRuntime.fail("cuLaunchKernel", "the gather kernel needs at least one piece per block, got " + pieces);
    rt.launches.incrementAndGet();
    ((HostBackedStream) stream).enqueue(() -> {
      MemorySegment t = HostBackedGpuRuntime.at(table, (sameSize != 0 ? 16L : 24L) * n);
      for (int i = 0; i < n; i++) {
        long size = sameSize != 0 ? sameSize : t.getAtIndex(ValueLayout.JAVA_LONG, 2L * n + i);
        // the real kernel moves only pieces x PIECE_BYTES of a block: a larger block would arrive cut short
        if (size > pieces * GatherKernel.PIECE_BYTES) {
          throw HostBackedGpuRuntime.fail("cuLaunchKernel", "block " + i + " of " + size + " bytes is over " + pieces + " pieces of " + GatherKernel.PIECE_BYTES);
        }
        rt.move(dstBase + t.getAtIndex(ValueLayout.JAVA_LONG, n + i), srcBase + t.getAtIndex(ValueLayout.JAVA_LONG, i), size);
      }
    });
  }
}
