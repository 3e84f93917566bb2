package org.mori4j.bench.baseline;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * A free TCP port on loopback for tools that must be told their port in advance (iperf3, ucx_perftest). The
 * kernel picks it by binding port 0; there is a short window in which another process could take it, which
 * the callers accept: they fail with the tool's own message and the bench reports that.
 */
public final class FreePort {
  private FreePort() {}

  public static int onLoopback() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      s.setReuseAddress(true);
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free loopback port", e);
    }
  }

  /**
   * Waits until something listens on TCP {@code port} (any address); on systems without
   * {@code /proc/net/tcp} it just waits one second and returns true.
   */
  public static boolean awaitListening(int port, Duration timeout, ProcessHandle owner) throws InterruptedException {
    List<Path> tables = List.of(Path.of("/proc/net/tcp"), Path.of("/proc/net/tcp6"));
    if (tables.stream().noneMatch(Files::isReadable)) {
      Thread.sleep(1000);
      return true;
    }
    String needle = String.format(Locale.ROOT, ":%04X ", port);
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline && owner.isAlive()) {
      for (Path t : tables) {
        try {
          for (String line : Files.readAllLines(t)) {
            String[] f = line.trim().split("\\s+");
            // f[1] = local address:port, f[3] = state; 0A is LISTEN
            if (f.length > 3 && (f[1] + " ").endsWith(needle) && f[3].equals("0A")) return true;
          }
        } catch (IOException ignored) {
          // a table can vanish in a container; try the other one and the next round
        }
      }
      Thread.sleep(20);
    }
    return false;
  }
}
