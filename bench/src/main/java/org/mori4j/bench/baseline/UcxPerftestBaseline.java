package org.mori4j.bench.baseline;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.mori4j.bench.BaselineRow;
import org.mori4j.bench.ResultRow;

/**
 * UCX's {@code ucx_perftest} over its TCP transport on loopback ({@code UCX_TLS=tcp,self},
 * {@code UCX_NET_DEVICES=lo}): the figure the domain's C transport reaches on the same sockets. Two tests, each
 * against a fresh server (a {@code ucx_perftest -p PORT} server answers one test and exits):
 * {@code tag_bw -s 67108864 -n 50 -w 5} and {@code tag_lat -s 4096 -n 10000 -w 1000}, with {@code -v} for
 * its CSV summary. UCX reports MB/s as 2^20 bytes per second (converted here to GB/s of 10^9 bytes), and its
 * latency tests report one-way latency, half the round trip; the rows here give the round trip (twice UCX's
 * figure) so they compare with the NIO ping-pong and the mori4j write-and-await, and the note says so.
 */
public final class UcxPerftestBaseline {
  public static final String BW_SERIES = "ucx tag_bw";
  public static final String LAT_SERIES = "ucx tag_lat";
  public static final long BW_SIZE = 64L << 20;
  static final long LAT_SIZE = 4096;

  private UcxPerftestBaseline() {}

  /**
   * The two figures parsed from one CSV line of {@code -v} output.
   *
   * @param p50Us  the percentile column (50th by default; per-message post overhead in bw tests)
   * @param avgUs  average latency (lat tests) or time per message (bw tests)
   * @param avgMBs average bandwidth in UCX's MB/s (2^20 bytes)
   */
  record Csv(double p50Us, double avgUs, double avgMBs) {}

  /** Runs both tests; one row each, or the reason it is missing. */
  public static List<BaselineRow> run() {
    List<BaselineRow> rows = new ArrayList<>();
    if (BoundedProcess.onPath("ucx_perftest").isEmpty()) {
      rows.add(BaselineRow.missing(BW_SERIES, "ucx_perftest not installed"));
      rows.add(BaselineRow.missing(LAT_SERIES, "ucx_perftest not installed"));
      return rows;
    }
    rows.add(test(BW_SERIES, List.of("-t", "tag_bw", "-s", Long.toString(BW_SIZE), "-n", "50", "-w", "5")));
    rows.add(test(LAT_SERIES, List.of("-t", "tag_lat", "-s", Long.toString(LAT_SIZE), "-n", "10000", "-w", "1000")));
    return rows;
  }

  private static BaselineRow test(String series, List<String> args) {
    Map<String, String> env = Map.of("UCX_TLS", "tcp,self", "UCX_NET_DEVICES", "lo");
    int portNumber = FreePort.onLoopback();
    String port = Integer.toString(portNumber);
    try (BoundedProcess server = BoundedProcess.start(List.of("ucx_perftest", "-p", port), env)) {
      if (!FreePort.awaitListening(portNumber, Duration.ofSeconds(10), server.handle()))
        return BaselineRow.missing(series, "ucx_perftest server did not start: " + server.tail(3));
      List<String> cmd = new ArrayList<>(List.of("ucx_perftest", "127.0.0.1", "-p", port));
      cmd.addAll(args);
      cmd.add("-v");
      try (BoundedProcess client = BoundedProcess.start(cmd, env)) {
        Optional<Integer> rc = client.awaitExit(Duration.ofSeconds(120));
        if (rc.isEmpty()) return BaselineRow.missing(series, "ucx_perftest timed out after 120 s");
        Optional<Csv> csv = parseCsv(client.lines());
        if (rc.get() != 0 || csv.isEmpty())
          return BaselineRow.missing(series, "ucx_perftest failed (exit " + rc.get() + "): " + client.tail(2));
        return toRow(series, csv.get());
      }
    } catch (Exception e) {
      if (e instanceof InterruptedException) Thread.currentThread().interrupt();
      return BaselineRow.missing(series, "ucx_perftest failed: " + e);
    }
  }

  static BaselineRow toRow(String series, Csv c) {
    if (series.equals(BW_SERIES)) {
      double gbps = c.avgMBs() * (1 << 20) / 1e9;
      return new BaselineRow(series, new ResultRow(BW_SIZE, 1, BW_SIZE, Double.NaN, gbps, Double.NaN, c.avgUs(),
          Double.NaN, Double.NaN), "UCX_TLS=tcp,self lo; -s 64MiB -n 50; Avg Lat = time per message");
    }
    return new BaselineRow(series, new ResultRow(LAT_SIZE, 1, LAT_SIZE, Double.NaN, Double.NaN, Double.NaN,
        2 * c.avgUs(), 2 * c.p50Us(), Double.NaN), "UCX_TLS=tcp,self lo; -n 10000; round trip = 2 x UCX one-way latency");
  }

  /** Finds the line after the {@code iterations,...} CSV header. */
  static Optional<Csv> parseCsv(List<String> lines) {
    for (int i = 0; i + 1 < lines.size(); i++) {
      String h = lines.get(i).trim();
      if (!h.startsWith("iterations,")) continue;
      List<String> header = List.of(h.split(","));
      String[] v = lines.get(i + 1).trim().split(",");
      int pct = indexStartingWith(header, "50.0_percentile");
      int avgLat = header.indexOf("avg_lat");
      int avgBw = header.indexOf("avg_bw");
      if (pct < 0 || avgLat < 0 || avgBw < 0 || v.length < header.size()) return Optional.empty();
      try {
        return Optional.of(new Csv(Double.parseDouble(v[pct].trim()), Double.parseDouble(v[avgLat].trim()),
            Double.parseDouble(v[avgBw].trim())));
      } catch (NumberFormatException e) {
        return Optional.empty();
      }
    }
    return Optional.empty();
  }

  private static int indexStartingWith(List<String> header, String prefix) {
    for (int i = 0; i < header.size(); i++) if (header.get(i).startsWith(prefix)) return i;
    return -1;
  }
}
