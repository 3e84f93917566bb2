package org.mori4j.bench.baseline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.mori4j.bench.BaselineRow;
import org.mori4j.bench.ResultRow;

class BaselineParsersTest {
  @Test
  void iperfReceiverFigureIsTaken() {
    String json = """
        {"end": {"sum_sent": {"start": 0, "bytes": 3811573760, "bits_per_second": 30491766802.296337, "retransmits": 0},
                 "sum_received": {"start": 0, "end": 1.000232, "seconds": 1.000232, "bytes": 3811573760,
                                  "bits_per_second": 30485517439.95393, "sender": true}}}""";
    assertEquals(30485517439.95393, IperfBaseline.receivedBitsPerSecond(json).orElseThrow(), 1e-3);
    assertEquals(3811573760L, IperfBaseline.receivedBytes(json));
    assertTrue(IperfBaseline.receivedBitsPerSecond("{\"error\": \"unable to connect\"}").isEmpty());
  }

  @Test
  void ucxCsvIsParsedAndConverted() {
    List<String> out = List.of("+----+", "| Test: tag match latency |",
        "iterations,50.0_percentile_lat,avg_lat,overall_lat,avg_bw,overall_bw,avg_mr,overall_mr",
        "10000,8.342,8.464,8.464,461.49,461.49,118141,118141");
    UcxPerftestBaseline.Csv c = UcxPerftestBaseline.parseCsv(out).orElseThrow();
    assertEquals(8.342, c.p50Us(), 1e-9);
    BaselineRow lat = UcxPerftestBaseline.toRow(UcxPerftestBaseline.LAT_SERIES, c);
    assertEquals(2 * 8.342, lat.row().p50LatUs(), 1e-9); // round trip = 2 x one-way
    assertEquals(2 * 8.464, lat.row().avgLatUs(), 1e-9);

    List<String> bw = List.of("iterations,50.0_percentile_lat,avg_lat,overall_lat,avg_bw,overall_bw,avg_mr,overall_mr",
        "  20,11.133,14506.102,14506.102,4411.94,4411.94,69,69");
    BaselineRow row = UcxPerftestBaseline.toRow(UcxPerftestBaseline.BW_SERIES, UcxPerftestBaseline.parseCsv(bw).orElseThrow());
    assertEquals(4411.94 * 1048576 / 1e9, row.row().avgBwGBps(), 1e-9); // UCX MB/s are MiB/s
    assertTrue(UcxPerftestBaseline.parseCsv(List.of("connect() failed")).isEmpty());
  }

  @Test
  void nioBaselineMovesMessagesOverLoopback() throws Exception {
    try (NioBaselineServer server = NioBaselineServer.start("127.0.0.1", 1 << 20)) {
      NioBaselineClient client = new NioBaselineClient("127.0.0.1", server.port());
      ResultRow r = client.measure(4096, 8, 20, 5, 0, 1 << 20);
      assertEquals(4096 * 8, r.totalBytes());
      assertTrue(r.minLatUs() > 0 && r.avgBwGBps() > 0, r.toString());
      // a batch far above the ack window and bigger than the buffer still completes (slots are reused)
      ResultRow big = client.measure(64, 5000, 2, 1, 0, 4096);
      assertEquals(64 * 5000, big.totalBytes());
    }
  }
}
