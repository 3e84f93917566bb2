package org.mori4j.transport.tcp;

import java.util.ArrayList;
import java.util.List;
import org.mori4j.transport.CompletionSource;
import org.mori4j.transport.TransferBackend;

/**
 * Drives the completion sources of backends under test on daemon threads, as the engine's poller actors do, until
 * each source closes or {@link #close()} stops them all (joining each thread for at most 5 s).
 */
public final class LoopDrivers implements AutoCloseable {
  private final List<Thread> threads = new ArrayList<>();
  private volatile boolean stop;

  /** Starts one driver thread per completion source of {@code backend}. */
  public void drive(TransferBackend backend) {
    for (CompletionSource s : backend.completionSources()) {
      Thread t = new Thread(() -> {
        while (!stop && !s.isClosed()) if (s.doWork() == 0) s.awaitWork(1_000_000L);
      }, "driver-" + s.name());
      t.setDaemon(true);
      t.start();
      threads.add(t);
    }
  }

  @Override
  public void close() throws InterruptedException {
    stop = true;
    for (Thread t : threads) t.join(5000);
  }
}
