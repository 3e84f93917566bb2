package org.mori4j.cluster;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.cluster.testnode.Nodes.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.mori4j.cluster.testnode.NodeProcess;
import org.mori4j.cluster.testnode.TestNetwork;

/**
 * Issue 5, acceptance 2: three members in three JVMs, each in its own network namespace on a bridge that the
 * test builds ({@link TestNetwork}; skipped with the reason where namespaces cannot be made). One node's
 * port is set down while every node writes to every other one. The majority must find it unreachable and
 * fail transfers to it fast with ERR_PEER_LOST, and its Split Brain Resolver (keep-majority) must down it;
 * the cut-off node, in the minority, downs itself, and its coordinated shutdown must close its engine
 * cleanly (nothing of its write loop left in progress, new transfers refused) before its process exits. The
 * two others never fail a transfer between themselves. After the port is up again, a new process on the
 * same address rejoins, the engines register each other again, and transfers to and from it succeed.
 */
class ClusterPartitionTest {
  private static final Duration BOUND = Duration.ofSeconds(15);
  private static final Duration START = Duration.ofSeconds(90);
  private static final int PORT = 25520;

  @Test
  void cutOffMemberIsDownedShutsItsEngineDownAndARestartedNodeRejoins() throws Exception {
    long pid = ProcessHandle.current().pid();
    List<NodeProcess> procs = new ArrayList<>();
    try (TestNetwork net = TestNetwork.create(3)) {
      try {
        String[] keys = {"part-0-" + pid, "part-1-" + pid, "part-2-" + pid};
        List<Ready> all = startWritingMesh(net, "n", keys, Map.of(), PORT, START, procs);
        Ready r0 = all.get(0), r1 = all.get(1), r2 = all.get(2);
        NodeProcess n0 = r0.node(), n1 = r1.node(), n2 = r2.node();
        String seed0 = r0.hostPort();
        awaitEveryPairMoved(all, Duration.ofSeconds(20)); // traffic flows in every direction before the fault
        for (Ready r : all) {
          var s = stats(r.node());
          for (Ready o : all) {
            if (o == r) continue;
            assertTrue(num(s, o.key(), "ok") > 0, r.key() + " moved nothing to " + o.key() + " before the cut");
            assertEquals(0, num(s, o.key(), "fail"), r.key() + " -> " + o.key() + " failed before the cut:\n" + r.node().tail(40));
          }
        }
        List<Ready> majority = List.of(r0, r1);

        long cutAt = System.currentTimeMillis();
        net.cut(2);

        // the majority: fast ERR_PEER_LOST to the cut-off node, then it is downed and removed
        long[] firstLost = new long[2], removed = new long[2];
        for (int i = 0; i < 2; i++) {
          NodeProcess s = majority.get(i).node();
          firstLost[i] = s.await(t -> t.startsWith("FAIL ") && t.contains(" " + r2.key() + " ") && t.contains("ERR_PEER_LOST"),
              BOUND.plusSeconds(10), "ERR_PEER_LOST to the cut-off node").at() - cutAt;
          assertTrue(firstLost[i] <= BOUND.toMillis(), majority.get(i).key() + ": first ERR_PEER_LOST " + firstLost[i] + " ms after the cut");
          removed[i] = s.await(t -> t.startsWith("MEMBER ") && t.contains("MemberRemoved " + r2.address()), Duration.ofSeconds(60),
              "the cut-off member removed").at() - cutAt;
        }
        // the minority: downed by its own resolver, engine closed by the coordinated shutdown, process gone
        String shutdown = n2.await(t -> t.startsWith("SHUTDOWN "), Duration.ofSeconds(60), "coordinated shutdown of the cut-off node").text();
        assertTrue(shutdown.contains("ClusterDowning"), "the cut-off node shut down for another reason: " + shutdown);
        NodeProcess.Line closed = n2.await(t -> t.startsWith("ENGINE-CLOSED "), Duration.ofSeconds(30), "the cut-off node's engine closed");
        assertTrue(closed.text().contains(" pending=0 "), "transfers still in progress after the engine closed: " + closed.text());
        assertTrue(closed.text().contains(" newWrite=ERR_BAD_STATE ") && closed.text().contains("is closed"),
            "the closed engine should refuse new transfers: " + closed.text());
        n2.await(t -> t.startsWith("EXIT "), Duration.ofSeconds(30), "the cut-off node's exit");
        assertTrue(n2.process().waitFor(30, java.util.concurrent.TimeUnit.SECONDS), "the cut-off node's process did not exit");
        assertEquals(0, n2.process().exitValue(), "exit status of the cut-off node");
        long shutdownAt = Long.parseLong(shutdown.split(" ")[1]) - cutAt, exitAt = n2.lines("EXIT").get(0).at() - cutAt;
        System.out.println("cut-off node: " + shutdown + "\ncut-off node: " + closed.text());
        // what the cut-off node's own transfers ended with: lost peers, then its closed engine; nothing hung
        Map<String, Map<String, String>> minority = new java.util.HashMap<>();
        for (NodeProcess.Line l : n2.lines("STATS")) {
          Map<String, String> kv = new java.util.HashMap<>();
          for (String w : l.words()) if (w.indexOf('=') > 0) kv.put(w.substring(0, w.indexOf('=')), w.substring(w.indexOf('=') + 1));
          minority.put(l.words()[1], kv);
        }
        for (Ready o : majority) {
          Map<String, String> kv = minority.get(o.key());
          assertNotNull(kv, "no final stats of the cut-off node's loop to " + o.key() + ":\n" + n2.tail(40));
          assertEquals("0", kv.get("hung"), "the cut-off node had a transfer hang: " + kv);
          assertEquals("0", kv.get("mismatched"), "the cut-off node read back other bytes: " + kv);
          String codes = kv.get("codes").replaceAll("[{}]", "");
          for (String c : codes.split(","))
            if (!c.isEmpty()) assertTrue(c.startsWith("ERR_PEER_LOST=") || c.startsWith("ERR_BAD_STATE="),
                "the cut-off node's transfers to " + o.key() + " ended with " + kv.get("codes"));
          assertTrue(kv.get("codes").contains("ERR_PEER_LOST"), "the cut-off node never saw its peers lost: " + kv);
        }

        // heal, and start a new process on the same address with the same engine key
        long healAt = System.currentTimeMillis();
        net.heal(2);
        int[] from = {n0.size(), n1.size()};
        NodeProcess n2b = NodeProcess.start("n2-restarted", net.exec(2), Map.of(), net.host(2), PORT, keys[2], 2,
            List.of(seed0, r1.hostPort()));
        procs.add(n2b);
        Ready r2b = awaitReady(n2b, START);
        List<Ready> healed = List.of(r0, r1, r2b);
        exchangePeers(healed); // the restarted node has a new region: its descriptor replaces the old one
        long[] reRegistered = new long[2];
        for (int i = 0; i < 2; i++)
          reRegistered[i] = awaitRegistered(majority.get(i).node(), from[i], othersOf(majority.get(i), healed), Duration.ofSeconds(60)).at();
        long rejoinedAt = awaitRegistered(n2b, 0, othersOf(r2b, healed), Duration.ofSeconds(60)).at();
        n2b.send("write-loop");
        long everywhere = Math.max(rejoinedAt, Math.max(reRegistered[0], reRegistered[1]));
        Thread.sleep(Math.max(0, everywhere + 1000 - System.currentTimeMillis()));
        var w1 = assertEveryPairClean(healed, Duration.ofSeconds(3), "after the rejoin");
        // the two that were never cut off never failed a transfer between themselves, from start to end
        assertEquals(0, num(w1.get(0), r1.key(), "fail"), "n0 -> n1 failed:\n" + n0.tail(40));
        assertEquals(0, num(w1.get(1), r0.key(), "fail"), "n1 -> n0 failed:\n" + n1.tail(40));
        assertEquals(0, num(w1.get(0), r1.key(), "mismatched") + num(w1.get(1), r0.key(), "mismatched"));

        for (int i = 0; i < 2; i++) {
          System.out.println("FIGURE partition survivor=" + majority.get(i).key() + " cut_to_first_peer_lost_ms=" + firstLost[i]
              + " cut_to_member_removed_ms=" + removed[i]);
        }
        System.out.println("FIGURE partition cut_off_node cut_to_shutdown_ms=" + shutdownAt + " cut_to_exit_ms=" + exitAt
            + " final_loop_codes=" + minority.get(r0.key()).get("codes") + "/" + minority.get(r1.key()).get("codes"));
        System.out.println("FIGURE partition rejoin heal_to_ready_ms=" + (r2b.at() - healAt)
            + " heal_to_registered_everywhere_ms=" + (everywhere - healAt));
        System.out.printf("partition: n0<->n1 %d + %d round trips, 0 failures; after the rejoin every pair moved bytes without failure%n",
            num(w1.get(0), r1.key(), "ok"), num(w1.get(1), r0.key(), "ok"));
      } finally {
        for (NodeProcess p : procs) p.close();
      }
    }
  }
}
