package org.mori4j.bench.jmh;

import com.typesafe.config.ConfigFactory;
import java.util.concurrent.TimeUnit;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.IoEngineSession;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.TransferStatus;
import org.mori4j.io.XgmiBackendConfig;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The host-side cost of one XGMI {@code batchWrite} of {@code blocks} x 4 KiB up to its kernel launch (issue 15,
 * target 3: at most 10 us for 4,096 blocks). Two engines in this JVM with the XGMI backend on
 * {@link HostPathGpuRuntime} (no GPU: host memory, synchronous copies), a session between a local and a remote
 * "device" buffer, and blocks in reversed every-other-slot order so the engine cannot join any two (the batch
 * is one gather kernel launch, as {@code bench --block-order reversed} sends it). One invocation is the
 * {@code batchWrite} call plus the caller's spin until the runtime has seen the launch: the engine's submit,
 * the hand-off to the backend's worker (and its wake-up), the worker's checks of every block against the
 * owner's registration, the block table written into the slot's pinned buffer, the table's upload call and
 * the launch call itself. The gather the runtime then does in Java and the completion are outside the
 * measured time (the per-invocation tear-down waits for the status), so the figure is what a real GPU would
 * see in front of its kernel, on this machine's cores; the kernel's own time is {@code GatherKernelProbe}'s.
 * {@code callOnly} is the {@code batchWrite} call alone (the caller's share). When the caller's thread launches the
 * kernel itself (an idle worker: {@code XgmiWorker.issueFromCaller}), the launch happens inside the call and
 * {@code toLaunch} also counts what the call does after it (the event, the worker's wake-up, the return); so
 * {@code toLaunch} also prints, per measurement iteration and for the whole trial, "launch at": the time from the
 * call's start to the launch call's start, from the runtime's timestamp. With {@code -p runtime=cuda} the same runs on
 * device 0 of a real GPU ({@link TimedGpuRuntime}: the CUDA runtime with a timestamp at each launch call), so "launch
 * at" then holds the real pinned table, the real upload call and the driver; the kernel's run and the completion stay
 * outside the measured time as above. {@code -p table=device} copies the block table into device memory in front of
 * every launch, as every batch did before the kernel read it in place; {@code roundTrip} (the call and its await) shows
 * what reading it over PCIe costs the kernel.
 */
@State(Scope.Benchmark)
@BenchmarkMode({Mode.SampleTime})
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class XgmiBatchHostBenchmark {
  private static final String MODE = "jmh-host-path";
  private static final long BLOCK = 4096;

  @Param({"4096"})
  public int blocks;

  /** {@code host-path} ({@link HostPathGpuRuntime}, no GPU) or {@code cuda} (device 0 of a real GPU). */
  @Param({"host-path"})
  public String runtime;

  /**
   * Where the kernel reads its block table ({@code mori4j.xgmi.block-table}): {@code mapped} (in place from the
   * pinned buffer, no upload call) or {@code device} (the copy in front of every launch that every batch made before).
   */
  @Param({"mapped"})
  public String table;

  /**
   * The engines' {@code mori4j.engine.await-spin}: {@code default} leaves the configuration's ({@code auto}: 50 us on 8
   * or more processors), a duration (say {@code 1ms}) keeps the caller spinning through the whole batch, so that the
   * next call starts on a core that still holds its arrays and the table.
   */
  @Param({"default"})
  public String awaitSpin;

  private GpuRuntime device;
  private LaunchClock clock;
  private IoEngine initiator;
  private IoEngine target;
  private DeviceBuffer src;
  private DeviceBuffer dst;
  private IoEngineSession session;
  private long[] offsets;
  private long[] sizes;
  private TransferStatus status;
  /** Call start to launch start of each {@code toLaunch} invocation of the running iteration, and of the trial's measurements. */
  private final long[] launchAt = new long[1 << 20];
  private int launchCount;
  private final long[] trialLaunchAt = new long[1 << 22];
  private int trialCount;

  @Setup(Level.Trial)
  public void start() {
    switch (runtime) {
      case "host-path" -> {
        HostPathGpuRuntime h = new HostPathGpuRuntime();
        device = h;
        clock = h;
      }
      case "cuda" -> {
        GpuRuntime cuda = GpuRuntimes.select("cuda");
        if (!cuda.available() || cuda.deviceCount() < 1) throw new IllegalStateException("runtime=cuda: no CUDA device here (" + cuda.version() + ")");
        TimedGpuRuntime t = new TimedGpuRuntime(cuda);
        device = t;
        clock = t;
      }
      default -> throw new IllegalArgumentException("runtime must be host-path or cuda, not '" + runtime + "'");
    }
    GpuRuntimes.register(MODE, device);
    System.setProperty("mori4j.gpu.runtime", MODE);
    System.setProperty("mori4j.xgmi.block-table", table);
    if (!awaitSpin.equals("default")) System.setProperty("mori4j.engine.await-spin", awaitSpin);
    ConfigFactory.invalidateCaches();
    long bytes = 2L * blocks * BLOCK;
    src = device.allocDevice(0, bytes);
    dst = device.allocDevice(0, bytes);
    initiator = IoEngine.create("jmh-xgmi-initiator", IoEngineConfig.loopback());
    target = IoEngine.create("jmh-xgmi-target", IoEngineConfig.loopback());
    initiator.createBackend(BackendType.XGMI, XgmiBackendConfig.defaults());
    target.createBackend(BackendType.XGMI, XgmiBackendConfig.defaults());
    initiator.registerRemoteEngine(target.engineDesc());
    MemoryDesc local = initiator.registerMemory(src.address(), bytes, 0, MemoryLocationType.GPU);
    MemoryDesc remote = target.registerMemory(dst.address(), bytes, 0, MemoryLocationType.GPU);
    session = initiator.createSession(local, remote).orElseThrow(() -> new IllegalStateException("no session between the two engines"));
    offsets = new long[blocks];
    sizes = new long[blocks];
    for (int i = 0; i < blocks; i++) {
      offsets[i] = (long) (blocks - 1 - i) * 2 * BLOCK;
      sizes[i] = BLOCK;
    }
    long launched = clock.launches();
    TransferStatus first = session.batchWrite(offsets, offsets, sizes, initiator.allocateTransferUid());
    first.await();
    if (!first.succeeded()) throw new IllegalStateException("first batch failed: " + first.code() + " " + first.message());
    if (clock.launches() != launched + 1) throw new IllegalStateException("the batch was not one kernel launch");
  }

  /** {@code batchWrite} and the spin until the runtime has seen the launch. */
  @Benchmark
  public long toLaunch() {
    long start = System.nanoTime();
    long before = clock.launches();
    status = session.batchWrite(offsets, offsets, sizes, initiator.allocateTransferUid());
    while (clock.launches() == before) {
      // the launch may have happened (and the batch finished) between the two reads: look at the count again
      if (!status.inProgress() && clock.launches() == before)
        throw new IllegalStateException("batch ended without a launch: " + status.code() + " " + status.message());
      Thread.onSpinWait();
    }
    long at = clock.lastLaunchNanos() - start;
    if (launchCount < launchAt.length) launchAt[launchCount++] = at;
    return at;
  }

  /** Prints the launch-at percentiles of a measurement iteration of {@code toLaunch} (and keeps them for the trial's). */
  @TearDown(Level.Iteration)
  public void launchAtOfIteration(org.openjdk.jmh.infra.IterationParams params) {
    int n = launchCount;
    launchCount = 0;
    if (n == 0 || params.getType() != org.openjdk.jmh.runner.IterationType.MEASUREMENT) return;
    int keep = Math.min(n, trialLaunchAt.length - trialCount);
    System.arraycopy(launchAt, 0, trialLaunchAt, trialCount, keep);
    trialCount += keep;
    System.out.println("launch at (call start to launch start): " + percentiles(launchAt, n));
  }

  private static String percentiles(long[] values, int n) {
    long[] v = java.util.Arrays.copyOf(values, n);
    java.util.Arrays.sort(v);
    return String.format("p50 %.3f us, p90 %.3f us, p99 %.3f us (n = %d)", v[n / 2] / 1e3, v[(int) (n * 0.9)] / 1e3, v[(int) (n * 0.99)] / 1e3, n);
  }

  /** The {@code batchWrite} call alone. */
  @Benchmark
  public TransferStatus callOnly() {
    status = session.batchWrite(offsets, offsets, sizes, initiator.allocateTransferUid());
    return status;
  }

  /**
   * The {@code batchWrite} call and its {@code await}: the whole batch, the kernel's run on the GPU included, so that
   * reading the block table over PCIe ({@code table=mapped}) can be compared with copying it first ({@code device}).
   */
  @Benchmark
  public TransferStatus roundTrip() {
    TransferStatus s = session.batchWrite(offsets, offsets, sizes, initiator.allocateTransferUid());
    s.await();
    if (!s.succeeded()) throw new IllegalStateException("batch failed: " + s.code() + " " + s.message());
    return s;
  }

  @TearDown(Level.Invocation)
  public void complete() {
    TransferStatus s = status;
    if (s == null) return;
    s.await();
    if (!s.succeeded()) throw new IllegalStateException("batch failed: " + s.code() + " " + s.message());
    status = null;
  }

  @TearDown(Level.Trial)
  public void stop() {
    if (trialCount > 0) System.out.println("launch at, all measurement iterations: " + percentiles(trialLaunchAt, trialCount));
    initiator.close();
    target.close();
    src.close();
    dst.close();
    if (device instanceof HostPathGpuRuntime h) h.shutdown();
    System.clearProperty("mori4j.gpu.runtime");
    System.clearProperty("mori4j.xgmi.block-table");
    System.clearProperty("mori4j.engine.await-spin");
    ConfigFactory.invalidateCaches();
    GpuRuntimes.register(MODE, null);
  }
}
