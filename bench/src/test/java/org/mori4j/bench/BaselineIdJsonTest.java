package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.mori4j.bench.baseline.Baselines;
import org.mori4j.bench.baseline.IperfBaseline;
import org.mori4j.bench.baseline.UcxPerftestBaseline;

/**
 * The baselines file of {@code bench --json}: every row the bench's baseline runners produce carries a
 * {@code baseline} key with the stable name a script compares against, beside the display {@code series}, and the
 * keys come in the documented order.
 */
class BaselineIdJsonTest {
  @Test
  void everyBaselineRowNamesItsBaseline() throws Exception {
    ResultRow r = new ResultRow(4096, 1, 4096, 0.3, 0.27, 14.4, 15.2, 14.7, 18.2);
    List<BaselineRow> rows = List.of(
        new BaselineRow(Baselines.NIO_STREAM, r, "n"),
        new BaselineRow(Baselines.NIO_PINGPONG, r, "n"),
        new BaselineRow(IperfBaseline.SERIES, ResultRow.bandwidthOnly(0, 1L << 30, 2.9), "n"),
        new BaselineRow(UcxPerftestBaseline.BW_SERIES, r, "n"),
        BaselineRow.missing(UcxPerftestBaseline.LAT_SERIES, "ucx_perftest not installed"),
        new BaselineRow("cuMemcpy H2D pinned", r, "n"),
        new BaselineRow("hipMemcpyPeerAsync GPU0->GPU1", r, "n"),
        new BaselineRow("nccl allreduce", r, "n"));
    JsonNode array = new ObjectMapper().readTree(JsonRows.baselinesToJson(rows));
    List<String> ids = new ArrayList<>();
    for (JsonNode o : array) {
      ids.add(o.get("baseline").asText());
      List<String> keys = new ArrayList<>();
      for (Iterator<String> it = o.fieldNames(); it.hasNext(); ) keys.add(it.next());
      assertEquals(List.of("series", "baseline", "msgSize", "batchSize", "totalBytes", "maxBwGBps", "avgBwGBps", "minLatUs",
          "avgLatUs", "p50LatUs", "p99LatUs", "note"), keys);
    }
    assertEquals(List.of("nio-stream", "nio-pingpong", "iperf3", "ucx-tag_bw", "ucx-tag_lat", "raw-copy", "raw-copy", "nccl"), ids);
    assertTrue(array.get(4).get("p50LatUs").isNull(), "a baseline that was not measured keeps null figures");
  }

  @Test
  void mori4jRowsHaveNoBaselineKey() throws Exception {
    JsonNode array = new ObjectMapper().readTree(JsonRows.rowsToJson(List.of(new ResultRow(4096, 128, 524288, 1, 1, 1, 1, 1, 1))));
    assertTrue(!array.get(0).has("baseline") && !array.get(0).has("series"));
  }
}
