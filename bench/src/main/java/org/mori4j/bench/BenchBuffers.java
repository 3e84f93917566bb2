package org.mori4j.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * The local buffers of one benchmark run, freed together after the engine that registered them is closed
 * (declared before the engine in try-with-resources, so it closes last). Every buffer is closed even when an
 * earlier one fails to close; the first failure is rethrown.
 */
final class BenchBuffers implements AutoCloseable {
  private final List<BenchMemory> all = new ArrayList<>();

  BenchMemory add(BenchMemory b) {
    all.add(b);
    return b;
  }

  @Override
  public void close() {
    RuntimeException first = null;
    for (BenchMemory b : all) {
      try {
        b.close();
      } catch (RuntimeException e) {
        if (first == null) first = e;
      }
    }
    if (first != null) throw first;
  }
}
