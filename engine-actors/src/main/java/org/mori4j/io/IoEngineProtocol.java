package org.mori4j.io;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.pattern.StatusReply;
import org.mori4j.io.internal.ControlMessage;

/**
 * The actor-message API of an engine: what {@link IoEngine#actorRef()} accepts. Every command is an
 * immutable record with a {@code replyTo}. Control commands answer with a {@link StatusReply} (an error
 * carries an {@link IoEngineException}); transfer commands answer once, with the final
 * {@link TransferStatus}, when the transfer is done. An application actor uses it like this:
 *
 * <pre>{@code
 * ActorRef<IoEngineProtocol.Command> engine = ioEngine.actorRef();
 * context.ask(TransferStatus.class, engine,
 *     Duration.ofSeconds(5),
 *     replyTo -> new IoEngineProtocol.Write(local, 0, remote, 0, 4096, uid, replyTo),
 *     (status, failure) -> new BlockMoved(status, failure));
 * }</pre>
 *
 * {@link GetEngineDesc} and {@link LookupMemory} may also come from other processes (discovery); all other
 * commands are for actors in the engine's own JVM.
 */
public final class IoEngineProtocol {
  private IoEngineProtocol() {}

  /** Every command an engine actor accepts. */
  public sealed interface Command permits CreateBackend, RemoveBackend, RegisterRemoteEngine, DeregisterRemoteEngine,
      MarkPeerLost, RegisterMemory, RegisterMemories, DeregisterMemory, DeregisterMemories, Read, Write, BatchRead, BatchWrite, PopInboundTransferStatus, GetEngineDesc,
      PublishMemory, UnpublishMemory, CheckMemory, ExplainPath, LookupMemory, AllocateTransferUid, Internal {}

  /**
   * The engine's own messages (results of its asynchronous steps, messages between engines). Applications
   * have no reason to implement or send them.
   */
  public non-sealed interface Internal extends Command {}

