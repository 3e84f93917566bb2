package org.mori4j.bench.baseline;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.mori4j.transport.xgmi.HostBackedGpuRuntime;

/**
 * The staging-socket probe on the in-memory test device: every kind, direction and cut gets a row of the asked number
 * of positive latencies per round, its buffers are freed, and kinds that need a GPU runtime are refused without one.
 */
class StagingSocketProbeTest {
  @Test
  void everyKindDirectionAndCutIsMeasuredAndFreed() throws Exception {
    HostBackedGpuRuntime device = new HostBackedGpuRuntime(1, 0);
    int before = device.liveAllocations();
    StagingSocketProbe.Result r = StagingSocketProbe.run(device, 0, 256 << 10, 3, 2, List.of("pinned", "arena", "registered"));
    assertEquals(24, r.rows().size(), r.rows().keySet().toString());
    assertTrue(r.rows().containsKey("in registered pieces dev") && r.rows().containsKey("memcpy pinned whole hot"), r.rows().keySet().toString());
    for (var e : r.rows().entrySet()) {
      assertEquals(2, e.getValue().size(), e.getKey());
      for (long[] round : e.getValue()) assertTrue(round.length == 3 && Arrays.stream(round).allMatch(ns -> ns > 0), e.getKey());
    }
    assertEquals(24, r.lines(256 << 10).size());
    assertEquals(before, device.liveAllocations(), "the probe's device buffer is freed");
  }

  @Test
  void theStagerCutCoversThePayloadAndKindsNeedARuntime() {
    long[] cut = StagingSocketProbe.stagerCut(1 << 20);
    assertEquals(1 << 20, Arrays.stream(cut).sum());
    assertEquals(64 << 10, cut[0]);
    assertEquals(64 << 10, cut[5]);
    var e = assertThrows(IllegalArgumentException.class, () -> StagingSocketProbe.run(null, -1, 1 << 20, 1, 1, List.of("pinned")));
    assertTrue(e.getMessage().contains("--kinds pinned"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> StagingSocketProbe.run(null, -1, 100, 1, 1, List.of("arena")));
  }
}
