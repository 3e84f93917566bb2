package org.mori4j.cluster;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.pekko.actor.Address;
import org.apache.pekko.cluster.UniqueAddress;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.mori4j.cluster.DirectoryEntry.Checked;
import org.slf4j.Logger;

/**
 * One directory actor's reading of the replicated map: the entries that pass {@link DirectoryEntry#check}
 * and whose owner is not known to be gone, the refusal reason of those that do not, the owners seen leaving,
 * and which entries are due for removal. It turns each new value of the map into the events subscribers
 * need. Kept apart from {@link DirectoryActor} so that the actor is about messages and this class about the
 * data; it is confined to that actor.
 */
final class DirectoryView {
  private final DirectorySettings settings;
  private final UniqueAddress self;
  private final String engineKey;
  private final Logger log;

  private TreeMap<String, Checked> view = new TreeMap<>();
  private Map<String, String> malformed = Map.of();
  /** Owners seen exiting, downed or removed. */
  private final Set<UniqueAddress> gone = new HashSet<>();
  /** name + owner of entries whose owner is not a member, with when that was first seen (System.nanoTime). */
  private final Map<String, Long> orphanSince = new HashMap<>();

  DirectoryView(DirectorySettings settings, UniqueAddress self, String engineKey, Logger log) {
    this.settings = settings;
    this.self = self;
    this.engineKey = engineKey;
    this.log = log;
  }

  /** Records that {@code owner}'s member is exiting, downed or removed; true if that is news. */
  boolean markGone(UniqueAddress owner) {
    return gone.add(owner);
  }

  Set<UniqueAddress> goneOwners() {
    return Set.copyOf(gone);
  }

  /** See {@link DirectoryWrites#isGone}. */
  boolean isGone(UniqueAddress owner, Map<Address, UniqueAddress> members) {
    return DirectoryWrites.isGone(owner, gone, members);
  }

  /** The checked entry listed under {@code name}, or null. */
  Checked get(String name) {
    return view.get(name);
  }

  /** Why the entry under {@code name} was refused, or null when it was not. */
  String refusal(String name) {
    return malformed.get(name);
  }

  /** The listed entries whose names start with {@code prefix}, in name order. */
  List<Checked> under(String prefix) {
    List<Checked> out = new ArrayList<>();
    for (Map.Entry<String, Checked> e : view.tailMap(prefix, true).entrySet()) {
      if (!e.getKey().startsWith(prefix)) break;
      out.add(e.getValue());
    }
    return out;
  }

  /**
   * Reads a new value of the map (or the same one after a membership change) and returns what changed, as
   * events. {@code members}: the current members by address; {@code unreachable}: those the failure detector
   * marks unreachable.
   */
  List<DirectoryEvent> update(LWWMap<String, DirectoryEntry> data, Map<Address, UniqueAddress> members, Set<UniqueAddress> unreachable) {
    TreeMap<String, Checked> next = new TreeMap<>();
    Map<String, String> bad = new HashMap<>();
    // read as Object: a map that arrived from another member may hold anything its serializer produced
    for (Map.Entry<?, ?> e : ((Map<?, ?>) data.getEntries()).entrySet()) {
      if (!(e.getKey() instanceof String name)) continue;
      try {
        if (!(e.getValue() instanceof DirectoryEntry entry))
          throw new IllegalArgumentException("directory entry '" + DirectorySettings.shorten(name) + "' is a "
              + (e.getValue() == null ? "null" : e.getValue().getClass().getName()));
        Checked c = entry.check(name, settings);
        if (!isGone(c.owner(), members)) next.put(name, c);
      } catch (IllegalArgumentException ex) {
        bad.put(name, ex.getMessage());
        if (!malformed.containsKey(name)) log.warn("directory of engine '{}' ignores an entry: {}", engineKey, ex.getMessage());
      }
    }
    List<DirectoryEvent> events = new ArrayList<>();
    for (Map.Entry<String, Checked> old : view.entrySet()) {
      Checked now = next.get(old.getKey());
      if (now == null) {
        UniqueAddress owner = old.getValue().owner();
        // the removal may come from another member's sweep before this member has seen the owner downed; the
        // Split Brain Resolver downs only members that every survivor has seen unreachable for stable-after
        boolean ownerGone = isGone(owner, members) || !owner.equals(members.get(owner.address())) || unreachable.contains(owner);
        events.add(new DirectoryEvent.Unpublished(old.getKey(), old.getValue().desc(), ownerGone));
      } else if (!now.desc().equals(old.getValue().desc()) || !now.owner().equals(old.getValue().owner())) {
        if (old.getValue().owner().equals(self) && !now.owner().equals(self))
          // two members published the same name at once; last-writer-wins picked the other one
          log.warn("directory of engine '{}': name '{}' is now published by {} ({}), replacing this member's {}", engineKey,
              old.getKey(), now.owner().address(), now.desc(), old.getValue().desc());
        events.add(published(now));
      }
    }
    for (Map.Entry<String, Checked> e : next.entrySet()) if (!view.containsKey(e.getKey())) events.add(published(e.getValue()));
    view = next;
    malformed = bad;
    return events;
  }

  static DirectoryEvent.Published published(Checked c) {
    return new DirectoryEvent.Published(c.name(), c.desc(), c.owner().address().toString());
  }

  /**
   * The entries to remove now, name to owner: those of owners that are gone, and those whose owner has not
   * been a member for {@code orphan-grace} (an entry that reached this member after its owner's removal).
   * Entries whose owner cannot be read are left alone: every reader ignores them, and an owner may still
   * remove them.
   */
  Map<String, UniqueAddress> due(LWWMap<String, DirectoryEntry> data, Map<Address, UniqueAddress> members, long nowNanos) {
    Map<String, UniqueAddress> doomed = new HashMap<>();
    Set<String> orphans = new HashSet<>();
    for (Map.Entry<?, ?> e : ((Map<?, ?>) data.getEntries()).entrySet()) {
      if (!(e.getKey() instanceof String name) || !(e.getValue() instanceof DirectoryEntry entry)) continue;
      UniqueAddress owner;
      try {
        owner = entry.ownerAddress(name);
      } catch (IllegalArgumentException unreadable) {
        continue;
      }
      if (isGone(owner, members)) {
        doomed.put(name, owner);
      } else if (!owner.equals(members.get(owner.address()))) {
        String k = name + '\u0000' + owner;
        orphans.add(k);
        long since = orphanSince.computeIfAbsent(k, x -> nowNanos);
        if (nowNanos - since >= settings.orphanGrace().toNanos()) doomed.put(name, owner);
      }
    }
    orphanSince.keySet().retainAll(orphans);
    return doomed;
  }

  /** Whether some entry's owner is missing from the membership but not yet for {@code orphan-grace}. */
  boolean hasOrphans() {
    return !orphanSince.isEmpty();
  }
}