  public record CreateBackend(BackendConfig config, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  public record RemoveBackend(BackendType type, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /** Registers a remote engine and opens the data path of every backend both engines have. */
  public record RegisterRemoteEngine(EngineDesc desc, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  public record DeregisterRemoteEngine(EngineDesc desc, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /**
   * Declares the engine {@code engineKey} lost (its node crashed, was cut off or left the cluster): the
   * engine drops it like a deregistration, but fails what is in flight to it and its sessions with
   * {@link StatusCode#ERR_PEER_LOST}, and remembers the key, so that later transfers, batches and
   * {@code createSession} to it fail at once with {@code ERR_PEER_LOST} and a message naming the engine and
   * {@code reason}, until the key is registered again. The key need not be registered (a loss may be noticed
   * before a registration finished). The engine remembers the most recently lost keys only
   * ({@code mori4j.engine.lost-peers-remembered}); an older one reads as unregistered ({@code ERR_NOT_FOUND}).
   * A non-zero {@code incarnation} limits the loss to that incarnation of the key: when another incarnation is
   * registered by now (the engine restarted and was registered again before its old self was noticed gone), the
   * command changes nothing and succeeds.
   */
  public record MarkPeerLost(String engineKey, long incarnation, String reason, ActorRef<StatusReply<Done>> replyTo) implements Command {
    /** A loss of whatever incarnation of {@code engineKey} is registered. */
    public MarkPeerLost(String engineKey, String reason, ActorRef<StatusReply<Done>> replyTo) {
      this(engineKey, 0, reason, replyTo);
    }
  }

  /** Registers host memory given as a native segment. */
  public record RegisterMemory(MemorySegment memory, MemoryLocationType location, int deviceId,
                               ActorRef<StatusReply<MemoryDesc>> replyTo) implements Command {}

  /**
   * Registers many regions with one round trip (each backend is asked once for all of them); the reply holds
   * one descriptor per region, in order, or the first refusal naming its index, in which case none is registered.
   */
  public record RegisterMemories(List<MemoryRegistration> regions, ActorRef<StatusReply<List<MemoryDesc>>> replyTo)
      implements Command {}

  public record DeregisterMemory(MemoryDesc desc, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /** Deregisters many regions with one round trip; a descriptor that is not registered fails the call and deregisters none. */
  public record DeregisterMemories(List<MemoryDesc> descs, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /**
   * Reads {@code size} bytes of {@code remoteSrc} into {@code localDst}; the reply comes when it is done.
   * {@code options} (null: the engine's defaults) may set a deadline (see {@link TransferOptions}).
   */
  public record Read(MemoryDesc localDst, long localOffset, MemoryDesc remoteSrc, long remoteOffset, long size,
                     long uid, TransferOptions options, ActorRef<TransferStatus> replyTo) implements Command {
    public Read(MemoryDesc localDst, long localOffset, MemoryDesc remoteSrc, long remoteOffset, long size, long uid,
                ActorRef<TransferStatus> replyTo) {
      this(localDst, localOffset, remoteSrc, remoteOffset, size, uid, null, replyTo);
    }
  }

  /** Writes {@code size} bytes of {@code localSrc} into {@code remoteDst}; the reply comes when it is done. */
  public record Write(MemoryDesc localSrc, long localOffset, MemoryDesc remoteDst, long remoteOffset, long size,
                      long uid, TransferOptions options, ActorRef<TransferStatus> replyTo) implements Command {
    public Write(MemoryDesc localSrc, long localOffset, MemoryDesc remoteDst, long remoteOffset, long size, long uid,
                 ActorRef<TransferStatus> replyTo) {
      this(localSrc, localOffset, remoteDst, remoteOffset, size, uid, null, replyTo);
    }
  }

  /** One batch entry: many blocks between one (local, remote) pair; the reply comes when all are done. */
  public record BatchRead(MemoryDesc localDst, long[] localOffsets, MemoryDesc remoteSrc, long[] remoteOffsets,
                          long[] sizes, long uid, TransferOptions options, ActorRef<TransferStatus> replyTo) implements Command {
    public BatchRead(MemoryDesc localDst, long[] localOffsets, MemoryDesc remoteSrc, long[] remoteOffsets, long[] sizes, long uid,
                     ActorRef<TransferStatus> replyTo) {
      this(localDst, localOffsets, remoteSrc, remoteOffsets, sizes, uid, null, replyTo);
    }
  }

  public record BatchWrite(MemoryDesc localSrc, long[] localOffsets, MemoryDesc remoteDst, long[] remoteOffsets,
                           long[] sizes, long uid, TransferOptions options, ActorRef<TransferStatus> replyTo) implements Command {
    public BatchWrite(MemoryDesc localSrc, long[] localOffsets, MemoryDesc remoteDst, long[] remoteOffsets, long[] sizes, long uid,
                      ActorRef<TransferStatus> replyTo) {
      this(localSrc, localOffsets, remoteDst, remoteOffsets, sizes, uid, null, replyTo);
    }
  }

  public record PopInboundTransferStatus(String remoteEngineKey, long uid,
                                         ActorRef<Optional<TransferStatus>> replyTo) implements Command {}

  public record AllocateTransferUid(ActorRef<Long> replyTo) implements Command {}

  /** Asks for the engine's descriptor; may come from another process. */
  public record GetEngineDesc(ActorRef<EngineDesc> replyTo) implements Command, ControlMessage {}

  /**
   * Asks what a transfer between {@code local} (registered here) and {@code remote} (of a registered engine)
   * would use and why (see {@link PathExplanation}); an error for descriptors a transfer would refuse.
   */
  public record ExplainPath(MemoryDesc local, MemoryDesc remote, ActorRef<StatusReply<PathExplanation>> replyTo) implements Command {}

  /** Makes this engine answer {@link LookupMemory} for {@code name} with {@code desc}. */
  public record PublishMemory(String name, MemoryDesc desc, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /** Confirms that {@code desc} is memory registered with this engine (what {@link PublishMemory} needs), changing nothing. */
  public record CheckMemory(MemoryDesc desc, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /** Stops answering {@link LookupMemory} for {@code name}; replies whether the name was published. */
  public record UnpublishMemory(String name, ActorRef<StatusReply<Boolean>> replyTo) implements Command {}

  /** Asks for a memory descriptor published under {@code name}; may come from another process. */
  public record LookupMemory(String name, ActorRef<MemoryLookup> replyTo) implements Command, ControlMessage {}

  /** The answer to {@link LookupMemory}: the descriptors published under the name (zero or one). */
  public record MemoryLookup(String name, List<MemoryDesc> found) implements ControlMessage {
    public MemoryLookup {
      found = List.copyOf(found);
    }

    public Optional<MemoryDesc> desc() {
      return found.stream().findFirst();
    }
  }
}
