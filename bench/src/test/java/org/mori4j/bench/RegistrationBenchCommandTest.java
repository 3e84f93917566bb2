package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code register-bench} end to end on small counts (the recorded 1,000 / 10,000 runs are in bench/results), and
 * {@code info --probe}: both start real engines on this machine. Figures are printed, never asserted.
 */
class RegistrationBenchCommandTest {
  @Test
  void registerBenchPrintsARowPerCountAndViewsCostNoBackendRegistration() {
    String out = CommandRun.ok("register-bench", "--regions", "20,100", "--repeat", "1");
    for (int n : new int[] {20, 100}) {
      Matcher m = Pattern.compile("(?m)^\\s+" + n + " \\|\\s+[0-9.]+\\s+[0-9.]+\\s+[0-9.]+ \\|\\s+[0-9.]+\\s+[0-9.]+ \\| (\\d+)$").matcher(out);
      assertTrue(m.find(), "a row for " + n + " regions:\n" + out);
      assertEquals("0", m.group(1), "views are served by the range cache:\n" + out);
    }
    // per count: the regions one by one, in bulk, and as views, plus the allocation the views are cut from
    assertTrue(out.contains("engine totals: 362 regions in"), out);
  }

  @Test
  void badArgumentsAreRefusedByName() {
    int code = Mori4jCommand.commandLine().execute("register-bench", "--regions", "0");
    assertEquals(CommandLine.ExitCode.USAGE, code);
    code = Mori4jCommand.commandLine().execute("register-bench", "--backend", "nvlink");
    assertEquals(CommandLine.ExitCode.USAGE, code);
  }

  @Test
  void infoProbeStartsEnginesAndExplainsTheHostPair() {
    String out = CommandRun.ok("info", "--probe");
    assertTrue(out.contains("createBackend(TCP): started"), out);
    assertTrue(out.contains("host <-> host: TCP direct") || out.contains("host <-> host: RDMA direct"), out);
    assertTrue(out.contains("not XGMI: "), "every other backend is named with its reason:\n" + out);
  }
}
