package org.mori4j.io.internal;

import org.apache.pekko.actor.typed.ActorRef;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngineProtocol;

/**
 * The messages engines exchange for the one-sided backends, XGMI and RDMA (see {@link XgmiControl}): an initiator
 * confirms a remote region with its owner before its first copy or work request, and an owner that deregisters a
 * region (or closes) tells every engine that confirmed it to drop it (and its mappings), and waits for them.
 */
public final class XgmiMessages {
  private XgmiMessages() {}

  /**
   * Initiator to owner: is region {@code regionId} registered under {@code accessKey}, and with what data of the
   * asking {@code backend} (XGMI: IPC data; RDMA: rkeys)?
   */
  public record Confirm(String fromKey, long regionId, long accessKey, BackendType backend, ActorRef<IoEngineProtocol.Command> from,
                        ActorRef<ConfirmReply> replyTo, long ownerIncarnation) implements IoEngineProtocol.Internal, ControlMessage {
    /** A confirmation that does not say which incarnation of the owner it expects (0: not stated). */
    public Confirm(String fromKey, long regionId, long accessKey, BackendType backend, ActorRef<IoEngineProtocol.Command> from,
                   ActorRef<ConfirmReply> replyTo) {
      this(fromKey, regionId, accessKey, backend, from, replyTo, 0);
    }
  }

  /**
   * The owner's answer: the region's address, size and XGMI data, or (error != 0, a transport error's wire
   * value) why not.
   */
  public record ConfirmReply(long address, long size, byte[] data, int error, String reason) implements ControlMessage {}

  /** Owner to importer: region {@code regionId} of engine {@code ownerKey} is gone; close its mappings, then answer. */
  public record Revoke(String ownerKey, long regionId, ActorRef<Revoked> replyTo) implements IoEngineProtocol.Internal, ControlMessage {}

  /** The importer no longer maps the region. */
  public record Revoked(String importerKey, long regionId) implements ControlMessage {}

  /** Importer to owner: this engine closed and maps nothing of yours any more; do not wait for it. */
  public record ImporterClosed(String importerKey) implements IoEngineProtocol.Internal, ControlMessage {}
}
