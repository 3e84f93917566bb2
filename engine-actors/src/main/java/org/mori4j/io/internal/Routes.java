package org.mori4j.io.internal;

import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorRef;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.MemoryDesc;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.LongTable;
import org.mori4j.transport.TransferBackend;

/**
 * An immutable snapshot of what the engine actor owns and the data path needs: local registrations,
 * registered remote engines with their per-backend peer handles, the backends in preference order, and the
 * engines declared lost (key to the message their transfers fail with) until they are registered again.
 * The engine actor publishes a new snapshot after every change; callers of the transfer methods read the
 * current one without locks, so the data path never waits for the actor. The local registrations are the
 * exception: {@code locals} is the engine's one live table (changed in place by the engine actor alone), not a
 * copy, so that a registration costs O(1) instead of a copy of every registration per call; a lookup sees a
 * registration from the moment it is put and never after its removal returned.
 */
public record Routes(LongTable<Local> locals, Map<String, Peer> peers, List<Backend> backends, boolean closed,
                     Map<String, String> lost) {
  /** A local registration. */
  public record Local(LocalRegion region, MemoryDesc desc) {}

  /** A registered remote engine; {@code handles} holds the peer handle of each backend that connected to it. */
  public record Peer(EngineDesc desc, Map<BackendType, Object> handles) {}

  /** A running backend and its actor. */
  public record Backend(BackendType type, TransferBackend backend, ActorRef<BackendActor.Command> actor) {}

  public static final Routes EMPTY = new Routes(new LongTable<>(), Map.of(), List.of(), false, Map.of());
}
