package org.mori4j.cluster;

import java.util.Arrays;
import java.util.Objects;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.AddressFromURIString;
import org.apache.pekko.cluster.UniqueAddress;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.MemoryDesc;

/**
 * One value of the {@link DescriptorDirectory}'s replicated map (the key is the name): the published region
 * as {@link MemoryDesc#toBytes()} and the cluster member that owns it, as its address and the uid of that
 * incarnation, so an entry outlives neither its member nor a restart of the process at the same address.
 * It travels between members inside Distributed Data's map, serialized by Jackson CBOR; a receiver trusts
 * nothing in it until {@link #check} has parsed the descriptor with {@link MemoryDesc#fromBytes} (the same
 * validation as any descriptor from outside the process) and the owner with Pekko's address parser.
 */
public record DirectoryEntry(byte[] descriptor, String owner, long ownerUid) implements CborSerializable {

  public DirectoryEntry {
    descriptor = descriptor == null ? null : descriptor.clone();
    // Jackson's CBOR parser turns some invalid UTF-8 into lone surrogates, which its generator then refuses:
    // such a value, once merged, would make the Replicator fail every time it serializes the map (digests,
    // gossip), so it is refused here, while the frame that carries it is being decoded
    if (owner != null)
      for (int i = 0; i < owner.length(); i++)
        if (Character.isSurrogate(owner.charAt(i)) && !DirectorySettings.validSurrogateAt(owner, i))
          throw new IllegalArgumentException("DirectoryEntry.owner has a lone surrogate at index " + i);
  }

  /** The entry a member writes for one of its own regions. */
  static DirectoryEntry of(MemoryDesc desc, UniqueAddress owner) {
    return new DirectoryEntry(desc.toBytes(), owner.address().toString(), owner.longUid());
  }

  @Override
  public byte[] descriptor() {
    return descriptor == null ? null : descriptor.clone();
  }

  /** An entry that passed {@link #check}: the name, the parsed descriptor and the owner's unique address. */
  record Checked(String name, MemoryDesc desc, UniqueAddress owner, DirectoryEntry entry) {}

  /**
   * Validates this entry as found under {@code name} in the replicated map. Throws
   * {@link IllegalArgumentException} naming the name and the part that is wrong.
   */
  Checked check(String name, DirectorySettings settings) {
    try {
      settings.checkName("name", name, false);
    } catch (IoEngineException e) {
      throw new IllegalArgumentException("directory entry with a bad key: " + e.getMessage());
    }
    String where = "directory entry '" + DirectorySettings.shorten(name) + "'";
    if (descriptor == null) throw new IllegalArgumentException(where + ": no descriptor");
    MemoryDesc desc;
    try {
      desc = MemoryDesc.fromBytes(descriptor);
    } catch (RuntimeException e) {
      // fromBytes refuses with IllegalArgumentException; anything else from bytes off the network is refused the same way
      throw new IllegalArgumentException(where + ": malformed descriptor: " + e.getMessage());
    }
    return new Checked(name, desc, ownerAddress(where), this);
  }

  /** The owner as a cluster unique address; throws {@link IllegalArgumentException} if it does not parse. */
  UniqueAddress ownerAddress(String where) {
    if (owner == null || owner.isEmpty()) throw new IllegalArgumentException(where + ": no owner address");
    Address a;
    try {
      a = AddressFromURIString.parse(owner);
    } catch (Exception e) {
      // Pekko's parser throws java.net.URISyntaxException (checked, undeclared) as well as runtime exceptions
      throw new IllegalArgumentException(where + ": owner '" + DirectorySettings.shorten(owner) + "' is not an actor system address: " + e.getMessage());
    }
    if (!a.hasGlobalScope())
      throw new IllegalArgumentException(where + ": owner '" + DirectorySettings.shorten(owner) + "' has no host and port");
    return new UniqueAddress(a, ownerUid);
  }

  /** Whether this entry belongs to {@code member} (same address and incarnation). */
  boolean ownedBy(UniqueAddress member) {
    return ownerUid == member.longUid() && member.address().toString().equals(owner);
  }

  @Override
  public boolean equals(Object o) {
    // Distributed Data compares values to decide whether anything changed, so arrays compare by content
    return o instanceof DirectoryEntry e && Arrays.equals(descriptor, e.descriptor) && Objects.equals(owner, e.owner) && ownerUid == e.ownerUid;
  }

  @Override
  public int hashCode() {
    return 31 * (31 * Arrays.hashCode(descriptor) + Objects.hashCode(owner)) + Long.hashCode(ownerUid);
  }

  @Override
  public String toString() {
    return "DirectoryEntry[owner=" + owner + "#" + ownerUid + ", descriptor=" + (descriptor == null ? "null" : descriptor.length + " bytes") + "]";
  }
}
