package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Runs a {@code mori4j} command in this JVM for a test, requires exit 0 and returns what it printed. */
final class CommandRun {
  private CommandRun() {}

  static String ok(String... args) {
    PrintStream saved = System.out;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
    int code;
    try {
      code = Mori4jCommand.commandLine().execute(args);
    } finally {
      System.setOut(saved);
    }
    String out = buf.toString(StandardCharsets.UTF_8);
    saved.print(out); // the test log shows the table even when an assertion on it fails
    assertEquals(0, code, out);
    return out;
  }
}
