package org.mori4j.cluster;

import org.mori4j.io.MemoryDesc;

/**
 * What a subscriber of the {@link DescriptorDirectory} is told about the names under its prefix: first one
 * {@link Published} for every name already listed when it subscribes, then a {@link Published} whenever a name
 * appears or its descriptor changes and an {@link Unpublished} whenever one disappears. Events describe this
 * member's replica of the directory, so they follow a change made elsewhere after replication (typically
 * well under a second, see {@code cluster/docs/descriptor-directory.md}). They are delivered in the subscriber's own
 * ActorSystem and are not meant to cross the network (they carry parsed descriptors, not their bytes).
 */
public sealed interface DirectoryEvent {

  /** The name the event is about. */
  String name();

  /**
   * {@code name} is now published with {@code desc} by the member at {@code owner} (its actor system address).
   */
  record Published(String name, MemoryDesc desc, String owner) implements DirectoryEvent {}

  /**
   * {@code name}, last published with {@code desc}, is gone: its owner unpublished it, or, when
   * {@code ownerGone} is true, its owner's member left the cluster or was downed or removed. That flag is
   * this member's knowledge when the entry disappeared: the owner was seen exiting, downed or removed, was no
   * member, or was unreachable (another member may remove a downed owner's entry before this one sees the
   * downing).
   */
  record Unpublished(String name, MemoryDesc desc, boolean ownerGone) implements DirectoryEvent {}
}
