package org.mori4j.transport.xgmi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.mori4j.natives.cuda.CudaConstants;
import org.mori4j.natives.cuda.CudaDriver;
import org.mori4j.natives.cuda.CudaExecutionApi;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuEvent;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuModule.GpuFunction;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.gpu.GpuStream;
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

  /** The calls one implementation makes; the loops are the same for all. */
  interface Calls extends AutoCloseable {
    void launch();

    void record(int event);

    /** One query; true when the event's work is complete. */
    boolean query(int event);

    void drain();

    @Override
    void close();
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
          try (Calls calls = calls(impl, gpu, f, device, table.address(), src.address(), dst.address())) {
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

  private static void measure(String impl, int r, Calls c, long[][] s, int iters, PrintStream out) {
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

  private static Calls calls(String impl, GpuRuntime gpu, GpuFunction f, int device, long table, long src, long dst) {
    return switch (impl) {
      case "java" -> new EngineCalls(gpu, f, device, table, src, dst);
      case "java-raw" -> new RawCalls(gpu, f, device, table, src, dst, false);
      case "java-critical" -> new RawCalls(gpu, f, device, table, src, dst, true);
      default -> throw new IllegalArgumentException("unknown implementation " + impl);
    };
  }

  /** The engine's path: the runtime's launch with arguments built per launch, its events. */
  private static final class EngineCalls implements Calls {
    private final GpuRuntime gpu;
    private final GpuFunction f;
    private final GpuStream stream;
    private final GpuEvent[] events = new GpuEvent[IN_FLIGHT_EVENTS];
    private final long table;
    private final long src;
    private final long dst;
    private final Dim3 grid = GatherKernel.grid(1, 1, BLOCK);

    EngineCalls(GpuRuntime gpu, GpuFunction f, int device, long table, long src, long dst) {
      this.gpu = gpu;
      this.f = f;
      this.table = table;
      this.src = src;
      this.dst = dst;
      this.stream = gpu.createStream(device);
      for (int i = 0; i < events.length; i++) events[i] = gpu.createEvent(device, false);
    }

    @Override
    public void launch() {
      gpu.launch(f, grid, Dim3.of(GatherKernel.THREADS), 0, stream,
          KernelArgs.of().pointer(table).i32(1).pointer(src).pointer(dst).i64(BLOCK).i64(GatherKernel.pieces(BLOCK)));
    }

    @Override
    public void record(int event) {
      events[event].record(stream);
    }

    @Override
    public boolean query(int event) {
      return events[event].isComplete();
    }

    @Override
    public void drain() {
      stream.synchronize();
    }

    @Override
    public void close() {
      stream.synchronize();
      for (GpuEvent e : events) e.close();
      stream.close();
    }
  }

  /**
   * The driver's calls with a parameter array built once, through the engine's handles or through handles linked
   * here as critical. Needs the device's context current on this thread, which the runtime's own stream creation
   * (done first) leaves so.
   */
  private static final class RawCalls implements Calls {
    private static final FunctionDescriptor LAUNCH_FD = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT,
        JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
    private final Arena arena = Arena.ofConfined();
    private final GpuStream owner;
    private final MemorySegment function;
    private final MemorySegment stream;
    private final MemorySegment[] events = new MemorySegment[IN_FLIGHT_EVENTS];
    private final MemorySegment params;
    private final MethodHandle launch;
    private final MethodHandle record;
    private final MethodHandle query;

    RawCalls(GpuRuntime gpu, GpuFunction f, int device, long table, long src, long dst, boolean critical) {
      owner = gpu.createStream(device); // makes the device's context current here
      function = MemorySegment.ofAddress(f.handle());
      stream = CudaExecutionApi.streamCreate(CudaConstants.CU_STREAM_NON_BLOCKING);
      for (int i = 0; i < events.length; i++) events[i] = CudaExecutionApi.eventCreate(CudaConstants.CU_EVENT_DISABLE_TIMING);
      MemorySegment values = arena.allocate(8 * 6, 8);
      long[] v = {table, 1, src, dst, BLOCK, GatherKernel.pieces(BLOCK)};
      params = arena.allocate(ADDRESS, 6);
      for (int i = 0; i < 6; i++) {
        values.setAtIndex(JAVA_LONG, i, v[i]); // little-endian: the int parameter n reads the low 4 bytes
        params.setAtIndex(ADDRESS, i, values.asSlice(8L * i, 8));
      }
      if (critical) {
        Linker linker = Linker.nativeLinker();
        Linker.Option c = Linker.Option.critical(false);
        launch = linker.downcallHandle(symbol("cuLaunchKernel"), LAUNCH_FD, c);
        record = linker.downcallHandle(symbol("cuEventRecord"), FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), c);
        query = linker.downcallHandle(symbol("cuEventQuery"), FunctionDescriptor.of(JAVA_INT, ADDRESS), c);
      } else {
        launch = record = query = null;
      }
    }

    private static MemorySegment symbol(String name) {
      return CudaDriver.library().find(name).orElseThrow(() -> new IllegalStateException(name + " not found in " + CudaDriver.library().what()));
    }

    @Override
    public void launch() {
      if (launch == null) {
        CudaExecutionApi.launchKernel(function, 1, 1, 1, GatherKernel.THREADS, 1, 1, 0, stream, params);
        return;
      }
      int rc;
      try {
        rc = (int) launch.invokeExact(function, 1, 1, 1, GatherKernel.THREADS, 1, 1, 0, stream, params, MemorySegment.NULL);
      } catch (Throwable t) {
        throw new IllegalStateException(t);
      }
      if (rc != 0) throw new IllegalStateException("cuLaunchKernel: " + rc);
    }

    @Override
    public void record(int event) {
      if (record == null) {
        CudaExecutionApi.eventRecord(events[event], stream);
        return;
      }
      int rc;
      try {
        rc = (int) record.invokeExact(events[event], stream);
      } catch (Throwable t) {
        throw new IllegalStateException(t);
      }
      if (rc != 0) throw new IllegalStateException("cuEventRecord: " + rc);
    }

    @Override
    public boolean query(int event) {
      if (query == null) return CudaExecutionApi.eventQuery(events[event]);
      int rc;
      try {
        rc = (int) query.invokeExact(events[event]);
      } catch (Throwable t) {
        throw new IllegalStateException(t);
      }
      if (rc != 0 && rc != CudaConstants.CUDA_ERROR_NOT_READY) throw new IllegalStateException("cuEventQuery: " + rc);
      return rc == 0;
    }

    @Override
    public void drain() {
      CudaExecutionApi.streamSynchronize(stream);
    }

    @Override
    public void close() {
      CudaExecutionApi.streamSynchronize(stream);
      for (MemorySegment e : events) CudaExecutionApi.eventDestroy(e);
      CudaExecutionApi.streamDestroy(stream);
      owner.close();
      arena.close();
    }
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
