package org.mori4j.shmem;

import java.util.Map;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.mori4j.io.gpuinit.DeviceSources;
import org.mori4j.io.gpuinit.GpuInitiatedKernels;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuRuntime;

/**
 * Compiles kernels that use the shmem device library ({@code mori_shmem.cuh}, a resource of this module)
 * at run time: the library's source goes in front of the kernel's into one translation unit (NVRTC on NVIDIA,
 * hiprtc on AMD, through {@link GpuRuntime#compile}), so every device call inlines into the kernel; then the
 * module is loaded on the PE's GPU and {@link Shmem#moduleInit} fills its {@code globalGpuStates}. The library
 * holds engine-actors' {@code mori_rdma.cuh} (the GPU-initiated queue protocol that calls to PEs without a direct
 * path post through), so its {@code mori_rdma_*} functions are there for the kernel too. A line
 * {@code #include "mori_shmem.cuh"} or {@code #include "mori_rdma.cuh"} in the kernel source is allowed (it is
 * replaced, since the run-time compilers have no file system to find it in). Compiled images are kept per
 * process by source, options and GPU architecture, so PEs and repeated compiles of one kernel pay the compiler
 * once (about 0.1-0.3 s).
 */
public final class ShmemKernels {
  /** The device library's class-path resource. */
  public static final String DEVICE_LIBRARY_RESOURCE = "/org/mori4j/shmem/device/mori_shmem.cuh";
  private static final String DEVICE_FOLDER = "/org/mori4j/shmem/device/";
  /** The kernel behind {@link Shmem#barrierAll(org.mori4j.natives.gpu.GpuStream)}, defined by the device library. */
  public static final String STREAM_BARRIER_KERNEL = "mori_shmem_internal_stream_barrier";

  private static final Pattern INCLUDE = Pattern.compile("(?m)^\\s*#\\s*include\\s*[\"<]mori_(shmem|rdma)\\.cuh[\">].*$");
  private static volatile String library;

  private ShmemKernels() {}

  /**
   * The text of {@code mori_shmem.cuh} with each of its parts ({@code mori_shmem_proxy.cuh}, {@code mori_shmem_rma.cuh},
   * {@code mori_shmem_sync.cuh}) and engine-actors' {@code mori_rdma.cuh} ({@link GpuInitiatedKernels#deviceLibrary()},
   * the queue protocol the proxy part posts through) in place of its include line, each between {@code #line} markers
   * so that the compiler names the right file and line.
   */
  public static String deviceLibrary() {
    String text = library;
    if (text == null) {
      Map<String, Supplier<String>> parts =
          DeviceSources.resourceParts(ShmemKernels.class, DEVICE_FOLDER, "mori_shmem_proxy.cuh", "mori_shmem_rma.cuh", "mori_shmem_sync.cuh");
      parts.put("mori_rdma.cuh", GpuInitiatedKernels::deviceLibrary);
      text = DeviceSources.inline("mori_shmem.cuh", DeviceSources.resource(ShmemKernels.class, DEVICE_LIBRARY_RESOURCE), parts);
      library = text;
    }
    return text;
  }

  /**
   * The translation unit the compiler gets for a kernel source named {@code name}: the library, then the
   * source (with any include of the library removed), with {@code #line} markers so that errors name the
   * right file and line.
   */
  public static String withDeviceLibrary(String source, String name) {
    String body = INCLUDE.matcher(source).replaceAll("// (mori_shmem.cuh, which holds mori_rdma.cuh, is prepended by ShmemKernels)");
    return "#line 1 \"mori_shmem.cuh\"\n" + deviceLibrary() + "\n#line 1 \"" + name.replace("\"", "") + "\"\n" + body + "\n";
  }

  /**
   * Compiles {@code source} with the device library for {@code shmem}'s GPU, loads it there and runs
   * {@link Shmem#moduleInit} on it. The caller owns (closes) the module. A compile error throws with the
   * compiler's log.
   */
  public static GpuModule compile(Shmem shmem, String source, String name, String... options) {
    GpuModule module = load(shmem.gpu(), shmem.device(), source, name, options);
    try {
      shmem.moduleInit(module);
      return module;
    } catch (RuntimeException e) {
      module.close();
      throw e;
    }
  }

  /** Compiles and loads without a PE (for compile checks); kernels of it must not run before a {@link Shmem#moduleInit}. */
  public static GpuModule load(GpuRuntime gpu, int device, String source, String name, String... options) {
    return gpu.loadModule(device, image(gpu, device, source, name, options));
  }

  /** The compiled image of {@code source} with the library, from this process's cache when compiled before. */
  public static byte[] image(GpuRuntime gpu, int device, String source, String name, String... options) {
    return DeviceSources.compiled(gpu, device, withDeviceLibrary(source, name), name, options);
  }
}
