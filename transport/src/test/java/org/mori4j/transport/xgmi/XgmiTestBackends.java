package org.mori4j.transport.xgmi;

import static org.junit.jupiter.api.Assertions.assertEquals;

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

/**
 * What the XGMI backend tests share: an op that remembers how it ended, a started backend with its own driver thread,
 * and the teardown that checks nothing native is left.
 */
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

  /**
   * Closes what {@code cleanup} holds (backends first, as {@link #started} put them) and checks that nothing of
   * {@code gpu} (when the test made one) or of the backends' process-wide counters is left open, then shuts it down.
   */
  static void closeAndCheckNothingLeft(List<AutoCloseable> cleanup, HostBackedGpuRuntime gpu) throws Exception {
    for (AutoCloseable c : cleanup) c.close();
    if (gpu == null) return;
    assertEquals(0, gpu.liveStreams.get(), "streams left");
    assertEquals(0, gpu.liveEvents.get(), "events left");
    assertEquals(0, gpu.liveModules.get(), "modules left");
    assertEquals(0, gpu.liveMappings.get(), "IPC mappings left");
    assertEquals(0, XgmiBackend.openMappingsInProcess());
    assertEquals(0, XgmiBackend.gpuResourcesInProcess());
    gpu.shutdown();
  }
}
