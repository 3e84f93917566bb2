package org.mori4j.bench.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mori4j.bench.Mori4jCommand;

/**
 * Issue 17, item 5: the CI version of {@code mori4j soak} (2 minutes). Three node JVMs under partition,
 * crash, stall and link-shaping faults must end with nothing corrupted, nothing hung, no notification lost
 * or duplicated and no JVM grown past the stated bounds; the command's own verdict (exit code) and the JSON
 * report are both checked. A fault the machine cannot inject (no root, no namespaces, no qdisc) does not
 * fail the test, but it must be reported as not applied with its reason; every fault kind is accounted for.
 */
class SoakCiTest {
  private static int run(String... args) {
    PrintStream saved = System.out;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
    try {
      return Mori4jCommand.commandLine().execute(args);
    } finally {
      System.setOut(saved);
      saved.print(buf.toString(StandardCharsets.UTF_8)); // the report in the test log, pass or fail
    }
  }

  @Test
  void twoMinuteSoakHasNoCorruptionHangLostNotificationOrGrowth(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("soak.json");
    long t0 = System.nanoTime();
    int code = run("soak", "--minutes", "2", "--seed", "17", "--json", json.toString(), "--log-dir", dir.resolve("logs").toString());
    System.out.printf("FIGURE soak-ci wall_s=%.1f%n", (System.nanoTime() - t0) / 1e9);
    JsonNode r = new ObjectMapper().readTree(Files.readString(json));
    try {
      checkVerdict(r, code);
    } catch (AssertionError e) {
      printThreadDumps(dir.resolve("logs"));
      throw e;
    }
  }

  /** The thread dumps of nodes the soak had to kill (kept in surefire's output; the temporary folder is not). */
  private static void printThreadDumps(Path logs) throws java.io.IOException {
    if (!Files.isDirectory(logs)) return;
    try (var files = Files.list(logs)) {
      for (Path f : files.filter(x -> x.getFileName().toString().endsWith("-threads.txt")).sorted().toList()) {
        System.out.println("==== " + f.getFileName());
        Files.readAllLines(f).stream().limit(600).forEach(System.out::println);
      }
    }
  }

  private static void checkVerdict(JsonNode r, int code) {
    assertEquals(0, r.get("corrupted").asLong(), "corrupted");
    assertEquals(0, r.get("hung").asLong(), "hung");
    assertEquals(0, r.get("notifications_lost").asLong(), "notifications lost");
    assertEquals(0, r.get("notifications_duplicated").asLong(), "notifications duplicated");
    assertTrue(r.get("transfers_done").asLong() > 0, "nothing moved");
    assertTrue(r.get("notifications_checked").asLong() > 0, "no notification checked");
    Set<String> seen = new HashSet<>();
    r.get("faults").forEach(f -> seen.add(f.get("kind").asText()));
    r.get("faults_not_applied").fieldNames().forEachRemaining(k -> seen.add(k.equals("delay/loss") ? "shape" : k));
    for (String kind : new String[] {"partition", "kill", "stall", "shape"})
      assertTrue(seen.contains(kind), kind + " neither applied nor reported as not applied: " + r.get("faults_not_applied"));
    assertTrue(r.get("faults").size() >= 2, "fewer than two faults applied in two minutes: " + r.get("faults"));
    assertEquals(0, code, "soak verdict: " + r.get("violations"));
    assertTrue(r.get("passed").asBoolean(), "violations: " + r.get("violations"));
  }

  @Test
  void refusesTooShortARunNamingTheFlag() {
    PrintStream savedErr = System.err;
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    int code;
    try {
      code = Mori4jCommand.commandLine().execute("soak", "--minutes", "0.5");
    } finally {
      System.setErr(savedErr);
    }
    assertEquals(2, code);
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("--minutes must be between 1.5 and 1440: 0.5"), err.toString(StandardCharsets.UTF_8));
  }
}
