package org.mori4j.transport.xgmi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link LaunchCostProbe}'s engine-path run on the in-memory device, so that the one GPU call it gets does not end at
 * a mistake of the probe's own: every mode prints its parts, the lone-op mode waits for each event, the image file is
 * the one the engine compiled, and the raw implementations refuse a runtime that is not CUDA. The figures mean nothing.
 */
class LaunchCostProbeSmokeTest {
  @Test
  void everyModePrintsItsPartsAndTheImageIsTheEngines(@TempDir Path dir) throws Exception {
    HostBackedGpuRuntime device = new HostBackedGpuRuntime(1, 0);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try {
      LaunchCostProbe.run(device, new PrintStream(bytes, true, StandardCharsets.UTF_8), "--impls", "java", "--iters", "64", "--rounds", "2",
          "--write-image", dir.resolve("gather.img").toString());
      assertThrows(IllegalArgumentException.class, () -> LaunchCostProbe.run(device, System.out, "--impls", "java-raw", "--iters", "64"));
      assertThrows(IllegalArgumentException.class, () -> LaunchCostProbe.run(device, System.out, "--iters", "10"));
    } finally {
      device.shutdown();
    }
    List<String> rows = bytes.toString(StandardCharsets.UTF_8).lines().filter(l -> l.startsWith("java\t")).toList();
    assertEquals(2 * 12, rows.size(), String.join("\n", rows));
    for (String part : List.of("launch\tlaunch", "record\tlaunch+record", "poll1\tquery", "idle\tlaunch-to-complete")) {
      assertEquals(2, rows.stream().filter(l -> l.contains("\t" + part + "\t64\t")).count(), part);
    }
    // each lone op was queried until its event completed: at least one query each
    assertTrue(rows.stream().filter(l -> l.contains("\tidle\tqueries(count)\t")).allMatch(l -> Double.parseDouble(l.split("\t")[5]) >= 1), "queries");
    assertArrayEquals(GatherKernel.image(device, 0), Files.readAllBytes(dir.resolve("gather.img")));
  }
}
