package org.mori4j.cluster;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * Who a {@link DirectoryActor} tells about changes, and under which name prefixes: an event goes to a subscriber at
 * most once, however many of its prefixes match. Used only from the actor's thread; watching subscribers (so that a
 * stopped one is dropped) stays with the actor.
 */
final class DirectorySubscribers {
  private final Map<ActorRef<DirectoryEvent>, Set<String>> prefixes = new HashMap<>();

  /** Whether {@code subscriber} has no subscription yet (the actor then watches it). */
  boolean isNew(ActorRef<DirectoryEvent> subscriber) {
    return !prefixes.containsKey(subscriber);
  }

  /** Adds {@code prefix} for {@code subscriber}; false when it had that prefix already (nothing to replay). */
  boolean add(ActorRef<DirectoryEvent> subscriber, String prefix) {
    return prefixes.computeIfAbsent(subscriber, k -> new LinkedHashSet<>()).add(prefix);
  }

  /** Drops every subscription of {@code subscriber}; false when it had none. */
  boolean remove(ActorRef<DirectoryEvent> subscriber) {
    return prefixes.remove(subscriber) != null;
  }

  void emit(DirectoryEvent e) {
    for (Map.Entry<ActorRef<DirectoryEvent>, Set<String>> s : prefixes.entrySet())
      for (String prefix : s.getValue()) {
        if (e.name().startsWith(prefix)) {
          s.getKey().tell(e);
          break;
        }
      }
  }
}
