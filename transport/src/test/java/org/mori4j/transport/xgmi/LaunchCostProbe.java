package org.mori4j.transport.xgmi;


import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.mori4j.natives.cuda.CudaExecutionApi;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuEvent;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuModule.GpuFunction;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.gpu.KernelArgs;

/**
 * A measuring tool, run by hand on a GPU machine (not a test): what one launch of the XGMI batch kernel costs the
 * calling thread from Java, in the same loops as the C program {@code bench/launch-cost/launch_cost.c}, which loads
 * the image this tool writes ({@code --write-image}), so both launch the same cubin with the same arguments (one
 * 4 KiB block: a 16-byte table, n = 1, two 4 KiB buffers, 1 piece, 1 CTA of 256 threads) on a non-blocking stream
 * with timing-free events. Each sample is one call timed with {@link System#nanoTime()} around it. Implementations
 * ({@code --impls}):
 * <ul>
 *   <li>{@code java}: the engine's path, {@link GpuRuntime#launch} with {@link KernelArgs} built per launch as
 *       {@link GatherKernel#launch} builds them, {@link GpuEvent#record} and {@link GpuEvent#isComplete};</li>
 *   <li>{@code java-raw} (CUDA only): the engine's own downcall handles ({@link CudaExecutionApi}) with the
 *       parameter array built once: the downcall and the driver, without the runtime's marshalling;</li>
 *   <li>{@code java-critical} (CUDA only): as {@code java-raw} through handles linked here with
 *       {@link Linker.Option#critical}, which skips the thread-state transition around the call.</li>
 * </ul>
 * Modes, each {@code --iters} calls per round: {@code launch} (back to back, the stream drained every 64 launches,
 * untimed), {@code record} (each launch followed by an event record), {@code poll1} (launch, record, one query of the
 * oldest of 8 events in flight) and {@code idle} (launch into an idle stream, record, query until complete).
 *
 * <pre>
 * bash .device/run.sh org.mori4j.transport.xgmi.LaunchCostProbe [--impls java,java-raw,java-critical]
 *     [--iters 2000] [--rounds 3] [--device 0] [--write-image FILE] [--image FILE]
 * </pre>
 * {@code --image} loads that image instead of compiling the kernel (a dry run against a stand-in driver library).
 * Prints tab-separated lines: impl, round, mode, part, n, p50, p90, p99, mean (microseconds), the C program's format.
 */
public final class LaunchCostProbe {
  private LaunchCostProbe() {}

  static final int SYNC_EVERY = 64;
  static final int IN_FLIGHT_EVENTS = 8;
  static final long BLOCK = 4096;
  private static final int WARM_UP = 2000;

  public static void main(String[] args) throws IOException {
    run(null, System.out, args);
  }

