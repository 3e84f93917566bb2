package org.mori4j.bench.jmh;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.IoEngineSession;
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
 * A 4 KiB write over the TCP backend between two engines in this JVM on loopback, waited for before the next
 * one: through an {@link IoEngineSession} (the fast path) and through {@code IoEngine.write} (descriptor
 * lookup per call). Run it with {@code -prof gc}: {@code gc.alloc.rate.norm} is the bytes allocated per write
 * on the initiator and target sides together (one JVM), which issue 2's acceptance point 4 bounds to the
 * status object on the session path. One JVM, unlike {@code mori4j bench}, because JMH measures allocation
 * per process; the cross-process latency is {@code mori4j bench}'s job. Because {@code -prof gc} also counts
 * Pekko's time-driven allocation (timers, remoting heartbeats), each measurement iteration also prints the
 * bytes per write of every thread that allocated at least one byte per write ({@link ThreadAllocation}): the
 * caller's share is the status object, the I/O loop's share should be zero.
 */
@State(Scope.Benchmark)
@BenchmarkMode({Mode.AverageTime})
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 3)
@Measurement(iterations = 5, time = 3)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class TcpWriteBenchmark {
  static final long SIZE = 4096;
  static final long BUFFER = 1 << 20;

  private Arena arena;
  private IoEngine initiator;
  private IoEngine target;
  private MemoryDesc local;
  private MemoryDesc remote;
  private IoEngineSession session;
  private long offset;
  private long ops;
  private final ThreadAllocation allocation = new ThreadAllocation();

  /**
   * Whether the target keeps inbound-write notifications. Nobody pops them here, so with "true" the target's
   * notification log grows (array doublings) until it reaches its cap: allocation that stops at the cap and
   * that "false" leaves out of the figure.
   */
  @Param({"false", "true"})
  public boolean notifications;

  @Setup(Level.Trial)
  public void start() {
    arena = Arena.ofShared();
    target = IoEngine.create("jmh-target", IoEngineConfig.loopback());
    initiator = IoEngine.create("jmh-initiator", IoEngineConfig.loopback());
    target.createBackend(BackendType.TCP, TcpBackendConfig.defaults().withEnableNotification(notifications));
    initiator.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
    MemorySegment src = arena.allocate(BUFFER, 4096);
    MemorySegment dst = arena.allocate(BUFFER, 4096);
    src.fill((byte) 0x5a);
    local = initiator.registerMemory(src);
    remote = target.registerMemory(dst);
    initiator.registerRemoteEngine(target.engineDesc());
    target.registerRemoteEngine(initiator.engineDesc());
    session = initiator.createSession(local, remote)
        .orElseThrow(() -> new IllegalStateException("no session between " + local + " and " + remote));
    // one write each way first, so connection setup is not part of the first measured iteration
    expect(session.write(0, 0, SIZE, session.allocateTransferUid()).await());
    expect(initiator.write(local, 0, remote, 0, SIZE, initiator.allocateTransferUid()).await());
  }

  @Setup(Level.Iteration)
  public void countFrom() {
    ops = 0;
    allocation.start();
  }

  @TearDown(Level.Iteration)
  public void reportAllocation() {
    System.out.println("\n  per-thread allocation over " + ops + " writes: " + allocation.perOp(ops, 1.0));
  }

  @TearDown(Level.Trial)
  public void stop() {
    initiator.close();
    target.close();
    arena.close();
  }

  /** Cycles over 256 slots of 4 KiB, like a stream of KV-cache blocks. */
  private long nextOffset() {
    ops++;
    long o = offset;
    offset = (o + SIZE) & (BUFFER - 1);
    return o;
  }

  @Benchmark
  public TransferStatus sessionWrite4k() {
    long o = nextOffset();
    return expect(session.write(o, o, SIZE, session.allocateTransferUid()).await());
  }

  @Benchmark
  public TransferStatus engineWrite4k() {
    long o = nextOffset();
    return expect(initiator.write(local, o, remote, o, SIZE, initiator.allocateTransferUid()).await());
  }

  private static TransferStatus expect(TransferStatus s) {
    if (!s.succeeded()) throw new IllegalStateException("4 KiB write failed: " + s.code() + " " + s.message());
    return s;
  }
}
