package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.typesafe.config.ConfigFactory;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.mori4j.io.PollCqMode;
import org.mori4j.io.RdmaBackendConfig;
import org.mori4j.natives.verbs.RdmaDevices;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.TransportException;

/**
 * The RDMA flags of {@code bench} and {@code serve}: a bad value is a usage error (exit 2) naming the flag and
 * the value, before any process or engine starts; {@code auto}/{@code ibverbs} without a device says to pass
 * {@code --rdma-provider software}; the software provider is labelled emulation; and the pieces the RDMA run
 * prints (the backend column, the JSON keys, the TCP ratio lines) say which backend and provider made a figure.
 */
class RdmaBenchCommandTest {
  private record Outcome(int code, String err) {}

  private static Outcome run(String... args) {
    var cl = Mori4jCommand.commandLine();
    StringWriter err = new StringWriter();
    cl.setErr(new PrintWriter(err, true));
    cl.setOut(new PrintWriter(new StringWriter(), true));
    return new Outcome(cl.execute(args), err.toString());
  }

  private static void assertUsageError(Outcome o, String... fragments) {
    assertEquals(2, o.code(), o.err());
    String firstLine = o.err().lines().findFirst().orElse("");
    for (String f : fragments) assertTrue(firstLine.contains(f), "expected '" + f + "' in: " + firstLine);
  }

  @Test
  void badProviderNamesTheFlagAndTheValue() {
    assertUsageError(run("bench", "--backend", "rdma", "--rdma-provider", "rxe"), "--rdma-provider", "'rxe'", "auto, ibverbs or software");
    assertUsageError(run("serve", "--backend", "rdma", "--rdma-provider", "rxe"), "--rdma-provider", "'rxe'", "auto, ibverbs or software");
  }

  @Test
  void badProviderFromTheConfigurationNamesTheSetting() {
    String before = System.getProperty(RdmaFlags.PROVIDER_PROPERTY);
    System.setProperty(RdmaFlags.PROVIDER_PROPERTY, "carrier-pigeon");
    ConfigFactory.invalidateCaches();
    try {
      assertUsageError(run("bench", "--backend", "rdma"), "mori4j.rdma.provider", "MORI4J_RDMA_PROVIDER", "'carrier-pigeon'");
    } finally {
      if (before == null) System.clearProperty(RdmaFlags.PROVIDER_PROPERTY);
      else System.setProperty(RdmaFlags.PROVIDER_PROPERTY, before);
      ConfigFactory.invalidateCaches();
    }
  }

  @Test
  void badPollModeAndQueuePairCountNameTheFlagAndTheValue() {
    assertUsageError(run("bench", "--backend", "rdma", "--rdma-provider", "software", "--poll-cq-mode", "SOMETIMES"),
        "--poll-cq-mode", "'SOMETIMES'", "POLLING or EVENT");
    assertUsageError(run("serve", "--backend", "rdma", "--rdma-provider", "software", "--poll-cq-mode", "busy"), "--poll-cq-mode", "'busy'");
    assertUsageError(run("bench", "--backend", "rdma", "--rdma-provider", "software", "--qp-per-transfer", "0"), "--qp-per-transfer", "0");
    assertUsageError(run("bench", "--backend", "rdma", "--rdma-provider", "software", "--qp-per-transfer", "many"), "--qp-per-transfer", "many");
  }

  @Test
  void rdmaFlagsNeedTheRdmaBackend() {
    assertUsageError(run("bench", "--rdma-provider", "software"), "--rdma-provider software needs --backend rdma");
    assertUsageError(run("bench", "--poll-cq-mode", "EVENT"), "--poll-cq-mode EVENT needs --backend rdma");
    assertUsageError(run("bench", "--backend", "xgmi", "--qp-per-transfer", "2"), "--qp-per-transfer 2 needs --backend rdma");
    assertUsageError(run("serve", "--rdma-provider", "software"), "--rdma-provider software needs --backend rdma");
    assertUsageError(run("bench", "--compare-tcp"), "--compare-tcp needs --backend rdma");
    assertUsageError(run("bench", "--no-compare-tcp"), "--no-compare-tcp needs --backend rdma");
    assertUsageError(run("bench", "--backend", "rdma", "--rdma-provider", "software", "--compare-cpu"), "--compare-cpu", "--compare-tcp");
    assertUsageError(run("bench", "--backend", "rdma", "--rdma-provider", "software", "--xgmi-single-process"), "--xgmi-single-process needs --backend xgmi");
    assertUsageError(run("bench", "--backend", "rdma", "--rdma-provider", "software", "--peer", "nowhere"), "--peer", "nowhere");
  }

  @Test
  void autoAndIbverbsWithoutADeviceSayToPassTheSoftwareProvider() {
    RdmaDevices.Inventory inv = RdmaDevices.inventory();
    assumeTrue(inv.isEmpty(), "this machine has RDMA devices " + inv.devices());
    // the default provider is the configured one (auto here): refused before anything starts, with the way out
    assertUsageError(run("bench", "--backend", "rdma"), "--backend rdma", "auto", "no RDMA device on this machine", inv.whyNone(),
        "pass --rdma-provider software", "emulation");
    assertUsageError(run("bench", "--backend", "rdma", "--rdma-provider", "ibverbs"), "--rdma-provider ibverbs", "no RDMA device",
        "pass --rdma-provider software");
    assertUsageError(run("serve", "--backend", "rdma", "--rdma-provider", "AUTO"), "--rdma-provider AUTO", "no RDMA device");
  }

