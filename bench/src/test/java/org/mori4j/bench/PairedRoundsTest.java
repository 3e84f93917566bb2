package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The order of --rounds' sides, seen through the sides themselves: nothing is measured. */
class PairedRoundsTest {
  @Test
  void oddRoundsRunMori4jFirstAndEvenRoundsTheBaselines() {
    List<String> order = new ArrayList<>();
    List<PairedRounds.Round<String, String>> rounds = PairedRounds.run(5, k -> {
      order.add("mori4j " + k);
      return "m" + k;
    }, k -> {
      order.add("baselines " + k);
      return "b" + k;
    }, r -> order.add("end " + r.round()));
    assertEquals(List.of("mori4j 1", "baselines 1", "end 1", "baselines 2", "mori4j 2", "end 2", "mori4j 3", "baselines 3", "end 3",
        "baselines 4", "mori4j 4", "end 4", "mori4j 5", "baselines 5", "end 5"), order);
    assertEquals(List.of(PairedRounds.First.MORI4J, PairedRounds.First.BASELINES, PairedRounds.First.MORI4J, PairedRounds.First.BASELINES,
        PairedRounds.First.MORI4J), rounds.stream().map(PairedRounds.Round::first).toList());
    // each round carries its own sides' results
    assertEquals(List.of("m1/b1", "m2/b2", "m3/b3", "m4/b4", "m5/b5"), rounds.stream().map(r -> r.mori4j() + "/" + r.baselines()).toList());
  }

  @Test
  void withoutBaselinesMori4jRunsAlone() {
    List<String> order = new ArrayList<>();
    List<PairedRounds.Round<String, String>> rounds = PairedRounds.run(1, k -> {
      order.add("mori4j " + k);
      return "m";
    }, null, r -> order.add("end"));
    assertEquals(List.of("mori4j 1", "end"), order);
    assertEquals(null, rounds.getFirst().baselines());
  }

  @Test
  void aFailingSideEndsTheRun() {
    List<String> order = new ArrayList<>();
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> PairedRounds.run(3, k -> {
      order.add("mori4j " + k);
      if (k == 2) throw new IllegalStateException("target process died");
      return "m";
    }, k -> {
      order.add("baselines " + k);
      return "b";
    }, r -> order.add("end " + r.round())));
    assertEquals("target process died", e.getMessage());
    assertEquals(List.of("mori4j 1", "baselines 1", "end 1", "baselines 2", "mori4j 2"), order);
  }

  @Test
  void roundCountsBelowOneAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> PairedRounds.run(0, k -> "m", k -> "b", r -> {}));
    assertThrows(IllegalArgumentException.class, () -> PairedRounds.first(0));
  }
}
