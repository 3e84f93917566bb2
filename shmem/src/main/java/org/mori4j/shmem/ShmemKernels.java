package org.mori4j.shmem;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
  /**
   * The files {@code mori_shmem.cuh} includes, in no particular order: its parts (PEs without a direct path, the data
   * calls, synchronization), each put where the first includes it, and engine-actors' {@code mori_rdma.cuh}.
   */
  private static final List<String> PARTS = List.of("mori_shmem_proxy.cuh", "mori_shmem_rma.cuh", "mori_shmem_sync.cuh", "mori_rdma.cuh");
  /** The kernel behind {@link Shmem#barrierAll(org.mori4j.natives.gpu.GpuStream)}, defined by the device library. */
  public static final String STREAM_BARRIER_KERNEL = "mori_shmem_internal_stream_barrier";

  private static final Pattern INCLUDE = Pattern.compile("(?m)^\\s*#\\s*include\\s*[\"<]mori_(shmem|rdma)\\.cuh[\">].*$");
  private static final Pattern PART_INCLUDE = Pattern.compile("(?m)^[ \\t]*#[ \\t]*include[ \\t]*\"(mori_[a-z_]+\\.cuh)\".*$");
  private static final ConcurrentHashMap<String, byte[]> IMAGES = new ConcurrentHashMap<>();
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
      text = inlineParts(resource(DEVICE_LIBRARY_RESOURCE));
      library = text;
    }
    return text;
  }

  private static String inlineParts(String outer) {
    StringBuilder out = new StringBuilder(outer.length() + 64 * 1024);
    Matcher m = PART_INCLUDE.matcher(outer);
    List<String> seen = new ArrayList<>();
    int from = 0;
    long line = 1;
    while (m.find()) {
      String part = m.group(1);
      if (!PARTS.contains(part)) throw new IllegalStateException("mori_shmem.cuh includes " + part + ", which is not one of its parts " + PARTS);
      if (seen.contains(part)) throw new IllegalStateException("mori_shmem.cuh includes " + part + " twice");
      seen.add(part);
      line += outer.substring(from, m.start()).chars().filter(c -> c == '\n').count();
      String inner = part.equals("mori_rdma.cuh") ? GpuInitiatedKernels.deviceLibrary() : resource(DEVICE_FOLDER + part);
      // the marker after the part gives the outer file its own line numbers back: the line after the include's
      out.append(outer, from, m.start()).append("#line 1 \"").append(part).append("\"\n").append(inner)
          .append("\n#line ").append(line + 1).append(" \"mori_shmem.cuh\"");
      from = m.end();
    }
    if (seen.size() != PARTS.size()) throw new IllegalStateException("mori_shmem.cuh includes " + seen + ", not all of " + PARTS);
    return out.append(outer, from, outer.length()).toString();
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
    String unit = withDeviceLibrary(source, name);
    String key = gpu.name() + ":" + gpu.computeCapability(device) + ":" + List.of(options) + ":" + name + ":" + unit;
    return IMAGES.computeIfAbsent(key, k -> gpu.compile(device, unit, name, options));
  }
}
