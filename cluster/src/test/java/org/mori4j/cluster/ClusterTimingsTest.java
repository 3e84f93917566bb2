package org.mori4j.cluster;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.cluster.testnode.Nodes.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.mori4j.cluster.testnode.NodeProcess;

/**
 * Issue 5, acceptance 4: measures, on this machine, how long a new member takes from its start until every
 * other member has registered its engine, and how long after a SIGKILL each survivor sees its first
 * ERR_PEER_LOST (and the cluster declares the engine lost, and removes the member). Two members run
 * throughout; a third is started, joined, written to by both and killed, {@code mori4j.cluster.timings}
 * times. It prints FIGURE lines and medians; nothing is asserted beyond the 15 s bound. It runs only
 * when asked ({@code -Dmori4j.cluster.timings=5}), since it takes about 25 s a repetition.
 */
class ClusterTimingsTest {
  private static final Duration START = Duration.ofSeconds(90);

  @Test
  void startToRegisteredEverywhereAndKillToFirstPeerLost() throws Exception {
    String reps = System.getProperty("mori4j.cluster.timings", "");
    Assumptions.assumeTrue(reps.matches("[1-9][0-9]*"), "timings are measured only when asked: -Dmori4j.cluster.timings=<repetitions>");
    int n = Integer.parseInt(reps);
    long pid = ProcessHandle.current().pid();
    List<NodeProcess> procs = new ArrayList<>();
    List<Long> launchToRegistered = new ArrayList<>(), systemToRegistered = new ArrayList<>(), launchToSystem = new ArrayList<>();
    List<Long> systemToReady = new ArrayList<>(), systemToUp = new ArrayList<>(), upToRegistered = new ArrayList<>();
    List<Long> killToLost = new ArrayList<>(), killToDeclared = new ArrayList<>(), killToRemoved = new ArrayList<>();
    try {
      NodeProcess a = NodeProcess.start("a", List.of(), Map.of(), "127.0.0.1", 0, "timing-a-" + pid, 0, List.of());
      procs.add(a);
      Ready ra = awaitReady(a, START);
      NodeProcess b = NodeProcess.start("b", List.of(), Map.of(), "127.0.0.1", 0, "timing-b-" + pid, 1, List.of(ra.hostPort()));
      procs.add(b);
      Ready rb = awaitReady(b, START);
      exchangePeers(List.of(ra, rb));
      awaitRegistered(a, 0, Set.of(rb.key()), Duration.ofSeconds(60));
      awaitRegistered(b, 0, Set.of(ra.key()), Duration.ofSeconds(60));
      a.send("write-loop");
      b.send("write-loop");
      List<Ready> stay = List.of(ra, rb);

      for (int k = 0; k < n; k++) {
        Thread.sleep(2000); // let the two settle after the previous removal
        String key = "timing-c-" + pid + "-" + k;
        int[] from = {a.size(), b.size()};
        NodeProcess c = NodeProcess.start("c" + k, List.of(), Map.of(), "127.0.0.1", 0, key, 2, List.of(ra.hostPort(), rb.hostPort()));
        procs.add(c);
        Ready rc = awaitReady(c, START);
        long systemStart = Long.parseLong(c.lines("STARTED").get(0).words()[2]);
        long registered = 0;
        for (int i = 0; i < 2; i++) {
          NodeProcess s = stay.get(i).node();
          long t = s.awaitFrom(from[i], l -> l.startsWith("REGISTERED ") && registered(l).contains(key), Duration.ofSeconds(60),
              "registration of " + key).at();
          registered = Math.max(registered, t);
        }
        long up = c.await(l -> l.startsWith("MEMBER ") && l.contains("MemberUp " + rc.address()), Duration.ofSeconds(30),
            "its own MemberUp").at();
        systemToReady.add(rc.at() - systemStart);
        systemToUp.add(up - systemStart);
        upToRegistered.add(registered - up);
        launchToRegistered.add(registered - c.launchedAt);
        systemToRegistered.add(registered - systemStart);
        launchToSystem.add(systemStart - c.launchedAt);
        for (Ready s : stay) s.node().send("peer " + rc.desc());
        c.send("peer " + ra.desc());
        c.send("peer " + rb.desc());
        // both write to the new node for a moment before it dies
        Thread.sleep(1500);
        for (Ready s : stay) {
          var st = stats(s.node());
          assertTrue(num(st, key, "ok") > 0, s.key() + " moved nothing to " + key);
          assertEquals(0, num(st, key, "fail"), s.key() + " -> " + key + " failed before the kill:\n" + s.node().tail(30));
        }
        int[] before = {a.size(), b.size()};
        long killAt = System.currentTimeMillis();
        assertEquals(137, c.kill(), "SIGKILL exit status");
        long lost = 0, declared = 0, removed = 0;
        for (int i = 0; i < 2; i++) {
          NodeProcess s = stay.get(i).node();
          String peer = " " + key + " ";
          long l1 = s.awaitFrom(before[i], l -> l.startsWith("FAIL ") && l.contains(peer) && l.contains("ERR_PEER_LOST"),
              Duration.ofSeconds(25), "first ERR_PEER_LOST to " + key).at() - killAt;
          long l2 = s.awaitFrom(before[i], l -> l.startsWith("FAIL ") && l.contains(peer) && l.contains("was lost: member " + rc.address()),
              Duration.ofSeconds(25), key + " declared lost").at() - killAt;
          long l3 = s.awaitFrom(before[i], l -> l.startsWith("MEMBER ") && l.contains("MemberRemoved " + rc.address()),
              Duration.ofSeconds(60), key + " removed").at() - killAt;
          killToLost.add(l1);
          killToDeclared.add(l2);
          killToRemoved.add(l3);
          assertTrue(l1 <= 15_000 && l2 <= 15_000, stay.get(i).key() + ": ERR_PEER_LOST " + l1 + " ms, declared lost " + l2 + " ms after the kill");
          System.out.println("FIGURE kill rep=" + k + " survivor=" + stay.get(i).key() + " kill_to_first_peer_lost_ms=" + l1
              + " kill_to_engine_declared_lost_ms=" + l2 + " kill_to_member_removed_ms=" + l3);
        }
        for (Ready s : stay) s.node().send("forget " + key);
        System.out.println("FIGURE start rep=" + k + " launch_to_system_start_ms=" + (systemStart - c.launchedAt)
            + " launch_to_registered_everywhere_ms=" + (registered - c.launchedAt)
            + " system_start_to_registered_everywhere_ms=" + (registered - systemStart)
            + " (system_start_to_ready_ms=" + (rc.at() - systemStart) + " system_start_to_member_up_ms=" + (up - systemStart)
            + " member_up_to_registered_everywhere_ms=" + (registered - up) + ")");
      }
      for (Ready s : stay) {
        var st = stats(s.node());
        Ready other = s == ra ? rb : ra;
        assertEquals(0, num(st, other.key(), "fail"), "the members that stayed failed between themselves:\n" + s.node().tail(30));
      }
      System.out.printf("MEDIAN over %d starts: launch -> registered everywhere %.0f ms; ActorSystem start -> registered everywhere %.0f ms;"
          + " launch -> ActorSystem start %.0f ms; ActorSystem start -> engine ready %.0f ms, -> member Up %.0f ms;"
          + " member Up -> registered everywhere %.0f ms%n", n, median(launchToRegistered), median(systemToRegistered), median(launchToSystem),
          median(systemToReady), median(systemToUp), median(upToRegistered));
      System.out.printf("MEDIAN over %d kills x 2 survivors: kill -> first ERR_PEER_LOST %.0f ms; kill -> engine declared lost %.0f ms;"
          + " kill -> member removed %.0f ms%n", n, median(killToLost), median(killToDeclared), median(killToRemoved));
      System.out.println("RAW launch_to_registered=" + launchToRegistered + " system_to_registered=" + systemToRegistered
          + " launch_to_system=" + launchToSystem + " system_to_ready=" + systemToReady + " system_to_up=" + systemToUp
          + " up_to_registered=" + upToRegistered + " kill_to_first_peer_lost=" + killToLost + " kill_to_declared_lost=" + killToDeclared
          + " kill_to_removed=" + killToRemoved);
    } finally {
      for (NodeProcess p : procs) p.close();
    }
  }
}
