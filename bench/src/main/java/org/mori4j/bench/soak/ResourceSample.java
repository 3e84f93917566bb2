package org.mori4j.bench.soak;

import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.management.ObjectName;

/**
 * What a node JVM holds at one moment: live Java threads (except the soak's own workload threads), open file descriptors, resident memory, native
 * memory committed outside the Java heap (Native Memory Tracking's total minus its Java Heap line; -1 when
 * the JVM was started without {@code -XX:NativeMemoryTracking}) and direct buffer bytes. Taken inside the
 * node after a GC, sent to the driver as a {@code RES} line, compared before and after the soak.
 */
record ResourceSample(long threads, long fds, long rssKb, long nativeKb, long directBytes) {
  private static final Pattern TOTAL = Pattern.compile("Total: reserved=(\\d+)KB, committed=(\\d+)KB");
  private static final Pattern HEAP = Pattern.compile("Java Heap \\(reserved=(\\d+)KB, committed=(\\d+)KB\\)");

  static ResourceSample measure() {
    System.gc(); // direct buffers and cleaners of unreachable objects go first: the sample shows what is held
    long direct = 0;
    for (BufferPoolMXBean b : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) if (b.getName().equals("direct")) direct = b.getMemoryUsed();
    return new ResourceSample(engineThreads(), countFds(), readRssKb(), readNativeKb(), direct);
  }

  /** Live threads other than the soak's own (its workers are gone in the after-sample, by design). */
  private static long engineThreads() {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> !t.getName().startsWith("soak-")).count();
  }

  private static long countFds() {
    try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
      return s.count();
    } catch (IOException e) {
      return -1;
    }
  }

  private static long readRssKb() {
    try {
      for (String l : Files.readAllLines(Path.of("/proc/self/status")))
        if (l.startsWith("VmRSS:")) return Long.parseLong(l.replaceAll("[^0-9]", ""));
    } catch (IOException | NumberFormatException e) {
      // not Linux: unknown
    }
    return -1;
  }

  private static long readNativeKb() {
    try {
      Object text = ManagementFactory.getPlatformMBeanServer().invoke(new ObjectName("com.sun.management:type=DiagnosticCommand"),
          "vmNativeMemory", new Object[] {new String[] {"summary", "scale=KB"}}, new String[] {String[].class.getName()});
      Matcher t = TOTAL.matcher(text.toString());
      Matcher h = HEAP.matcher(text.toString());
      if (!t.find()) return -1;
      return Long.parseLong(t.group(2)) - (h.find() ? Long.parseLong(h.group(2)) : 0);
    } catch (Exception e) {
      return -1;
    }
  }

  String line() {
    return "RES threads=" + threads + " fds=" + fds + " rss_kb=" + rssKb + " native_kb=" + nativeKb + " direct=" + directBytes;
  }

  static ResourceSample parse(Map<String, String> kv) {
    return new ResourceSample(Long.parseLong(kv.get("threads")), Long.parseLong(kv.get("fds")), Long.parseLong(kv.get("rss_kb")),
        Long.parseLong(kv.get("native_kb")), Long.parseLong(kv.get("direct")));
  }
}
