package org.mori4j.shmem;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Several PEs in one JVM, as threads: started together through a unique id, each collective step run on every
 * PE at once ({@link #onAll}), since a collective call returns only when every PE has made it.
 */
final class PeGroup implements AutoCloseable {
  final List<Shmem> pes = new ArrayList<>();
  private final ExecutorService threads;

  private PeGroup(int n) {
    threads = Executors.newFixedThreadPool(n, r -> Thread.ofPlatform().daemon().name("pe-thread").unstarted(r));
  }

  static PeGroup start(int n, ShmemConfig config) {
    PeGroup g = new PeGroup(n);
    byte[] id = Shmem.getUniqueId(config);
    List<Future<Shmem>> started = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      int rank = r;
      started.add(g.threads.submit(() -> Shmem.initWithUniqueId(rank, n, id, config)));
    }
    for (Future<Shmem> f : started) g.pes.add(get(f));
    return g;
  }

  Shmem pe(int rank) {
    return pes.get(rank);
  }

  /** Runs {@code step} on every PE at once; the results by rank, or what each threw (an exception as the result). */
  <T> List<Object> onAll(Function<Shmem, T> step) {
    List<Future<T>> running = new ArrayList<>();
    for (Shmem pe : pes) running.add(threads.submit(() -> step.apply(pe)));
    List<Object> out = new ArrayList<>();
    for (Future<T> f : running) {
      try {
        out.add(f.get(60, TimeUnit.SECONDS));
      } catch (ExecutionException e) {
        out.add(e.getCause());
      } catch (Exception e) {
        throw new AssertionError("a PE did not finish its step", e);
      }
    }
    return out;
  }

  /** {@link #onAll} where every PE must succeed. */
  <T> List<T> onAllOk(Function<Shmem, T> step) {
    List<Object> all = onAll(step);
    List<T> out = new ArrayList<>();
    for (Object o : all) {
      if (o instanceof Throwable t) throw new AssertionError("a PE failed its step", t);
      @SuppressWarnings("unchecked")
      T v = (T) o;
      out.add(v);
    }
    return out;
  }

  @Override
  public void close() {
    onAll(pe -> {
      pe.finalizeShmem();
      return null;
    });
    threads.shutdownNow();
  }

  private static <T> T get(Future<T> f) {
    try {
      return f.get(60, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) throw r;
      throw new AssertionError(e.getCause());
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }
}
