package org.mori4j.io.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * What a receiver does with notices after {@link KvLandings#forget}: a late notice of a migration it had heard of for
 * the forgotten request reports nothing (no event, no waiter completed), a new migration under the same request id
 * is reported as before, and the memory of forgotten migrations is bounded, the earliest leaving first. The notices
 * are handed to {@link KvLandings} directly, in the order each case needs.
 */
class KvLandingsForgetTest {
  private static final int LAYERS = 4;

  private static List<KvLayersLanded> heard(KvLandings l) {
    List<KvLayersLanded> out = new ArrayList<>();
    l.subscribe(out::add);
    return out;
  }

  @Test
  void aLateNoticeOfAForgottenMigrationReportsNothingAndANewMigrationUnderTheSameIdIsHeard() {
    KvLandings l = new KvLandings("c", LAYERS, 16, 16);
    List<KvLayersLanded> events = heard(l);
    long first = KvMigrationIds.next(), retry = KvMigrationIds.next();
    l.landed("r", first, 0, LAYERS, "sender");
    assertEquals(1, events.size());
    l.landed("r", first, 0, LAYERS, "sender"); // the second path while tracked: nothing new, as before
    assertEquals(1, events.size());
    l.forget("r");
    assertEquals(1, l.forgottenMigrations());

    // the application waits for the request id again (a retry is coming); the first migration's late notices arrive
    CompletableFuture<String> again = l.whenLanded("r", 0, LAYERS);
    l.landed("r", first, 0, LAYERS, "sender");
    l.landed("r", first, 1, 2, "sender");
    l.aborted("r", first, "sender", "cancelled by the sender");
    assertEquals(1, events.size(), events.toString());
    assertFalse(again.isDone(), "a late notice of the forgotten migration completed a waiter: " + again);

    // the retry's notices have a new id: heard as a new request
    l.landed("r", retry, 0, 2, "sender");
    assertFalse(again.isDone());
    l.landed("r", retry, 2, LAYERS, "sender");
    assertNull(again.join());
    assertEquals(3, events.size(), events.toString());
    assertEquals(List.of(0, 2), List.of(events.get(1).fromLayer(), events.get(2).fromLayer()));
  }

  @Test
  void anAbortedRequestForgottenStaysQuiet() {
    KvLandings l = new KvLandings("c", LAYERS, 16, 16);
    List<KvLayersLanded> events = heard(l);
    long m = KvMigrationIds.next();
    l.landed("r", m, 0, 1, "sender");
    l.aborted("r", m, "sender", "failed");
    l.forget("r");
    l.landed("r", m, 1, 2, "sender"); // a range that had left before the failure
    l.aborted("r", m, "sender", "failed");
    assertEquals(2, events.size(), events.toString());
    assertFalse(l.whenLanded("r", 0, 1).isDone(), "the forgotten request came back with its landed layer");
  }

  @Test
  void everyMigrationHeardForTheRequestIsRemembered() {
    KvLandings l = new KvLandings("c", LAYERS, 16, 16);
    List<KvLayersLanded> events = heard(l);
    long a = KvMigrationIds.next(), b = KvMigrationIds.next();
    l.aborted("r", a, "sender", "failed");
    l.landed("r", b, 0, LAYERS, "sender"); // the id reused while still tracked
    l.forget("r");
    assertEquals(2, l.forgottenMigrations());
    l.landed("r", a, 0, 1, "sender");
    l.landed("r", b, 0, 1, "sender");
    l.aborted("r", b, "sender", "late");
    assertEquals(2, events.size(), events.toString());
    // forgetting a request nothing was heard of remembers nothing
    l.whenLanded("idle", 0, 1);
    l.forget("idle");
    l.forget("never-seen");
    assertEquals(2, l.forgottenMigrations());
  }

  @Test
  void pastTheBoundTheEarliestForgottenMigrationsAgeOutAndTheirLateNoticesAreHeardAgain() {
    int bound = 3;
    KvLandings l = new KvLandings("c", LAYERS, 16, bound);
    List<KvLayersLanded> events = heard(l);
    long[] ids = new long[5];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = KvMigrationIds.next();
      l.landed("r" + i, ids[i], 0, LAYERS, "sender");
      l.forget("r" + i);
    }
    assertEquals(bound, l.forgottenMigrations());
    assertEquals(5, events.size());
    for (int i = 0; i < ids.length; i++) l.landed("r" + i, ids[i], 0, LAYERS, "sender");
    // r0 and r1 aged out: their late notices re-create the requests (the documented limit); r2..r4 stay quiet
    assertEquals(List.of("r0", "r1"), events.subList(5, events.size()).stream().map(KvLayersLanded::requestId).toList());
  }

  @Test
  void theForgottenSetAnswersAsASetOfTheLastCapacityIdsUnderChurn() {
    // small tables, so probe runs collide, wrap and are cut by removals; ids in clusters, as one sender's are
    for (int capacity : new int[] {1, 2, 3, 7, 64}) {
      KvForgottenMigrations f = new KvForgottenMigrations(capacity);
      ArrayDeque<Long> order = new ArrayDeque<>();
      Set<Long> want = new HashSet<>(), everAdded = new HashSet<>();
      SplittableRandom rnd = new SplittableRandom(capacity);
      long base = rnd.nextLong();
      for (int step = 0; step < 20_000; step++) {
        long id = rnd.nextInt(4) == 0 ? rnd.nextLong() : base + rnd.nextInt(4 * capacity + 8);
        if (id == 0) continue;
        f.add(id);
        everAdded.add(id);
        if (want.add(id)) {
          order.add(id);
          if (order.size() > capacity) want.remove(order.poll());
        }
        assertEquals(want.size(), f.size());
        if (step % 97 == 0 || capacity <= 3)
          for (long e : everAdded) assertEquals(want.contains(e), f.contains(e), "capacity " + capacity + ", step " + step + ", id " + e);
        if (everAdded.size() > 256) everAdded.retainAll(want); // keeps the check per step short
      }
    }
    assertThrows(IllegalArgumentException.class, () -> new KvForgottenMigrations(0));
    assertThrows(IllegalArgumentException.class, () -> new KvForgottenMigrations(1).add(0));
    assertFalse(new KvForgottenMigrations(4).contains(0));
  }

  @Test
  void migrationIdsAreDistinctAndNeverZero() {
    Set<Long> ids = new HashSet<>();
    for (int i = 0; i < 10_000; i++) {
      long id = KvMigrationIds.next();
      assertTrue(id != 0);
      assertTrue(ids.add(id), "drawn twice: " + id);
    }
  }
}
