package org.mori4j.bench.soak;

import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.mori4j.bench.ClusterMember;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.MemoryDesc;

/**
 * This node's view of the other nodes: for each, the descriptor of the engine incarnation it last found
 * through the cluster and that incarnation's published buffer. Workers take the current view and drop it
 * when a transfer says the peer is gone; {@link #refresh} (one thread, every half second) finds it again
 * once the cluster registers it, and replaces a view whose incarnation changed (a restarted node is a new
 * incarnation, {@link EngineDesc#incarnation()}). Everything is asked through the cluster, nothing by address.
 */
final class SoakPeers {
  /** One peer incarnation as this node sees it. */
  record View(int index, EngineDesc desc, MemoryDesc buffer) {
    /** The engine's incarnation, or its process id where the descriptor states none. */
    long incarnation() {
      return SoakPeers.incarnation(desc);
    }
  }

  /** What tells two incarnations of an engine apart: the random incarnation it chose at start, else its pid. */
  static long incarnation(EngineDesc d) {
    return d.incarnation() != 0 ? d.incarnation() : d.pid();
  }

  private final ClusterMember member;
  private final int self;
  private final AtomicReferenceArray<View> views = new AtomicReferenceArray<>(SoakLayout.NODES);
  private long turn;

  SoakPeers(ClusterMember member, int self) {
    this.member = member;
    this.self = self;
  }

  View get(int peer) {
    return views.get(peer);
  }

  /** Drops {@code v} unless it was replaced already. */
  void invalidate(View v) {
    views.compareAndSet(v.index(), v, null);
  }

  /** One round: forget peers the cluster no longer registers, find new ones, re-check known ones now and then. */
  void refresh() {
    Set<String> registered;
    try {
      registered = member.registeredEngines();
    } catch (Exception e) {
      return; // the system is stopping or busy: the next round asks again
    }
    boolean recheck = turn++ % 4 == 0;
    for (int i = 0; i < SoakLayout.NODES; i++) {
      if (i == self) continue;
      String key = SoakLayout.engineKey(i);
      View v = views.get(i);
      if (!registered.contains(key)) {
        if (v != null) views.compareAndSet(i, v, null);
        continue;
      }
      if (v != null && !recheck) continue;
      try {
        Optional<EngineDesc> desc = member.describe(key);
        if (desc.isEmpty()) continue;
        if (v != null && v.incarnation() == incarnation(desc.get())) continue;
        Optional<MemoryDesc> buffer = member.engine().lookupMemory(desc.get(), SoakLayout.PUBLISHED_NAME);
        if (buffer.isPresent()) views.compareAndSet(i, v, new View(i, desc.get(), buffer.get()));
      } catch (Exception e) {
        // unreachable or restarting right now: asked again next round
      }
    }
  }
}
