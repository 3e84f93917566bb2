package org.mori4j.cluster;

import java.util.Map;
import java.util.Set;
import org.apache.pekko.actor.Address;
import org.apache.pekko.cluster.UniqueAddress;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.StatusCode;
import scala.Option;

/**
 * The directory's modify functions. The Replicator runs them against its current value of the map, one at a
 * time, so a check and the write it guards cannot be interleaved with another write on this member; a refusal
 * is thrown as {@link Refusal} and comes back to the directory actor as the Replicator's {@code ModifyFailure}.
 * They take only immutable arguments, since they run on the Replicator's thread. Values are read as
 * {@code Object}: a map that arrived from another member may hold anything its serializer produced.
 */
final class DirectoryWrites {
  private DirectoryWrites() {}

  /** A write the directory refuses, with the status code the caller gets. */
  static final class Refusal extends RuntimeException {
    private final StatusCode code;

    Refusal(StatusCode code, String message) {
      super(message, null, false, false);
      this.code = code;
    }

    StatusCode code() {
      return code;
    }
  }

  /**
   * Puts {@code entry} under {@code name} unless the name holds another live entry. The same entry again is a
   * no-op (a retried publish succeeds); an entry of an owner that is gone (see {@link #isGone}) or one no reader can
   * parse is replaced, since nobody can use it.
   */
  static LWWMap<String, DirectoryEntry> putIfFree(LWWMap<String, DirectoryEntry> map, String name, DirectoryEntry entry,
                                                  SelfUniqueAddress self, Set<UniqueAddress> gone, Map<Address, UniqueAddress> members,
                                                  DirectorySettings settings) {
    Object current = valueOf(map, name);
    if (current != null) {
      if (current.equals(entry)) return map;
      if (current instanceof DirectoryEntry e) {
        DirectoryEntry.Checked c = null;
        try {
          c = e.check(name, settings);
        } catch (IllegalArgumentException unusable) {
          // replaced below
        }
        if (c != null && !isGone(c.owner(), gone, members))
          throw new Refusal(StatusCode.ERR_INVALID_ARGS, "name '" + name + "' is already published by engine '" + c.desc().engineKey()
              + "' on member " + c.owner().address() + " (" + c.desc() + "); unpublish it first");
      }
    }
    return map.put(self, name, entry);
  }

  /**
   * Whether {@code owner} is known to be gone: seen exiting, downed or removed ({@code gone}), or an earlier
   * incarnation of a process that is a member again at the same address with another uid ({@code members}:
   * the current members by address).
   */
  static boolean isGone(UniqueAddress owner, Set<UniqueAddress> gone, Map<Address, UniqueAddress> members) {
    if (gone.contains(owner)) return true;
    UniqueAddress now = members.get(owner.address());
    return now != null && now.longUid() != owner.longUid();
  }

  /** Removes {@code name} if this member's engine {@code engineKey} published it. */
  static LWWMap<String, DirectoryEntry> removeOwned(LWWMap<String, DirectoryEntry> map, String name, SelfUniqueAddress self, String engineKey,
                                                    DirectorySettings settings) {
    Object current = valueOf(map, name);
    if (current == null) throw new Refusal(StatusCode.ERR_NOT_FOUND, "no memory is published under name '" + name + "'");
    if (!(current instanceof DirectoryEntry e) || !e.ownedBy(self.uniqueAddress()))
      throw new Refusal(StatusCode.ERR_INVALID_ARGS, "name '" + name + "' is published by "
          + (current instanceof DirectoryEntry e2 ? "member " + e2.owner() + "#" + e2.ownerUid() : "an unreadable entry")
          + ", not by this member (" + self.uniqueAddress().address() + "); only its owner can unpublish it");
    MemoryDesc d = descOf(e);
    if (d != null && !d.engineKey().equals(engineKey))
      throw new Refusal(StatusCode.ERR_INVALID_ARGS, "name '" + name + "' is published by engine '" + d.engineKey()
          + "' of this member, not by engine '" + engineKey + "'; only its owner can unpublish it");
    return map.remove(self, name);
  }

  /** Removes each name in {@code doomed} whose entry still belongs to the owner it maps to. */
  static LWWMap<String, DirectoryEntry> removeIfOwnedBy(LWWMap<String, DirectoryEntry> map, Map<String, UniqueAddress> doomed,
                                                        SelfUniqueAddress self) {
    LWWMap<String, DirectoryEntry> out = map;
    for (Map.Entry<String, UniqueAddress> d : doomed.entrySet()) {
      // a name republished by a live member since the sweep decided stays
      if (valueOf(map, d.getKey()) instanceof DirectoryEntry e && e.ownedBy(d.getValue())) out = out.remove(self, d.getKey());
    }
    return out;
  }

  /** Removes every name this member's engine {@code engineKey} published (it is closing). */
  static LWWMap<String, DirectoryEntry> removeAllOf(LWWMap<String, DirectoryEntry> map, SelfUniqueAddress self, String engineKey) {
    LWWMap<String, DirectoryEntry> out = map;
    for (Map.Entry<?, ?> e : ((Map<?, ?>) map.getEntries()).entrySet()) {
      if (e.getKey() instanceof String name && e.getValue() instanceof DirectoryEntry entry && entry.ownedBy(self.uniqueAddress())) {
        MemoryDesc d = descOf(entry);
        if (d != null && d.engineKey().equals(engineKey)) out = out.remove(self, name);
      }
    }
    return out;
  }

  private static Object valueOf(LWWMap<String, DirectoryEntry> map, String name) {
    Option<?> o = map.get(name);
    return o.isEmpty() ? null : o.get();
  }

  private static MemoryDesc descOf(DirectoryEntry e) {
    try {
      return e.descriptor() == null ? null : MemoryDesc.fromBytes(e.descriptor());
    } catch (IllegalArgumentException unreadable) {
      return null;
    }
  }
}
