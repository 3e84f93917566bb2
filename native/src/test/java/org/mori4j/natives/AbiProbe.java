package org.mori4j.natives;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * Compiles a C probe against the real headers with gcc, runs it, and returns what it printed: one
 * {@code name value} pair per line (sizes, field offsets, constant values, and for symbol checks the name a
 * header macro expands to). ABI conformance tests compare those with the Java layouts and constants.
 *
 * <p>A missing gcc or header is not a mismatch: {@link #compileAndRun} then returns null with the reason in
 * {@link #lastFailure} so the test can skip visibly, except when the environment sets
 * {@code MORI4J_ABI_REQUIRED=1} (CI does), where it fails the test instead, so a CI machine that lost a
 * package cannot pass by skipping. Any other compile error (a field the header does not have) always fails:
 * it is a binding naming something the header lacks.
 */
public final class AbiProbe {
  /** The environment variable that turns "toolchain or header missing" from a skip into a failure. */
  public static final String REQUIRED_ENV = "MORI4J_ABI_REQUIRED";

  public static volatile String lastFailure = "";

  private AbiProbe() {}

  /** True when {@code MORI4J_ABI_REQUIRED=1}: nothing an ABI test needs may be missing. */
  public static boolean required() {
    return "1".equals(System.getenv(REQUIRED_ENV));
  }

  /**
   * Skips the calling test with {@code reason} when {@code available} is false, or fails it when
   * {@link #required()}: for anything an ABI test needs (gcc, a header, a library to resolve symbols in).
   */
  public static void assumeAvailable(boolean available, String reason) {
    if (available) return;
    if (required()) Assertions.fail(REQUIRED_ENV + "=1 but " + reason);
    Assumptions.abort(reason);
  }

  /**
   * Compiles {@code resource} (a .c file on the test classpath) with {@code extraFlags} and runs it.
   * Lines of the form {@code name number} become map entries (decimal or 0x hex); other lines are left out
   * (see {@link #compileAndRunText}).
   */
  public static Map<String, Long> compileAndRun(String resource, String... extraFlags) {
    Map<String, String> text = compileAndRunText(resource, extraFlags);
    if (text == null) return null;
    Map<String, Long> values = new LinkedHashMap<>();
    text.forEach((k, v) -> {
      try {
        values.put(k, Long.decode(v));
      } catch (NumberFormatException e) {
        // a text line (e.g. a symbol name) for compileAndRunText's callers
      }
    });
    return values;
  }

  /** Like {@link #compileAndRun}, with every {@code name value} line kept as text. */
  public static Map<String, String> compileAndRunText(String resource, String... extraFlags) {
    try (var in = AbiProbe.class.getResourceAsStream(resource)) {
      if (in == null) throw new IllegalArgumentException("no probe source " + resource);
      Path dir = Files.createTempDirectory("mori4j-abi");
      Path src = dir.resolve(Path.of(resource).getFileName().toString());
      Files.write(src, in.readAllBytes());
      Path exe = dir.resolve("probe");
      List<String> cmd = new ArrayList<>(List.of("gcc", "-std=gnu11", "-O0", "-o", exe.toString(), src.toString()));
      cmd.addAll(List.of(extraFlags));
      Process cc = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String ccOut = new String(cc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!cc.waitFor(120, TimeUnit.SECONDS) || cc.exitValue() != 0) {
        String head = ccOut.lines().limit(8).reduce("", (a, b) -> a + b + " | ");
        if (ccOut.contains("fatal error") && ccOut.contains("No such file or directory")) {
          return unavailable("a header for " + resource + " is missing: " + head);
        }
        throw new AssertionError("the probe " + resource + " does not compile against the real header (a binding names"
            + " something the header does not have?): " + head);
      }
      Process run = new ProcessBuilder(exe.toString()).redirectErrorStream(true).start();
      String out = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!run.waitFor(60, TimeUnit.SECONDS) || run.exitValue() != 0) {
        throw new AssertionError("probe " + resource + " failed: " + out);
      }
      Map<String, String> values = new LinkedHashMap<>();
      for (String line : out.split("\n")) {
        String[] f = line.trim().split("\\s+");
        if (f.length == 2) values.put(f[0], f[1]);
      }
      return values;
    } catch (IOException e) {
      return unavailable("cannot run gcc: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      lastFailure = "interrupted";
      return null;
    }
  }

  private static Map<String, String> unavailable(String reason) {
    lastFailure = reason;
    if (required()) Assertions.fail(REQUIRED_ENV + "=1 but " + reason);
    return null;
  }
}
