package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mori4j.bench.XgmiPairsLayout.Pattern;
import org.mori4j.bench.XgmiPairsLayout.Shape;
import org.mori4j.io.TestGpuDevice;
import org.mori4j.transport.xgmi.HostBackedGpuRuntime;
import picocli.CommandLine;

/**
 * {@code mori4j xgmi-pairs --single-process} on transport's in-memory device with four "GPUs": ring and all-to-all
 * rows come out with every destination region checked, beside the raw copies; the check fails for a wrong route
 * and for a corrupted destination; bad flags are usage errors naming the value. The one-JVM-per-engine mode spawns
 * child JVMs, which have no such device: it is measured on a GPU machine (bench/record-xgmi-pairs.sh).
 */
class XgmiPairsOnTestDeviceTest {
  private static final String MODE = "xgmi-pairs-test-device";
  private static HostBackedGpuRuntime device;

  @BeforeAll
  static void useTheTestDevice() {
    device = TestGpuDevice.select(MODE, new HostBackedGpuRuntime(4, 0));
  }

  @AfterAll
  static void forgetTheTestDevice() {
    TestGpuDevice.forget(MODE, device);
  }

  @Test
  void ringAndAllToAllRowsWithTheirRawCopiesAndEveryRegionChecked(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("pairs.json");
    String out = CommandRun.ok("xgmi-pairs", "--gpus", "0,1,2,3", "--single-process", "--size", "48K", "--batch", "12x4K", "--iters", "3",
        "--warmup-iters", "1", "--json", json.toString(), "--machine", "test device");
    assertTrue(out.contains("4 engines on GPUs 0,1,2,3 (one JVM)"), out);
    assertTrue(out.contains("bytes verified: 8 row(s)"), out);
    assertTrue(out.contains("ring 48 KiB: aggregate avg") && out.contains("all-to-all 12 x 4 KiB: aggregate avg"), out);
    // each engine's path lists the three other engines, over XGMI
    assertEquals(4, out.lines().filter(l -> l.trim().startsWith("engine ") && l.split("-> ").length == 4).count(), out);
    JsonNode rows = new ObjectMapper().readTree(json.toFile());
    assertEquals(8, rows.size());
    List<String> seen = new ArrayList<>();
    for (JsonNode r : rows) {
      seen.add(r.get("series").asText() + "/" + r.get("pattern").asText() + "/" + r.get("shape").asText());
      assertEquals("test device", r.get("machine").asText());
      assertEquals(4, r.get("engines").asInt());
      assertTrue(r.get("aggregate_avg_gbps").asDouble() > 0);
      assertEquals(r.get("series").asText().equals(XgmiPairsCommand.ENGINE_SERIES), r.has("ratio_to_raw_avg"), r.toString());
    }
    assertEquals(List.of("mori4j xgmi/ring/48 KiB", "raw memory-memcpyPeerAsync/ring/48 KiB", "mori4j xgmi/ring/12 x 4 KiB",
        "raw memory-memcpyPeerAsync/ring/12 x 4 KiB", "mori4j xgmi/all-to-all/48 KiB", "raw memory-memcpyPeerAsync/all-to-all/48 KiB",
        "mori4j xgmi/all-to-all/12 x 4 KiB", "raw memory-memcpyPeerAsync/all-to-all/12 x 4 KiB"), seen);
  }

