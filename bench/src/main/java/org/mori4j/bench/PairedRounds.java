package org.mori4j.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

/**
 * The order of {@code bench --rounds N}: each round runs mori4j's sweep and every baseline, mori4j first in odd rounds
 * and the baselines first in even ones, so that neither side always gets the quieter minute of a shared machine (the
 * 2-core VM's neighbours move figures by 10-30% from minute to minute). The sides are functions of the 1-based round
 * number, which is also the seam a test uses to see the order without measuring anything.
 */
final class PairedRounds {
  private PairedRounds() {}

  /** Which side of a round runs first. */
  enum First { MORI4J, BASELINES }

  /** What round {@code round} measured on each side, and which ran first. */
  record Round<M, B>(int round, First first, M mori4j, B baselines) {}

  /** Called after both sides of a round ran (the round's comparison is printed there). */
  interface RoundEnd<M, B> {
    void ended(Round<M, B> round);
  }

  /** Odd rounds mori4j first, even rounds the baselines first (round 1 is a plain run's order). */
  static First first(int round) {
    if (round < 1) throw new IllegalArgumentException("rounds are numbered from 1: " + round);
    return round % 2 == 1 ? First.MORI4J : First.BASELINES;
  }

  /**
   * Runs {@code rounds} rounds of both sides in {@link #first}'s order; {@code baselines} null runs mori4j alone
   * (a single run with {@code --no-baselines}). An exception of either side ends the run.
   */
  static <M, B> List<Round<M, B>> run(int rounds, IntFunction<M> mori4j, IntFunction<B> baselines, RoundEnd<M, B> end) {
    if (rounds < 1) throw new IllegalArgumentException("rounds must be at least 1: " + rounds);
    List<Round<M, B>> out = new ArrayList<>(rounds);
    for (int k = 1; k <= rounds; k++) {
      First first = first(k);
      B b = null;
      if (first == First.BASELINES && baselines != null) b = baselines.apply(k);
      M m = mori4j.apply(k);
      if (first == First.MORI4J && baselines != null) b = baselines.apply(k);
      Round<M, B> r = new Round<>(k, first, m, b);
      end.ended(r);
      out.add(r);
    }
    return out;
  }
}
