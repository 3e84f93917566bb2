package org.mori4j.shmem;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.mori4j.io.gpuinit.GpuQueueLayout;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuRuntime;

/**
 * Compiles kernels that use the shmem device library ({@code mori_shmem.cuh}, a resource of this module)
 * at run time: the library's source goes in front of the kernel's into one translation unit (NVRTC on NVIDIA,
 * hiprtc on AMD, through {@link GpuRuntime#compile}), so every device call inlines into the kernel; then the
 * module is loaded on the PE's GPU and {@link Shmem#moduleInit} fills its {@code globalGpuStates}. A line
 * {@code #include "mori_shmem.cuh"} in the kernel source is allowed (it is replaced, since the run-time
 * compilers have no file system to find it in). Compiled images are kept per process by source, options and
 * GPU architecture, so PEs and repeated compiles of one kernel pay the compiler once (about 0.1-0.3 s).
 */
public final class ShmemKernels {
  /** The device library's class-path resource. */
  public static final String DEVICE_LIBRARY_RESOURCE = "/org/mori4j/shmem/device/mori_shmem.cuh";
  /** Its second part (PEs without a direct path), put where the first includes it. */
  public static final String PROXY_LIBRARY_RESOURCE = "/org/mori4j/shmem/device/mori_shmem_proxy.cuh";
  /** The kernel behind {@link Shmem#barrierAll(org.mori4j.natives.gpu.GpuStream)}, defined by the device library. */
  public static final String STREAM_BARRIER_KERNEL = "mori_shmem_internal_stream_barrier";

  private static final Pattern INCLUDE = Pattern.compile("(?m)^\\s*#\\s*include\\s*[\"<]mori_shmem\\.cuh[\">].*$");
  private static final Pattern QUEUE_LAYOUT = Pattern.compile("(?m)^// @MORI_SHMEM_QUEUE_LAYOUT@.*$");
  private static final Pattern PROXY_INCLUDE = Pattern.compile("(?m)^\\s*#\\s*include\\s*\"mori_shmem_proxy\\.cuh\".*$");
  private static final ConcurrentHashMap<String, byte[]> IMAGES = new ConcurrentHashMap<>();
  private static volatile String library;

  private ShmemKernels() {}

  /** The text of {@code mori_shmem.cuh}, with {@code mori_shmem_proxy.cuh} in place of its include line. */
  public static String deviceLibrary() {
    String text = library;
    if (text == null) {
      String proxy = QUEUE_LAYOUT.matcher(resource(PROXY_LIBRARY_RESOURCE)).replaceFirst(Matcher.quoteReplacement(queueLayoutDefines()));
      text = PROXY_INCLUDE.matcher(resource(DEVICE_LIBRARY_RESOURCE)).replaceFirst(Matcher.quoteReplacement(proxy));
      library = text;
    }
    return text;
  }

  /**
   * The endpoint layout the proxy part of the library posts by, written from {@link GpuQueueLayout} (the layout's
   * one definition, which {@code mori_rdma.cuh} is checked against) in place of the marker line.
   */
  static String queueLayoutDefines() {
    return String.join("\n",
        "// MoriRdmaEndpoint control block offsets (GpuQueueLayout on the Java side).",
        "#define MORI_SHMEM_EP_QPN " + GpuQueueLayout.CTRL_QPN,
        "#define MORI_SHMEM_EP_SQ_DEPTH " + GpuQueueLayout.CTRL_SQ_DEPTH,
        "#define MORI_SHMEM_EP_INTERNAL_LKEY " + GpuQueueLayout.CTRL_INTERNAL_LKEY,
        "#define MORI_SHMEM_EP_SQ_RING " + GpuQueueLayout.CTRL_SQ_RING,
        "#define MORI_SHMEM_EP_ATOMIC_RESULTS " + GpuQueueLayout.CTRL_ATOMIC_RESULTS,
        "#define MORI_SHMEM_EP_SQ_POST_IDX " + GpuQueueLayout.CTRL_SQ_POST_IDX,
        "#define MORI_SHMEM_EP_WAIT_TIMEOUT " + GpuQueueLayout.CTRL_WAIT_TIMEOUT_NS,
        "#define MORI_SHMEM_EP_SQ_DBR " + GpuQueueLayout.CTRL_SQ_DBR_RECORD,
        "#define MORI_SHMEM_EP_SQ_DOORBELL " + GpuQueueLayout.CTRL_SQ_DOORBELL,
        "#define MORI_SHMEM_EP_SQ_RETIRED " + GpuQueueLayout.CTRL_SQ_RETIRED,
        "#define MORI_SHMEM_EP_ERROR_COUNT " + GpuQueueLayout.CTRL_ERROR_COUNT,
        "#define MORI_SHMEM_EP_FIRST_ERROR_STATUS " + GpuQueueLayout.CTRL_FIRST_ERROR_STATUS,
        "#define MORI_SHMEM_EP_FIRST_ERROR_WRID " + GpuQueueLayout.CTRL_FIRST_ERROR_WR_ID,
        "#define MORI_SHMEM_EP_STATE " + GpuQueueLayout.CTRL_STATE,
        "// WQE: " + GpuQueueLayout.WQE_BYTES + " bytes",
        "#define MORI_SHMEM_WQE_BYTES " + GpuQueueLayout.WQE_BYTES,
        "// ibv_wr_opcode, ibv_send_flags",
        "#define MORI_SHMEM_OP_WRITE " + GpuQueueLayout.OP_RDMA_WRITE,
        "#define MORI_SHMEM_OP_READ " + GpuQueueLayout.OP_RDMA_READ,
        "#define MORI_SHMEM_OP_CAS " + GpuQueueLayout.OP_ATOMIC_CMP_AND_SWP,
        "#define MORI_SHMEM_OP_FETCH_ADD " + GpuQueueLayout.OP_ATOMIC_FETCH_AND_ADD,
        "#define MORI_SHMEM_WR_FENCE " + GpuQueueLayout.FLAG_FENCE);
  }

  private static String resource(String name) {
    try (InputStream in = ShmemKernels.class.getResourceAsStream(name)) {
      if (in == null) throw new IllegalStateException("resource " + name + " is missing from the class path");
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The translation unit the compiler gets for a kernel source named {@code name}: the library, then the
   * source (with any include of the library removed), with {@code #line} markers so that errors name the
   * right file and line.
   */
  public static String withDeviceLibrary(String source, String name) {
    String body = INCLUDE.matcher(source).replaceAll("// (mori_shmem.cuh is prepended by ShmemKernels)");
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
    String unit = withDeviceLibrary(source, name);
    String key = gpu.name() + ":" + gpu.computeCapability(device) + ":" + List.of(options) + ":" + name + ":" + unit;
    return IMAGES.computeIfAbsent(key, k -> gpu.compile(device, unit, name, options));
  }
}
