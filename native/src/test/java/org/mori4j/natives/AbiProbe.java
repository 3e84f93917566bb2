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

/**
 * Compiles a C probe against the real headers with gcc, runs it, and returns what it printed: one
 * {@code name value} pair per line (sizes, field offsets, constant values). ABI conformance tests compare
 * those numbers with the Java layouts and constants. {@link #compileAndRun} returns null, with the reason
 * in {@link #lastFailure}, when gcc or a header is missing, so tests can skip visibly.
 */
public final class AbiProbe {
  public static volatile String lastFailure = "";

  private AbiProbe() {}

  /**
   * Compiles {@code resource} (a .c file on the test classpath) with {@code extraFlags} and runs it.
   * Lines of the form {@code name value} become map entries; values are parsed as longs.
   */
  public static Map<String, Long> compileAndRun(String resource, String... extraFlags) {
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
        lastFailure = "gcc failed for " + resource + ": " + ccOut.lines().limit(5).reduce("", (a, b) -> a + b + " | ");
        return null;
      }
      Process run = new ProcessBuilder(exe.toString()).redirectErrorStream(true).start();
      String out = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!run.waitFor(60, TimeUnit.SECONDS) || run.exitValue() != 0) {
        lastFailure = "probe " + resource + " failed: " + out;
        return null;
      }
      Map<String, Long> values = new LinkedHashMap<>();
      for (String line : out.split("\n")) {
        String[] f = line.trim().split("\\s+");
        if (f.length == 2) values.put(f[0], Long.decode(f[1]));
      }
      return values;
    } catch (IOException e) {
      lastFailure = "cannot run gcc: " + e.getMessage();
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      lastFailure = "interrupted";
      return null;
    }
  }
}
