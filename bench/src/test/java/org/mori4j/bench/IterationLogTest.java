package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IterationLogTest {
  @Test
  void eachIterationGetsItsWallClockStartAndDurationAndRowsAppend(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("iter.log");
    long ref = 5_000_000_000L; // nanoTime at the moment the wall clock read 1,000,000 ms
    IterationLog.write(f, 4096, 1, new long[] {ref, ref + 2_500_000L}, new long[] {11_000L, 2_000_000L}, 1_000_000L, ref);
    IterationLog.write(f, 65536, 2, new long[] {ref + 10_000_000L}, new long[] {1_500L}, 1_000_000L, ref);
    assertEquals(List.of("4096 1 0 1000000.000 11.0", "4096 1 1 1000002.500 2000.0", "65536 2 0 1000010.000 1.5"),
        Files.readAllLines(f));
  }
}
