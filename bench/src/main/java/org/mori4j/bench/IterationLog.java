package org.mori4j.bench;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;

/**
 * An optional record of every measured iteration of a bench row, for lining slow iterations up with what else
 * happened at that moment (a GC pause in either JVM, written by {@code -Xlog:gc:file=...:time}). Off unless the
 * environment variable {@code MORI4J_BENCH_ITERATION_LOG} names a file; then each row appends one line per
 * iteration: message size, batch, iteration index, its start as wall-clock milliseconds (the same clock as the GC
 * log's {@code time} decorator) and its duration in microseconds. Written after the row's timing ends, so the
 * record costs the measured loop nothing but the start stamps it keeps.
 */
final class IterationLog {
  static final String ENV = "MORI4J_BENCH_ITERATION_LOG";
  private static final String FILE = System.getenv(ENV);

  private IterationLog() {}

  static boolean on() {
    return FILE != null && !FILE.isBlank();
  }

  /** {@link #write(Path, long, int, long[], long[], long, long)} to the file the environment names. */
  static void write(long msg, int batch, long[] starts, long[] lat, long epochMillisAtNanos, long nanosRef) {
    write(Path.of(FILE), msg, batch, starts, lat, epochMillisAtNanos, nanosRef);
  }

  /**
   * Appends a row: {@code starts[i]} is iteration i's {@code System.nanoTime()} at its start, {@code lat[i]} its
   * duration; {@code epochMillisAtNanos} and {@code nanosRef} are one moment read on both clocks.
   */
  static void write(Path file, long msg, int batch, long[] starts, long[] lat, long epochMillisAtNanos, long nanosRef) {
    try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(file, StandardOpenOption.CREATE,
        StandardOpenOption.APPEND))) {
      for (int i = 0; i < lat.length; i++) {
        double at = epochMillisAtNanos + (starts[i] - nanosRef) / 1e6;
        w.printf(Locale.ROOT, "%d %d %d %.3f %.1f%n", msg, batch, i, at, lat[i] / 1e3);
      }
    } catch (IOException e) {
      System.err.println("mori4j bench: cannot write the iteration log " + file + ": " + e);
    }
  }
}
