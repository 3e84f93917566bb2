package org.mori4j.bench.jmh;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TransferStatus;
import org.mori4j.io.internal.TransferStatusImpl;
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
 * Status completion: what it costs for a transfer's status, completed by an I/O thread, to be seen by the
 * thread that waits on it. A dedicated completer thread (standing in for the backend's I/O loop) takes each
 * new status from a hand-off slot and completes it; the benchmark thread creates the status, hands it over
 * and waits with {@code await()} or through {@code completion()}. {@code spinNanos} is the waiter's spin
 * before it parks (engine-actors' {@code mori4j.engine.await-spin}): 0 shows the park/unpark round trip, a
 * few microseconds show what spinning saves. {@code sameThread} is the floor: create, complete, observe.
 * Uses the engine's internal {@code TransferStatusImpl} because no public API completes a status on demand.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class StatusCompletionBenchmark {
  @Param({"0", "5000", "50000"})
  public long spinNanos;

  private final AtomicReference<TransferStatusImpl> slot = new AtomicReference<>();
  private volatile boolean running;
  private Thread completer;

  @Setup(Level.Trial)
  public void start() {
    running = true;
    completer = Thread.ofPlatform().daemon().name("status-completer").start(() -> {
      while (running) {
        TransferStatusImpl s = slot.getAndSet(null);
        if (s != null) s.finish(StatusCode.SUCCESS, "");
        else Thread.onSpinWait();
      }
    });
  }

  @TearDown(Level.Trial)
  public void stop() throws InterruptedException {
    running = false;
    completer.join(5000);
  }

  @Benchmark
  public TransferStatus sameThread() {
    TransferStatusImpl s = new TransferStatusImpl(spinNanos);
    s.finish(StatusCode.SUCCESS, "");
    return s.await();
  }

  @Benchmark
  public TransferStatus crossThreadAwait() {
    TransferStatusImpl s = new TransferStatusImpl(spinNanos);
    slot.set(s);
    return s.await();
  }

  @Benchmark
  public TransferStatus crossThreadCompletionStage() {
    TransferStatusImpl s = new TransferStatusImpl(spinNanos);
    var f = s.completion().toCompletableFuture();
    slot.set(s);
    return f.join();
  }
}
