package org.mori4j.transport.xgmi;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.RegionConfirmer;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/** What the XGMI backend tests share: an op that remembers how it ended, and a started backend with its own driver thread. */
final class XgmiTestBackends {
  private XgmiTestBackends() {}

  /** An op that remembers how it ended, the error, and how many times it was ended (once, if the backend is right). */
  static final class Op extends TransferOp {
    final CompletableFuture<String> done = new CompletableFuture<>();
    final AtomicInteger ends = new AtomicInteger();
    volatile TransportError error;

    @Override
    public void transferSucceeded() {
      ends.incrementAndGet();
      done.complete("ok");
    }

    @Override
    public void transferFailed(TransportError e, String message) {
      ends.incrementAndGet();
      error = e;
      done.complete(e + ": " + message);
    }

    String await() throws Exception {
      return done.get(30, TimeUnit.SECONDS);
    }
  }

  /**
   * A backend started with {@code listener} and a platform thread that drives its completion source as the engine's
   * poller does; {@code cleanup} gets the backend first (closed before what was registered earlier) and the join of
   * the driver, which ends once the backend closed its source.
   */
  static XgmiBackend started(String key, XgmiSettings settings, Supplier<GpuRuntime> gpu, RegionConfirmer confirmer, BackendListener listener,
      List<AutoCloseable> cleanup) {
    XgmiBackend b = new XgmiBackend(key, settings, gpu, confirmer);
    b.start(listener);
    cleanup.add(0, b);
    Thread driver = Thread.ofPlatform().daemon().name("drive-" + key).start(() -> {
      var source = b.completionSources().get(0);
      while (!source.isClosed()) {
        if (source.doWork() == 0) source.awaitWork(1_000_000);
      }
    });
    cleanup.add(driver::join);
    return b;
  }
}
