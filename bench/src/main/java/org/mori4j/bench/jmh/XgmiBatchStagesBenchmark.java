package org.mori4j.bench.jmh;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import org.mori4j.io.internal.BatchBlocks;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.PinnedBuffer;
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
 * The stages of {@link XgmiBatchHostBenchmark}'s call, one at a time on the caller's thread, so that its figure can be
 * split into where the microseconds go: {@code scan} is the engine's check of the 4,096 blocks (the real
 * {@link BatchBlocks}, same arrays and region sizes), {@code tableCopy} the offsets written into the slot's pinned
 * block table (two copies of 32 KiB, as {@code TransferOp.copyBlocks} makes them), {@code upload} the table's upload
 * call on {@link HostPathGpuRuntime} (a 64 KiB host copy standing in for the copy call), and {@code arraysCopy} the
 * three copies of the caller's arrays that an op submitted to the worker needs (the path a batch takes when the
 * worker is busy). What the full call costs beyond their sum is the status, the route, the metrics and the launch call.
 */
@State(Scope.Benchmark)
@BenchmarkMode({Mode.SampleTime})
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class XgmiBatchStagesBenchmark {
  private static final long BLOCK = 4096;

  @Param({"4096"})
  public int blocks;

  private HostPathGpuRuntime device;
  private long[] offsets;
  private long[] sizes;
  private long[] copyLo;
  private long[] copyRo;
  private long[] copySizes;
  private long regionBytes;
  private PinnedBuffer table;
  private DeviceBuffer deviceTable;

  @Setup(Level.Trial)
  public void start() {
    device = new HostPathGpuRuntime();
    regionBytes = 2L * blocks * BLOCK;
    offsets = new long[blocks];
    sizes = new long[blocks];
    for (int i = 0; i < blocks; i++) {
      offsets[i] = (long) (blocks - 1 - i) * 2 * BLOCK;
      sizes[i] = BLOCK;
    }
    copyLo = new long[blocks];
    copyRo = new long[blocks];
    copySizes = new long[blocks];
    table = device.allocPinned(16L * blocks);
    deviceTable = device.allocDevice(0, 16L * blocks);
  }

  @Benchmark
  public BatchBlocks scan() {
    BatchBlocks b = new BatchBlocks();
    String bad = b.scan(offsets, offsets, sizes, regionBytes, regionBytes, "localSrc", "remoteDst");
    if (bad != null) throw new IllegalStateException(bad);
    return b;
  }

  @Benchmark
  public MemorySegment tableCopy() {
    MemorySegment t = table.segment();
    MemorySegment.copy(offsets, 0, t, ValueLayout.JAVA_LONG, 0, blocks);
    MemorySegment.copy(offsets, 0, t, ValueLayout.JAVA_LONG, 8L * blocks, blocks);
    return t;
  }

  @Benchmark
  public long upload() {
    device.copyHostToDeviceAsync(deviceTable.address(), table.segment(), 16L * blocks, null);
    return deviceTable.address();
  }

  @Benchmark
  public long[] arraysCopy() {
    System.arraycopy(offsets, 0, copyLo, 0, blocks);
    System.arraycopy(offsets, 0, copyRo, 0, blocks);
    System.arraycopy(sizes, 0, copySizes, 0, blocks);
    return copySizes;
  }

  @TearDown(Level.Trial)
  public void stop() {
    table.close();
    deviceTable.close();
    device.shutdown();
  }
}
