package org.mori4j.cluster;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.cluster.testnode.Nodes.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.mori4j.cluster.testnode.NodeProcess;
import org.mori4j.cluster.testnode.Nodes;

/**
 * Issue 5, acceptance 1 (without the directory): three cluster members in three JVMs on loopback register
 * each other's engines by themselves; one is SIGKILLed while every node writes to every other one. Every
 * transfer to the dead node must end in ERR_PEER_LOST within 15 s of the kill (the first ones from the TCP
 * layer, which sees the connections reset; then from the cluster, which declares the engine lost when the
 * member becomes unreachable), the member must be downed and removed (Split Brain Resolver, keep-majority),
 * and the two survivors must keep writing to each other, byte-exact, without a single failure during and after.
 */
class ClusterSigkillTest {
  private static final Duration BOUND = Duration.ofSeconds(15);
  private static final Duration START = Duration.ofSeconds(90);

  @Test
  void sigkilledMemberIsRemovedEveryTransferToItEndsInPeerLostAndTheSurvivorsNeverFail() throws Exception {
    long pid = ProcessHandle.current().pid();
    List<NodeProcess> procs = new ArrayList<>();
    try {
      NodeProcess a = NodeProcess.start("a", List.of(), Map.of(), "127.0.0.1", 0, "sigkill-a-" + pid, 0, List.of());
      procs.add(a);
      Ready ra = awaitReady(a, START);
      NodeProcess b = NodeProcess.start("b", List.of(), Map.of(), "127.0.0.1", 0, "sigkill-b-" + pid, 1, List.of(ra.hostPort()));
      procs.add(b);
      NodeProcess c = NodeProcess.start("c", List.of(), Map.of(), "127.0.0.1", 0, "sigkill-c-" + pid, 2, List.of(ra.hostPort()));
      procs.add(c);
      Ready rb = awaitReady(b, START), rc = awaitReady(c, START);
      List<Ready> all = List.of(ra, rb, rc);
      exchangePeers(all);
      for (Ready r : all) {
        Set<String> others = new java.util.HashSet<>();
        for (Ready o : all) if (o != r) others.add(o.key());
        awaitRegistered(r.node(), 0, others, Duration.ofSeconds(60));
      }
      for (Ready r : all) r.node().send("write-loop");
      awaitEveryPairMoved(all, Duration.ofSeconds(20)); // traffic flows in every direction before the fault
      for (Ready r : all) {
        var s = stats(r.node());
        for (Ready o : all) {
          if (o == r) continue;
          assertTrue(num(s, o.key(), "ok") > 0, r.key() + " moved nothing to " + o.key() + " before the kill: " + s);
          assertEquals(0, num(s, o.key(), "fail"), r.key() + " -> " + o.key() + " failed before the kill:\n" + r.node().tail(40));
        }
      }
      List<Ready> survivors = List.of(ra, rb);
      var before = List.of(stats(a), stats(b));

      long killAt = System.currentTimeMillis();
      int status = c.kill();
      assertEquals(137, status, "Process.destroyForcibly() should have sent SIGKILL (exit status 128 + 9)");

      long[] firstLost = new long[2], clusterMark = new long[2], dropped = new long[2], removed = new long[2], unreachable = new long[2];
      for (int i = 0; i < 2; i++) {
        NodeProcess s = survivors.get(i).node();
        String peer = " " + rc.key() + " ";
        firstLost[i] = s.await(t -> t.startsWith("FAIL ") && t.contains(peer) && t.contains("ERR_PEER_LOST"), BOUND.plusSeconds(10),
            "a first ERR_PEER_LOST to the killed node").at() - killAt;
        clusterMark[i] = s.await(t -> t.startsWith("FAIL ") && t.contains(peer) && t.contains("ERR_PEER_LOST")
            && t.contains("was lost: member " + rc.address()), BOUND.plusSeconds(10), "ERR_PEER_LOST naming the lost member").at() - killAt;
        unreachable[i] = s.await(t -> t.startsWith("REACH ") && t.contains("UnreachableMember " + rc.address()), BOUND.plusSeconds(10),
            "the killed member unreachable").at() - killAt;
        dropped[i] = s.await(t -> t.startsWith("REGISTERED ") && Long.parseLong(t.split(" ")[1]) > killAt && !t.contains(rc.key()),
            BOUND.plusSeconds(10), "the killed node's engine dropped").at() - killAt;
        removed[i] = s.await(t -> t.startsWith("MEMBER ") && t.contains("MemberRemoved " + rc.address()), Duration.ofSeconds(60),
            "the killed member removed").at() - killAt;
      }
      for (int i = 0; i < 2; i++) {
        String who = survivors.get(i).key();
        assertTrue(firstLost[i] <= BOUND.toMillis(), who + ": first ERR_PEER_LOST " + firstLost[i] + " ms after the kill");
        assertTrue(clusterMark[i] <= BOUND.toMillis(), who + ": engine declared lost " + clusterMark[i] + " ms after the kill");
      }
      // the survivors go on for 5 s after the member is gone from the membership
      long removedAt = killAt + Math.max(removed[0], removed[1]);
      Thread.sleep(Math.max(0, removedAt + 5000 - System.currentTimeMillis()));
      var after = List.of(stats(a), stats(b));

      long[] lastNonLost = new long[2];
      for (int i = 0; i < 2; i++) {
        Ready me = survivors.get(i), other = survivors.get(1 - i);
        var s = after.get(i);
        String tail = me.node().tail(60);
        // to the other survivor: not a single failure, and transfers went on across the kill and the removal
        assertEquals(0, num(s, other.key(), "fail"), me.key() + " -> " + other.key() + " failed:\n" + tail);
        assertEquals(0, num(s, other.key(), "mismatched"), me.key() + " -> " + other.key() + " bytes differ");
        assertTrue(num(s, other.key(), "ok") > num(before.get(i), other.key(), "ok"), me.key() + " stopped moving to " + other.key());
        assertTrue(num(s, other.key(), "lastOk") >= removedAt + 3000, me.key() + " -> " + other.key()
            + ": no success in the seconds after the removal (last at " + num(s, other.key(), "lastOk") + ", removed " + removedAt + ")");
        // to the dead node: nothing hung, every failure is ERR_PEER_LOST, nothing but ERR_PEER_LOST after the kill
        assertEquals(0, num(s, rc.key(), "hung"), me.key() + ": a transfer to the dead node hung:\n" + tail);
        assertEquals(num(s, rc.key(), "fail"), num(s, rc.key(), "lost"), me.key() + ": failures to the dead node that are not ERR_PEER_LOST: "
            + s.get(rc.key()) + "\n" + tail);
        assertTrue(num(s, rc.key(), "lost") > 0, me.key() + ": no ERR_PEER_LOST to the dead node");
        lastNonLost[i] = num(s, rc.key(), "lastNonLost") - killAt;
        // a transfer whose answer left the node just before the signal can still succeed a moment after it
        assertTrue(lastNonLost[i] <= 1000, me.key() + ": an outcome other than ERR_PEER_LOST to the dead node "
            + lastNonLost[i] + " ms after the kill");
        System.out.printf("survivor %s: to %s %d ok / 0 failed (%d after the kill); to the dead node %d x ERR_PEER_LOST%n", me.key(),
            other.key(), num(s, other.key(), "ok"), num(s, other.key(), "ok") - num(before.get(i), other.key(), "ok"), num(s, rc.key(), "lost"));
      }
      for (int i = 0; i < 2; i++) {
        String line = "FIGURE sigkill survivor=" + survivors.get(i).key() + " kill_to_first_peer_lost_ms=" + firstLost[i]
            + " kill_to_unreachable_ms=" + unreachable[i] + " kill_to_engine_declared_lost_ms=" + clusterMark[i]
            + " kill_to_dropped_from_registered_ms=" + dropped[i] + " kill_to_member_removed_ms=" + removed[i]
            + " kill_to_last_non_peer_lost_outcome_ms=" + lastNonLost[i];
        System.out.println(line);
      }
      for (Ready r : all) {
        if (r == rc) continue;
        System.out.println("FIGURE start node=" + r.key() + " launch_to_ready_ms=" + (r.at() - r.node().launchedAt));
      }
    } finally {
      for (NodeProcess p : procs) p.close();
    }
  }
}
