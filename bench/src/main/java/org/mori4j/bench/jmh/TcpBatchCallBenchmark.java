package org.mori4j.bench.jmh;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.TransferStatus;
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
 * The caller's cost of the KV cache's per-layer call over TCP: one {@code IoEngine.batchWrite} entry of
 * {@code blocks} x {@code blockBytes} (default 512 x 32 KiB, one Llama-3-70B layer's K and V blocks as
 * {@code KvMigration} issues it inside {@code sendLayers}) in reversed every-other-slot order, so no two blocks
 * join. Two engines in this JVM on loopback, CPU memory. Only the call is timed: the per-invocation tear-down
 * waits for the batch, so each call starts with the connection idle, as a stream's next layer does when the link
 * keeps up. Run with {@code -prof gc} for the bytes allocated per call.
 */
@State(Scope.Benchmark)
@BenchmarkMode({Mode.SampleTime})
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class TcpBatchCallBenchmark {
  @Param({"512"})
  public int blocks;

  @Param({"32768"})
  public long blockBytes;

  private Arena arena;
  private IoEngine initiator;
  private IoEngine target;
  private List<MemoryDesc> locals;
  private List<MemoryDesc> remotes;
  private List<long[]> offsets;
  private List<long[]> sizes;
  private List<TransferStatus> status;

  @Setup(Level.Trial)
  public void start() {
    arena = Arena.ofShared();
    long bytes = 2L * blocks * blockBytes;
    target = IoEngine.create("jmh-batch-target", IoEngineConfig.loopback());
    initiator = IoEngine.create("jmh-batch-initiator", IoEngineConfig.loopback());
    target.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
    initiator.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
    MemorySegment src = arena.allocate(bytes, 4096);
    MemorySegment dst = arena.allocate(bytes, 4096);
    src.fill((byte) 0x5a);
    locals = List.of(initiator.registerMemory(src));
    remotes = List.of(target.registerMemory(dst));
    initiator.registerRemoteEngine(target.engineDesc());
    target.registerRemoteEngine(initiator.engineDesc());
    long[] o = new long[blocks];
    long[] s = new long[blocks];
    for (int i = 0; i < blocks; i++) {
      o[i] = (long) (blocks - 1 - i) * 2 * blockBytes;
      s[i] = blockBytes;
    }
    offsets = List.of(o);
    sizes = List.of(s);
    status = call();
    complete();
  }

  private List<TransferStatus> call() {
    return initiator.batchWrite(locals, offsets, remotes, offsets, sizes, new long[] {initiator.allocateTransferUid()});
  }

  /** The {@code batchWrite} call alone. */
  @Benchmark
  public List<TransferStatus> callOnly() {
    status = call();
    return status;
  }

  @TearDown(Level.Invocation)
  public void complete() {
    List<TransferStatus> st = status;
    if (st == null) return;
    for (TransferStatus s : st) {
      s.await();
      if (!s.succeeded()) throw new IllegalStateException("batch failed: " + s.code() + " " + s.message());
    }
    status = null;
  }

  @TearDown(Level.Trial)
  public void stop() {
    initiator.close();
    target.close();
    arena.close();
  }
}
