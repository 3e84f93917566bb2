package org.mori4j.bench;

import java.io.PrintStream;

/**
 * A one-line progress bar on stderr, redrawn in place with carriage returns. It is drawn only when the JVM
 * has a console, so that redirected output and CI logs (and stdout, which carries the table and may be
 * parsed) never contain control characters.
 */
public final class ProgressBar {
  private static final int WIDTH = 30;
  private final PrintStream err;
  private final int total;
  private final boolean enabled;
  private int done;
  private int lastLength;

  public ProgressBar(PrintStream err, int total, boolean enabled) {
    this.err = err;
    this.total = Math.max(1, total);
    this.enabled = enabled;
  }

  /** Enabled exactly when {@code System.console() != null}. */
  public static ProgressBar forConsole(int total) {
    return new ProgressBar(System.err, total, System.console() != null);
  }

  /** Shows that the step {@code label} is running. */
  public void show(String label) {
    if (!enabled) return;
    int filled = done * WIDTH / total;
    String line = "[" + "#".repeat(filled) + ".".repeat(WIDTH - filled) + "] " + done + "/" + total + " " + label;
    String pad = " ".repeat(Math.max(0, lastLength - line.length()));
    err.print("\r" + line + pad);
    err.flush();
    lastLength = line.length();
  }

  /** Marks one step done. */
  public void step() {
    done = Math.min(total, done + 1);
  }

  /** Clears the bar so the next output starts on a clean line. */
  public void finish() {
    if (!enabled || lastLength == 0) return;
    err.print("\r" + " ".repeat(lastLength) + "\r");
    err.flush();
    lastLength = 0;
  }
}
