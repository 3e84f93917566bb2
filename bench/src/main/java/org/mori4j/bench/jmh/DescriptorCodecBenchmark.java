package org.mori4j.bench.jmh;

import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.MemoryLocationType;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Descriptor encoding: {@code MemoryDesc} and {@code EngineDesc} to bytes and back. Descriptors cross the
 * control plane at registration and discovery, not per transfer, so this is not a hot path; the benchmark
 * exists to keep it from becoming a surprise (a decoder that validates with regexes or copies maps would show
 * here first) and to show what a descriptor exchange costs next to a transfer. The MemoryDesc carries a
 * 32-byte TCP blob and an 8-byte RDMA-sized blob, like a descriptor with two backends.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class DescriptorCodecBenchmark {
  private MemoryDesc memory;
  private byte[] memoryBytes;
  private EngineDesc engine;
  private byte[] engineBytes;

  @Setup
  public void setup() {
    memory = new MemoryDesc("initiator-12345", 42, -1, 0x7f00_dead_b000L, 64L << 20, MemoryLocationType.CPU,
        0x1234_5678_9abc_def0L, Map.of(BackendType.TCP, new byte[32], BackendType.RDMA, new byte[8]));
    memoryBytes = memory.toBytes();
    engine = new EngineDesc("target-67890", "node-a", "127.0.0.1", 25520, 67890L,
        "pekko://mori4j@127.0.0.1:25520/user/engine-target-67890", EnumSet.of(BackendType.TCP));
    engineBytes = engine.toBytes();
  }

  @Benchmark
  public byte[] memoryDescToBytes() {
    return memory.toBytes();
  }

  @Benchmark
  public MemoryDesc memoryDescFromBytes() {
    return MemoryDesc.fromBytes(memoryBytes);
  }

  @Benchmark
  public byte[] engineDescToBytes() {
    return engine.toBytes();
  }

  @Benchmark
  public EngineDesc engineDescFromBytes() {
    return EngineDesc.fromBytes(engineBytes);
  }
}
