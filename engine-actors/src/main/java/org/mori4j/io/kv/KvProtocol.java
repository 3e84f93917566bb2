package org.mori4j.io.kv;

import org.apache.pekko.actor.typed.ActorRef;

/**
 * Messages the KV endpoints of two engines exchange over the engines' control plane (Pekko remoting): "these
 * layers of this request landed in your cache" after the data, "this request ended without its data", and a
 * request for a cache's descriptor by name. Each notice of a request names the migration that sent it
 * ({@code migration}, non-zero, drawn by {@link KvMigrationIds} when the migration opens), so a receiver that forgot
 * the request drops that migration's late notices but not those of a new migration reusing the request id.
 * Serialized by {@link KvMessageSerializer}, never by Java serialization.
 */
public final class KvProtocol {
  private KvProtocol() {}

  /** What a KV endpoint handles. */
  public sealed interface Command permits LayersLanded, LayersSent, RequestAborted, Describe, Stop, InboundLanded, InboundForgotten {}

  /** Layers {@code [fromLayer, toLayer)} of {@code requestId}, sent by migration {@code migration}, landed in cache {@code cacheName} of the receiving engine. */
  public record LayersLanded(String cacheName, String requestId, long migration, int fromLayer, int toLayer, String fromEngine) implements Command, Wire {}

  /**
   * Told when the writes are issued, or for a stream over TCP for every layer when it opens: layers {@code [fromLayer, toLayer)} of {@code requestId} go to cache {@code cacheName} as the
   * writes {@code uids} of migration {@code migration} of engine {@code fromEngine}, so the receiving engine can report them landed as soon as its
   * own backend has recorded those writes (whichever of this and the writes comes first), without waiting for
   * {@link LayersLanded}. With {@code board} the sender also posts each write's uid on the receiving engine's
   * landing board when it completed (XGMI peers on one host, whose targets are never told of writes), naming its
   * incarnation {@code fromIncarnation}: the receiver counts a board entry only for writes announced by the same
   * incarnation, so entries a restarted sender's previous incarnation left on the board never match.
   */
  public record LayersSent(String cacheName, String requestId, long migration, int fromLayer, int toLayer, String fromEngine, long[] uids, boolean board,
                           long fromIncarnation) implements Command, Wire {
    /** Writes the receiver's backend records (no landing board; the backend tells incarnations apart itself). */
    public LayersSent(String cacheName, String requestId, long migration, int fromLayer, int toLayer, String fromEngine, long[] uids) {
      this(cacheName, requestId, migration, fromLayer, toLayer, fromEngine, uids, false, 0);
    }
  }

  /** {@code requestId} into {@code cacheName} ended without (all of) its data, says migration {@code migration}: {@code reason}. */
  public record RequestAborted(String cacheName, String requestId, long migration, String fromEngine, String reason) implements Command, Wire {}

  /** Asks for the descriptor of the cache published as {@code cacheName} on the receiving engine. */
  public record Describe(String cacheName, ActorRef<Description> replyTo) implements Command, Wire {}

  /** The answer to {@link Describe}: the descriptor's bytes, or an empty array when no such cache is open there. */
  public record Description(String cacheName, byte[] desc) implements Wire {}

  /** Local only: the engine's last cache closed; the endpoint stops. */
  record Stop() implements Command {}

  /** Local only: every write of a {@link LayersSent} was recorded by this engine's backend. */
  record InboundLanded(KvInbound.Expected range) implements Command {}

  /** Local only: this engine dropped what it recorded from {@code engineKey} (a new incarnation of it). */
  record InboundForgotten(String engineKey) implements Command {}

  /** Marker of the messages that cross the network; bound to {@link KvMessageSerializer} in {@code reference.conf}. */
  public interface Wire {}
}