  /** Runs the probe on {@code given} (null: the machine's runtime), printing to {@code out}. */
  static void run(GpuRuntime given, PrintStream out, String... args) throws IOException {
    List<String> impls = List.of("java", "java-raw", "java-critical");
    int iters = 2000;
    int rounds = 3;
    int device = 0;
    Path image = null;
    Path load = null;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (i + 1 >= args.length) throw new IllegalArgumentException(a + ": needs a value");
      String v = args[++i];
      switch (a) {
        case "--impls" -> impls = List.of(v.split(","));
        case "--iters" -> iters = number(a, v);
        case "--rounds" -> rounds = number(a, v);
        case "--device" -> device = number(a, v);
        case "--write-image" -> image = Path.of(v);
        case "--image" -> load = Path.of(v);
        default -> throw new IllegalArgumentException("unknown argument '" + a + "' (known: --impls --iters --rounds --device --write-image --image)");
      }
    }
    if (iters < SYNC_EVERY) throw new IllegalArgumentException("--iters: at least " + SYNC_EVERY + ", got " + iters);
    for (String impl : impls) {
      if (!List.of("java", "java-raw", "java-critical").contains(impl)) {
        throw new IllegalArgumentException("--impls: unknown '" + impl + "' (known: java, java-raw, java-critical)");
      }
    }
    GpuRuntime gpu = given != null ? given : GpuRuntimes.select("auto");
    if (!gpu.name().equals("cuda") && impls.stream().anyMatch(s -> !s.equals("java"))) {
      throw new IllegalArgumentException("--impls: java-raw and java-critical need the CUDA runtime, this is '" + gpu.name() + "'");
    }
    byte[] img = load != null ? Files.readAllBytes(load) : GatherKernel.image(gpu, device);
    if (image != null) {
      Files.write(image, img);
      out.printf(Locale.ROOT, "# wrote %d bytes of %s's image for device %d to %s%n", img.length, GatherKernel.NAME, device, image);
    }
    out.printf(Locale.ROOT, "# %s %s; device %d: %s; iters %d, rounds %d%n", gpu.name(), gpu.version(), device, gpu.deviceName(device), iters, rounds);
    out.println("impl\tround\tmode\tpart\tn\tp50_us\tp90_us\tp99_us\tmean_us");
    List<AutoCloseable> owned = new ArrayList<>();
    try {
      GpuModule module = gpu.loadModule(device, img);
      owned.add(module);
      GpuFunction f = module.function(GatherKernel.NAME);
      DeviceBuffer table = gpu.allocDevice(device, 16);
      owned.add(table);
      DeviceBuffer src = gpu.allocDevice(device, BLOCK);
      owned.add(src);
      DeviceBuffer dst = gpu.allocDevice(device, BLOCK);
      owned.add(dst);
      try (Arena a = Arena.ofConfined()) {
        gpu.copyHostToDevice(table.address(), a.allocate(16), 16); // offsets 0 and 0
      }
      long[][] samples = new long[6][iters];
      for (int r = 0; r < rounds; r++) {
        // implementations alternate within a round, so that a drift of the machine touches all alike
        for (String impl : impls) {
          try (LaunchCostCalls calls = LaunchCostCalls.of(impl, gpu, f, device, table.address(), src.address(), dst.address())) {
            if (r == 0) {
              for (int i = 0; i < WARM_UP; i++) calls.launch();
              calls.drain();
            }
            measure(impl, r, calls, samples, iters, out);
          }
        }
      }
    } finally {
      for (AutoCloseable c : owned.reversed()) {
        try {
          c.close();
        } catch (Exception e) {
          out.println("# close failed: " + e);
        }
      }
    }
  }

  private static void measure(String impl, int r, LaunchCostCalls c, long[][] s, int iters, PrintStream out) {
    long[] launch = s[0], record = s[1], both = s[2], query = s[3], polls = s[4], done = s[5];
    for (int i = 0; i < iters; i++) {
      long t0 = System.nanoTime();
      c.launch();
      launch[i] = System.nanoTime() - t0;
      if (i % SYNC_EVERY == SYNC_EVERY - 1) c.drain();
    }
    c.drain();
    print(out, impl, r, "launch", "launch", launch, iters);

    for (int i = 0; i < iters; i++) {
      long t0 = System.nanoTime();
      c.launch();
      long t1 = System.nanoTime();
      c.record(i % IN_FLIGHT_EVENTS);
      long t2 = System.nanoTime();
      launch[i] = t1 - t0;
      record[i] = t2 - t1;
      both[i] = t2 - t0;
      if (i % SYNC_EVERY == SYNC_EVERY - 1) c.drain();
    }
    c.drain();
    print(out, impl, r, "record", "launch", launch, iters);
    print(out, impl, r, "record", "record", record, iters);
    print(out, impl, r, "record", "launch+record", both, iters);

    for (int i = 0; i < iters; i++) {
      long t0 = System.nanoTime();
      c.launch();
      long t1 = System.nanoTime();
      c.record(i % IN_FLIGHT_EVENTS);
      long t2 = System.nanoTime();
      c.query((i + 1) % IN_FLIGHT_EVENTS);
      long t3 = System.nanoTime();
      launch[i] = t1 - t0;
      record[i] = t2 - t1;
      query[i] = t3 - t2;
      if (i % SYNC_EVERY == SYNC_EVERY - 1) c.drain();
    }
    c.drain();
    print(out, impl, r, "poll1", "launch", launch, iters);
    print(out, impl, r, "poll1", "record", record, iters);
    print(out, impl, r, "poll1", "query", query, iters);

    for (int i = 0; i < iters; i++) {
      int ev = i % IN_FLIGHT_EVENTS;
      long t0 = System.nanoTime();
      c.launch();
      long t1 = System.nanoTime();
      c.record(ev);
      long t2 = System.nanoTime();
      boolean complete = c.query(ev);
      long t3 = System.nanoTime();
      long n = 1;
      long limit = t3 + 1_000_000_000L;
      while (!complete) {
        complete = c.query(ev);
        n++;
        if (System.nanoTime() > limit) throw new IllegalStateException(impl + ": event not complete after 1 s");
      }
      long t4 = System.nanoTime();
      launch[i] = t1 - t0;
      record[i] = t2 - t1;
      query[i] = t3 - t2;
      polls[i] = n * 1000; // the count, in the microsecond columns
      done[i] = t4 - t0;
    }
    print(out, impl, r, "idle", "launch", launch, iters);
    print(out, impl, r, "idle", "record", record, iters);
    print(out, impl, r, "idle", "first-query", query, iters);
    print(out, impl, r, "idle", "queries(count)", polls, iters);
    print(out, impl, r, "idle", "launch-to-complete", done, iters);
    out.flush();
  }

  /** Nearest-rank percentiles of the sorted samples, as launch_cost.c prints them. */
  static void print(PrintStream out, String impl, int round, String mode, String part, long[] ns, int n) {
    long[] s = Arrays.copyOf(ns, n);
    Arrays.sort(s);
    double sum = 0;
    for (long v : s) sum += v;
    out.printf(Locale.ROOT, "%s\t%d\t%s\t%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f%n", impl, round, mode, part, n, s[(int) ((n - 1) * 0.50)] / 1e3,
        s[(int) ((n - 1) * 0.90)] / 1e3, s[(int) ((n - 1) * 0.99)] / 1e3, sum / n / 1e3);
  }

  private static int number(String arg, String v) {
    try {
      int n = Integer.parseInt(v);
      if (n < 0) throw new NumberFormatException();
      return n;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(arg + ": a number of at least 0, got '" + v + "'");
    }
  }
}