  @Test
  void aWrongRouteAndACorruptedDestinationFailTheCheck() throws Exception {
    // three engines, two of them on one device (a device-to-device pair beside peer pairs)
    List<Integer> devices = List.of(0, 0, 1);
    XgmiPairsLayout ring = XgmiPairsLayout.of(Pattern.RING, 3, Shape.batch(8, 4096));
    XgmiPairsLayout all = XgmiPairsLayout.of(Pattern.ALL_TO_ALL, 3, Shape.batch(8, 4096));
    long src = Math.max(ring.sourceBytes(), all.sourceBytes()), dst = Math.max(ring.destinationBytes(), all.destinationBytes());
    List<XgmiPairsMember> members = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) members.add(new XgmiPairsMember(i, devices.get(i), device, src, dst, "127.0.0.1"));
      List<String> addresses = members.stream().map(m -> m.engineDesc().host() + ":" + m.engineDesc().port()).toList();
      for (XgmiPairsMember m : members) m.connect(addresses);
      // right route: every destination matches
      for (XgmiPairsMember m : members) m.prepare(all, 41);
      long release = System.nanoTime();
      for (XgmiPairsMember m : members) m.iterate(release);
      for (XgmiPairsMember m : members) assertNull(m.check(), "all-to-all lands right");
      // a corrupted byte in engine 2's region of engine 0: found, named
      XgmiPairsLayout.Route into2 = all.into(2).getFirst();
      device.fill(members.get(2).destinationAddress() + into2.destinationOffsets()[3] + 100, (byte) 0x5A, 1);
      String bad = members.get(2).check();
      assertNotNull(bad, "a corrupted destination must fail the check");
      assertTrue(bad.contains("engine 2 (GPU1) destination") && bad.contains("block 3"), bad);
      // a wrong route: engine 0 writes its ring bytes to engine 2 instead of engine 1
      XgmiPairsLayout wrong = ring.misrouted(0, 2);
      for (XgmiPairsMember m : members) m.prepare(wrong, 42);
      release = System.nanoTime();
      for (XgmiPairsMember m : members) m.iterate(release);
      String missing = members.get(1).check(ring);
      assertNotNull(missing, "engine 1 never got engine 0's bytes");
      assertTrue(missing.contains("engine 0 -> engine 1"), missing);
    } finally {
      for (XgmiPairsMember m : members) m.close();
    }
  }

  @Test
  void aChildJvmEngineSpeaksTheProtocolAndEndsWithItsInput() throws Exception {
    // the one-JVM-per-engine mode's transport, without a GPU: replies are found among the child's other stdout lines,
    // a failed command is an ERR naming why, and the end of input ends the JVM
    XgmiPairsEngines.ProcessLink child = XgmiPairsEngines.ProcessLink.start(0);
    try {
      child.send("PATHS");
      assertEquals("ERR no engine: START first", child.receive(30_000));
      child.send("GO 1");
      assertEquals("ERR no engine: START first", child.receive(30_000));
    } finally {
      child.close();
    }
    assertTrue(child.exited(), "the child JVM ends when its input does");
  }

  @Test
  void badFlagsAreUsageErrorsNamingTheValue() {
    assertUsage("device 9 does not exist; this machine has 4 memory device(s) (0..3)", "--gpus", "0,9");
    assertUsage("--gpus 2: 1 engine; the patterns need at least 2", "--gpus", "2");
    assertUsage("unknown --pattern 'star'", "--gpus", "0,1", "--pattern", "star");
    assertUsage("--batch '4096by4K'", "--gpus", "0,1", "--batch", "4096by4K");
    assertUsage("--batch 2 x 4 KiB with --pattern all-to-all and 4 engines", "--gpus", "0,1,2,3", "--batch", "2x4K", "--size", "none");
    assertUsage("4 engine(s) on GPU0 need", "--gpus", "0,0,0,0", "--size", "20G");
    HostBackedGpuRuntime noPeers = TestGpuDevice.select(MODE + "-no-peers", new HostBackedGpuRuntime(3, 0, false));
    try {
      assertUsage("--pattern ring needs peer access GPU1 -> GPU2 (engine 1 -> engine 2)", "--gpus", "1,1,2", "--pattern", "ring");
    } finally {
      TestGpuDevice.forget(MODE + "-no-peers", noPeers);
      TestGpuDevice.select(MODE, device);
    }
  }

  private static void assertUsage(String expected, String... flags) {
    String[] args = new String[flags.length + 1];
    args[0] = "xgmi-pairs";
    System.arraycopy(flags, 0, args, 1, flags.length);
    StringWriter err = new StringWriter();
    CommandLine cl = Mori4jCommand.commandLine();
    cl.setErr(new PrintWriter(err));
    PrintStream saved = System.out;
    System.setOut(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    int code;
    try {
      code = cl.execute(args);
    } finally {
      System.setOut(saved);
    }
    assertEquals(2, code, String.join(" ", args) + ": " + err);
    assertTrue(err.toString().contains(expected), "expected '" + expected + "' in: " + err);
  }
}
