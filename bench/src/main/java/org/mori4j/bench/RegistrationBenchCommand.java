package org.mori4j.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.MemoryRegistration;
import org.mori4j.io.RdmaBackendConfig;
import org.mori4j.io.RegistrationStats;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code mori4j register-bench}: what registering memory costs one engine, per region. For each count it
 * registers that many separate allocations one call at a time ({@code registerMemory}, one round trip to the
 * engine each), then as many again in one bulk call ({@code registerMemories}), then as many sub-ranges of one
 * registered allocation in one bulk call (served by the range cache: no backend registration), and deregisters
 * each set the way it was registered; every figure is wall time per region on the caller's side. Host memory by
 * default; {@code --gpu} registers device memory of {@code --gpu-device} (cuMemAlloc'd per region), which needs a
 * GPU runtime. Backends: TCP, or RDMA ({@code --backend rdma}, on the provider {@code mori4j.rdma.provider}
 * chooses; the software provider's registration is emulation, not a NIC's).
 */
@Command(name = "register-bench", mixinStandardHelpOptions = true,
    description = "Time memory registration per region: one by one, bulk, and views served by the range cache.")
public final class RegistrationBenchCommand implements Callable<Integer> {
  @Option(names = "--regions", split = ",", defaultValue = "1000,10000", description = "Region counts to time (default: ${DEFAULT-VALUE}).")
  List<Integer> counts;

  @Option(names = "--region-size", defaultValue = "4096", converter = SizeConverter.class,
      description = "Bytes per region (default: ${DEFAULT-VALUE}).")
  long regionSize;

  @Option(names = "--backend", defaultValue = "tcp", description = "tcp or rdma (default: ${DEFAULT-VALUE}).")
  String backend;

  @Option(names = "--gpu", description = "Register device memory instead of host memory (needs a GPU runtime).")
  boolean gpuMemory;

  @Option(names = "--gpu-device", defaultValue = "0", description = "Device for --gpu (default: ${DEFAULT-VALUE}).")
  int gpuDevice;

  @Option(names = "--repeat", defaultValue = "3", description = "Runs per count; the table shows the fastest (default: ${DEFAULT-VALUE}).")
  int repeat;

  /** One count's figures, microseconds per region. */
  record Row(int regions, double oneByOneUs, double bulkUs, double viewsUs, double deregOneByOneUs, double deregBulkUs,
             long backendRegistrationsOfViews) {}

  @Override
  public Integer call() {
    for (int n : counts) if (n <= 0) throw usage("--regions must be positive: " + n);
    if (regionSize <= 0 || regionSize % 8 != 0) throw usage("--region-size must be a positive multiple of 8: " + regionSize);
    if (repeat <= 0) throw usage("--repeat must be positive: " + repeat);
    BackendType type = switch (backend.toLowerCase(Locale.ROOT)) {
      case "tcp" -> BackendType.TCP;
      case "rdma" -> BackendType.RDMA;
      default -> throw usage("--backend must be tcp or rdma: '" + backend + "'");
    };
    GpuRuntime gpu = gpuMemory ? BenchGpu.runtime() : null;
    if (gpu != null && !gpu.available()) {
      System.err.println("mori4j register-bench: --gpu needs a GPU runtime: " + gpu.version());
      return 1;
    }
    System.out.printf(Locale.ROOT, "mori4j register-bench: %s memory%s, %s backend, %d B per region, fastest of %d run(s) per count%n",
        gpuMemory ? "GPU" : "host", gpuMemory ? " (device " + gpuDevice + ", " + gpu.name() + " " + gpu.version() + ")" : "", type,
        regionSize, repeat);
    List<Row> rows = new ArrayList<>();
    try (IoEngine engine = IoEngine.create("register-bench-" + ProcessHandle.current().pid(), IoEngineConfig.loopback())) {
      engine.createBackend(type, type == BackendType.RDMA ? RdmaBackendConfig.defaults() : TcpBackendConfig.defaults());
      for (int n : counts) {
        Row best = null;
        for (int r = 0; r < repeat; r++) {
          Row row = run(engine, gpu, n);
          best = best == null ? row : fastest(best, row);
        }
        rows.add(best);
      }
      System.out.print(table(rows));
      System.out.println("engine totals: " + engine.registrationStats());
    }
    return 0;
  }

  private Row run(IoEngine engine, GpuRuntime gpu, int n) {
    try (Arena arena = Arena.ofShared(); Allocations one = new Allocations(gpu, n); Allocations two = new Allocations(gpu, n);
         Allocations pool = new Allocations(gpu, 1, n * regionSize)) {
      for (int i = 0; i < n; i++) {
        one.add(arena);
        two.add(arena);
      }
      pool.add(arena);
      List<MemoryDesc> descs = new ArrayList<>(n);
      long t0 = System.nanoTime();
      for (MemoryRegistration m : one.regs) descs.add(m.location() == MemoryLocationType.GPU
          ? engine.registerMemory(m.memory().address(), m.memory().byteSize(), m.deviceId(), MemoryLocationType.GPU)
          : engine.registerMemory(m.memory()));
      long t1 = System.nanoTime();
      for (MemoryDesc d : descs) engine.deregisterMemory(d);
      long t2 = System.nanoTime();
      List<MemoryDesc> bulk = engine.registerMemories(two.regs);
      long t3 = System.nanoTime();
      engine.deregisterMemories(bulk);
      long t4 = System.nanoTime();
      MemoryDesc whole = engine.registerMemories(pool.regs).get(0);
      List<MemoryRegistration> slices = new ArrayList<>(n);
      MemoryRegistration p = pool.regs.get(0);
      for (int i = 0; i < n; i++) slices.add(new MemoryRegistration(p.memory().asSlice(i * regionSize, regionSize), p.location(), p.deviceId()));
      RegistrationStats st = engine.registrationStats();
      long backendBefore = st.backendRegistrations();
      long t5 = System.nanoTime();
      List<MemoryDesc> views = engine.registerMemories(slices);
      long t6 = System.nanoTime();
      long viewsBackend = st.backendRegistrations() - backendBefore;
      engine.deregisterMemories(views);
      engine.deregisterMemory(whole);
      return new Row(n, us(t1 - t0, n), us(t3 - t2, n), us(t6 - t5, n), us(t2 - t1, n), us(t4 - t3, n), viewsBackend);
    }
  }

  private static double us(long nanos, int n) {
    return nanos / 1e3 / n;
  }

  private static Row fastest(Row a, Row b) {
    return new Row(a.regions(), Math.min(a.oneByOneUs(), b.oneByOneUs()), Math.min(a.bulkUs(), b.bulkUs()), Math.min(a.viewsUs(), b.viewsUs()),
        Math.min(a.deregOneByOneUs(), b.deregOneByOneUs()), Math.min(a.deregBulkUs(), b.deregBulkUs()),
        Math.max(a.backendRegistrationsOfViews(), b.backendRegistrationsOfViews()));
  }

  static String table(List<Row> rows) {
    StringBuilder sb = new StringBuilder();
    sb.append(String.format(Locale.ROOT, "%8s | %14s %10s %14s | %16s %12s | %s%n", "regions", "one-by-one us", "bulk us", "views bulk us",
        "dereg 1-by-1 us", "dereg bulk us", "backend registrations for the views"));
    for (Row r : rows) {
      sb.append(String.format(Locale.ROOT, "%8d | %14.2f %10.2f %14.2f | %16.2f %12.2f | %d%n", r.regions(), r.oneByOneUs(), r.bulkUs(),
          r.viewsUs(), r.deregOneByOneUs(), r.deregBulkUs(), r.backendRegistrationsOfViews()));
    }
    sb.append("(microseconds per region, wall time on the caller's side; views: sub-ranges of one registered allocation)\n");
    return sb.toString();
  }

  private picocli.CommandLine.ParameterException usage(String message) {
    return new picocli.CommandLine.ParameterException(new picocli.CommandLine(this), message);
  }

  /** The regions of one set: host segments of one arena, or device allocations freed on close. */
  private final class Allocations implements AutoCloseable {
    final GpuRuntime gpu;
    final long size;
    final List<MemoryRegistration> regs;
    final List<DeviceBuffer> buffers = new ArrayList<>();

    Allocations(GpuRuntime gpu, int n) {
      this(gpu, n, regionSize);
    }

    Allocations(GpuRuntime gpu, int n, long size) {
      this.gpu = gpu;
      this.size = size;
      this.regs = new ArrayList<>(n);
    }

    void add(Arena arena) {
      if (gpu == null) {
        MemorySegment s = arena.allocate(size, 4096);
        regs.add(MemoryRegistration.host(s));
      } else {
        DeviceBuffer b = gpu.allocDevice(gpuDevice, size);
        buffers.add(b);
        regs.add(MemoryRegistration.gpu(b.address(), size, gpuDevice));
      }
    }

    @Override
    public void close() {
      for (DeviceBuffer b : buffers) b.close();
    }
  }
}
