package org.mori4j.bench.baseline;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.mori4j.bench.BaselineRow;
import org.mori4j.bench.ResultRow;

/**
 * iperf3 single-stream TCP on loopback: the kernel's own best for one connection, the ceiling any user-space
 * transport over one socket pair can approach. Server {@code iperf3 -s -1 -B 127.0.0.1 -p PORT --forceflush}
 * (one test, then it exits; --forceflush so its log reaches us unbuffered when it fails), client
 * {@code iperf3 -c 127.0.0.1 -p PORT -t SECONDS -J}, started once the server's socket listens; the figure is {@code end.sum_received.bits_per_second},
 * what the receiver actually got, reported as GB/s (10^9 bytes).
 */
public final class IperfBaseline {
  public static final String SERIES = "iperf3 single-stream";
  private static final Pattern SUM_RECEIVED = Pattern.compile("\"sum_received\"\\s*:\\s*\\{([^}]*)}");
  private static final Pattern BPS = Pattern.compile("\"bits_per_second\"\\s*:\\s*([0-9.eE+-]+)");
  private static final Pattern BYTES = Pattern.compile("\"bytes\"\\s*:\\s*([0-9]+)");

  private IperfBaseline() {}

  /** Runs iperf3 for {@code seconds}, or says why it could not. */
  public static BaselineRow run(int seconds) {
    if (BoundedProcess.onPath("iperf3").isEmpty()) return BaselineRow.missing(SERIES, "iperf3 not installed");
    int port = FreePort.onLoopback();
    String p = Integer.toString(port);
    try (BoundedProcess server = BoundedProcess.start(
        List.of("iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", p, "--forceflush"), Map.of())) {
      if (!FreePort.awaitListening(port, Duration.ofSeconds(10), server.handle()))
        return BaselineRow.missing(SERIES, "iperf3 server did not start: " + server.tail(3));
      try (BoundedProcess client = BoundedProcess.start(
          List.of("iperf3", "-c", "127.0.0.1", "-p", p, "-t", Integer.toString(seconds), "-J"), Map.of())) {
        Optional<Integer> rc = client.awaitExit(Duration.ofSeconds(seconds + 30L));
        if (rc.isEmpty()) return BaselineRow.missing(SERIES, "iperf3 client timed out");
        String json = String.join("\n", client.lines());
        OptionalDouble bps = receivedBitsPerSecond(json);
        if (rc.get() != 0 || bps.isEmpty())
          return BaselineRow.missing(SERIES, "iperf3 failed (exit " + rc.get() + "): " + client.tail(3));
        return new BaselineRow(SERIES, ResultRow.bandwidthOnly(0, receivedBytes(json), bps.getAsDouble() / 8 / 1e9),
            "iperf3 -c 127.0.0.1 -t " + seconds + " (loopback, 1 stream), receiver side");
      }
    } catch (Exception e) {
      if (e instanceof InterruptedException) Thread.currentThread().interrupt();
      return BaselineRow.missing(SERIES, "iperf3 failed: " + e);
    }
  }

  /** {@code end.sum_received.bits_per_second} of iperf3's JSON report (the object is flat, so a pattern suffices). */
  static OptionalDouble receivedBitsPerSecond(String json) {
    Matcher m = SUM_RECEIVED.matcher(json);
    if (!m.find()) return OptionalDouble.empty();
    Matcher b = BPS.matcher(m.group(1));
    return b.find() ? OptionalDouble.of(Double.parseDouble(b.group(1))) : OptionalDouble.empty();
  }

  static long receivedBytes(String json) {
    Matcher m = SUM_RECEIVED.matcher(json);
    if (!m.find()) return 0;
    Matcher b = BYTES.matcher(m.group(1));
    return b.find() ? Long.parseLong(b.group(1)) : 0;
  }
}
