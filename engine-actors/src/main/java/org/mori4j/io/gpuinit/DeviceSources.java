package org.mori4j.io.gpuinit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.mori4j.natives.gpu.GpuRuntime;

/**
 * Assembles a device library that is kept as several files into the one text a run-time compiler gets: NVRTC and
 * hiprtc have no file system, so each {@code #include "mori_*.cuh"} (or {@code .h}) line of the outer file is
 * replaced by the text of that part, between {@code #line} markers, so that a compile error names the part's file
 * and line and, after the part, the outer file's own line again. Used by {@link GpuInitiatedKernels}
 * ({@code mori_rdma.cuh}) and by the shmem module ({@code mori_shmem.cuh}, which also takes in the assembled
 * {@code mori_rdma.cuh}). An include of a file that is not one of the declared parts, a part included twice, or a
 * declared part never included is a packaging error and throws. It also keeps the process's compiled images of
 * such translation units ({@link #compiled}), so both libraries' kernels pay the compiler once per process.
 */
public final class DeviceSources {
  private static final Pattern PART_INCLUDE = Pattern.compile("(?m)^[ \\t]*#[ \\t]*include[ \\t]*\"(mori_[a-z_]+\\.(?:cuh|h))\".*$");

  /** Compiled images by runtime, GPU architecture, options, file name and the whole translation unit. */
  private static final ConcurrentHashMap<String, byte[]> IMAGES = new ConcurrentHashMap<>();

  private DeviceSources() {}

  /**
   * The image of translation unit {@code unit} (file {@code name}) compiled for GPU {@code device}, from this
   * process's cache when the same unit was compiled before for the same runtime, architecture and options.
   */
  public static byte[] compiled(GpuRuntime gpu, int device, String unit, String name, String... options) {
    String key = gpu.name() + ":" + gpu.computeCapability(device) + ":" + List.of(options) + ":" + name + ":" + unit;
    return IMAGES.computeIfAbsent(key, k -> gpu.compile(device, unit, name, options));
  }

  /**
   * {@code outer} (named {@code outerName} in the markers) with every part of {@code parts} (file name to its text)
   * in place of its include line.
   */
  public static String inline(String outerName, String outer, Map<String, Supplier<String>> parts) {
    StringBuilder out = new StringBuilder(outer.length() + 32 * 1024);
    Matcher m = PART_INCLUDE.matcher(outer);
    List<String> seen = new ArrayList<>();
    int from = 0;
    long line = 1;
    while (m.find()) {
      String part = m.group(1);
      Supplier<String> text = parts.get(part);
      if (text == null) throw new IllegalStateException(outerName + " includes " + part + ", which is not one of its parts " + parts.keySet());
      if (seen.contains(part)) throw new IllegalStateException(outerName + " includes " + part + " twice");
      seen.add(part);
      line += outer.substring(from, m.start()).chars().filter(c -> c == '\n').count();
      // the marker after the part gives the outer file its own numbering back: the line after the include's
      out.append(outer, from, m.start()).append("#line 1 \"").append(part).append("\"\n").append(text.get())
          .append("\n#line ").append(line + 1).append(" \"").append(outerName).append('"');
      from = m.end();
    }
    if (seen.size() != parts.size()) throw new IllegalStateException(outerName + " includes " + seen + ", not all of " + parts.keySet());
    return out.append(outer, from, outer.length()).toString();
  }

  /**
   * Parts that are class-path resources in {@code folder} (looked up through {@code anchor}), by file name, in the
   * order given; read only when {@link #inline} needs them. A caller may add further parts to the map.
   */
  public static Map<String, Supplier<String>> resourceParts(Class<?> anchor, String folder, String... names) {
    Map<String, Supplier<String>> parts = new LinkedHashMap<>();
    for (String name : names) parts.put(name, () -> resource(anchor, folder + name));
    return parts;
  }

  /** The UTF-8 text of class-path resource {@code name}, looked up through {@code anchor}. */
  public static String resource(Class<?> anchor, String name) {
    try (InputStream in = anchor.getResourceAsStream(name)) {
      if (in == null) throw new IllegalStateException("resource " + name + " is missing from the class path");
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