  @Test
  void providerResolution() {
    RdmaFlags f = new RdmaFlags();
    f.provider = "Software";
    RdmaFlags.Provider soft = f.resolve(IllegalArgumentException::new, m -> { throw new AssertionError("software needs no device list"); });
    assertEquals("software", soft.name());
    assertTrue(soft.emulated());
    assertEquals("rdma (software provider: emulation)", soft.label());
    assertEquals(List.of("-Dmori4j.rdma.provider=software"), RdmaFlags.jvmArgs(soft));

    f.provider = "auto";
    RdmaFlags.Provider ibv = f.resolve(IllegalArgumentException::new, m -> new ListedVerbsProvider("ibverbs", List.of("mlx5_0", "mlx5_1")));
    assertEquals("ibverbs", ibv.name());
    assertFalse(ibv.emulated());
    assertEquals("rdma (ibverbs provider: mlx5_0,mlx5_1)", ibv.label());
    IllegalArgumentException none = assertThrows(IllegalArgumentException.class, () -> f.resolve(IllegalArgumentException::new, m -> {
      throw new TransportException(TransportError.RDMA_OP, "no RDMA device on this machine: libibverbs lists none");
    }));
    assertTrue(none.getMessage().startsWith("--backend rdma with --rdma-provider auto: no RDMA device on this machine: libibverbs lists none; "
        + "pass --rdma-provider software"), none.getMessage());
  }

  @Test
  void flagsBecomeTheBackendConfigAndTheTargetsArguments() {
    RdmaFlags f = new RdmaFlags();
    RdmaBackendConfig defaults = RdmaBackendConfig.defaults();
    assertEquals(defaults, f.config(IllegalArgumentException::new));
    assertEquals(List.of(), f.asArgs());
    f.qpPerTransfer = 4;
    f.pollCqMode = "event";
    RdmaBackendConfig c = f.config(IllegalArgumentException::new);
    assertEquals(4, c.qpPerTransfer());
    assertEquals(PollCqMode.EVENT, c.pollCqMode());
    assertEquals(defaults.postBatchSize(), c.postBatchSize());
    assertEquals(List.of("--qp-per-transfer", "4", "--poll-cq-mode", "event"), f.asArgs());
  }

  @Test
  void theProviderPropertyIsSetOnlyAroundEngineCreation() {
    String before = System.getProperty(RdmaFlags.PROVIDER_PROPERTY);
    RdmaFlags.Provider soft = new RdmaFlags.Provider("software", List.of(), RdmaFlags.SOFTWARE_LABEL);
    String inside = RdmaFlags.withProvider(soft, () -> ConfigFactory.load().getString(RdmaFlags.PROVIDER_PROPERTY));
    assertEquals("software", inside);
    assertEquals(before, System.getProperty(RdmaFlags.PROVIDER_PROPERTY));
  }

  @Test
  void everyRowNamesItsBackend() {
    ResultRow r = ResultRow.fromLatencies(64L << 20, 1, new long[] {40_000_000, 50_000_000});
    ResultRow t = ResultRow.fromLatencies(64L << 20, 1, new long[] {10_000_000, 12_000_000});
    String table = ResultTable.renderWithBackend("mori4j write over " + RdmaFlags.SOFTWARE_LABEL + " beside tcp", List.of(RdmaFlags.SOFTWARE_LABEL, "tcp"),
        List.of(r, t));
    List<String> lines = table.lines().toList();
    assertTrue(lines.get(1).contains("rdma (software provider: emulation)"), table);
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("| rdma (software provider: emulation) |") && l.contains("64 MiB")), table);
    assertTrue(lines.stream().anyMatch(l -> Pattern.matches("\\| tcp +\\| +64 MiB \\|.*", l)), table);
    // the figures stay right-aligned: the last column ends at the border
    assertTrue(lines.stream().filter(l -> l.startsWith("| tcp")).allMatch(l -> l.matches(".*\\d \\|$")), table);

    String json = JsonRows.rowsToJson(List.of(r), "rdma", "software", true);
    assertTrue(json.contains("\"msgSize\": 67108864") && json.contains("\"backend\": \"rdma\", \"provider\": \"software\", \"emulation\": true}"), json);
    assertTrue(JsonRows.rowsToJson(List.of(t), "tcp", null, false).contains("\"backend\": \"tcp\", \"provider\": null, \"emulation\": false}"));
    assertEquals(java.nio.file.Path.of("r/run.tcp.json"), JsonRows.tcpRowsPath(java.nio.file.Path.of("r/run.json")));

    List<String> cmp = RdmaBench.tcpLines(RdmaFlags.SOFTWARE_LABEL, List.of(r), List.of(t));
    assertEquals(1, cmp.size());
    assertTrue(cmp.getFirst().startsWith("64 MiB x 1: rdma (software provider: emulation) avg BW"), cmp.getFirst());
    assertTrue(cmp.getFirst().contains("% of tcp") && cmp.getFirst().endsWith("(more than 2x slower than tcp)"), cmp.getFirst());
    assertFalse(RdmaBench.tcpLines(RdmaFlags.SOFTWARE_LABEL, List.of(t), List.of(t)).getFirst().contains("slower"));
  }
}
