package org.mori4j.io.gpuinit;

import java.util.regex.Pattern;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuRuntime;

/**
 * Compiles kernels that post work requests to GPU-initiated endpoints: the device library {@code mori_rdma.cuh}
 * (a resource of this package: the {@code MoriRdmaEndpoint} layout of {@link GpuQueueLayout} and the
 * {@code mori_rdma_*} device functions, with MORI's {@code PostWrite}, {@code UpdateSendDbrRecord},
 * {@code RingDoorbell}, {@code PollCq} and {@code UpdateCqDbrRecord}) goes in front of the kernel's source as one
 * translation unit, compiled at run time by NVRTC or hiprtc through {@link GpuRuntime#compile}, so every device
 * call inlines into the kernel. A line {@code #include "mori_rdma.cuh"} in the kernel is allowed and replaced (the
 * run-time compilers have no file system to find it in). Nothing needs initialising in the module: a kernel gets
 * its endpoint as a {@code MoriRdmaEndpoint*} argument ({@code RdmaEndpoint.address()}). Compiled images are kept
 * per process by source, options and GPU architecture.
 */
public final class GpuInitiatedKernels {
  /** The device library's class-path resource. */
  public static final String DEVICE_LIBRARY_RESOURCE = "/org/mori4j/io/gpuinit/mori_rdma.cuh";
  private static final String DEVICE_FOLDER = "/org/mori4j/io/gpuinit/";

  private static final Pattern INCLUDE = Pattern.compile("(?m)^\\s*#\\s*include\\s*[\"<]mori_rdma\\.cuh[\">].*$");
  private static volatile String library;

  private GpuInitiatedKernels() {}

  /**
   * The text of {@code mori_rdma.cuh} with its parts {@code mori_rdma_layout.h} (the endpoint block and the WQE/CQE
   * formats) and {@code mori_rdma_completions.cuh} (retirement, completions, receives) in place of their include lines.
   */
  public static String deviceLibrary() {
    String text = library;
    if (text == null) {
      text = DeviceSources.inline("mori_rdma.cuh", DeviceSources.resource(GpuInitiatedKernels.class, DEVICE_LIBRARY_RESOURCE),
          DeviceSources.resourceParts(GpuInitiatedKernels.class, DEVICE_FOLDER, "mori_rdma_layout.h", "mori_rdma_completions.cuh"));
      library = text;
    }
    return text;
  }

  /**
   * The translation unit the compiler gets for a kernel source named {@code name}: the library, then the source
   * (any include of the library removed), with {@code #line} markers so that errors name the right file and line.
   */
  public static String withDeviceLibrary(String source, String name) {
    if (source == null) throw new IllegalArgumentException("source must not be null");
    if (name == null || name.isBlank()) throw new IllegalArgumentException("name must name the kernel's file: " + name);
    String body = INCLUDE.matcher(source).replaceAll("// (mori_rdma.cuh is prepended by GpuInitiatedKernels)");
    return "#line 1 \"mori_rdma.cuh\"\n" + deviceLibrary() + "\n#line 1 \"" + name.replace("\"", "") + "\"\n" + body + "\n";
  }

  /** The compiled image of {@code source} with the library for GPU {@code device}, from this process's cache when compiled before. */
  public static byte[] image(GpuRuntime gpu, int device, String source, String name, String... options) {
    return DeviceSources.compiled(gpu, device, withDeviceLibrary(source, name), name, options);
  }

  /**
   * Compiles {@code source} with the library and loads it on GPU {@code device}. The caller owns (closes) the
   * module. A compile error throws with the compiler's log, naming the kernel's file and line.
   */
  public static GpuModule load(GpuRuntime gpu, int device, String source, String name, String... options) {
    return gpu.loadModule(device, image(gpu, device, source, name, options));
  }
}
