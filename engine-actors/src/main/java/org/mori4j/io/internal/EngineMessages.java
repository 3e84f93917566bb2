package org.mori4j.io.internal;

import java.util.Map;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.pattern.StatusReply;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngineProtocol;
import org.mori4j.io.MemoryDesc;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.TransferBackend;

/** The engine actor's internal messages: results of its asynchronous steps and messages between engines. */
public final class EngineMessages {
  private EngineMessages() {}

  /**
   * Engine to engine: a backend asks its counterpart on the remote engine to accept a connection. It names the
   * asking engine's incarnation and the one it expects to reach ({@link EngineDesc#incarnation()}; 0: not stated):
   * the target refuses a handshake meant for another incarnation of its key (it was restarted), and forgets the
   * inbound notifications of an initiator that comes back as a new incarnation.
   */
  public record BackendHandshake(String fromKey, BackendType type, byte[] request, ActorRef<HandshakeReply> replyTo,
                                 long fromIncarnation, long toIncarnation)
      implements IoEngineProtocol.Internal, ControlMessage {
    /** A handshake that states no incarnation (an engine of an older build). */
    public BackendHandshake(String fromKey, BackendType type, byte[] request, ActorRef<HandshakeReply> replyTo) {
      this(fromKey, type, request, replyTo, 0, 0);
    }
  }

  /** The answer to {@link BackendHandshake}: data for the initiator's backend, or why it was refused. */
  public record HandshakeReply(byte[] data, String error) implements ControlMessage {}

  record BackendStarted(BackendType type, TransferBackend backend, ActorRef<BackendActor.Command> actor, Throwable failure,
                        ActorRef<StatusReply<Done>> replyTo) implements IoEngineProtocol.Internal {}

  record RemoteConnected(EngineDesc desc, Map<BackendType, Object> handles, String failure,
                         ActorRef<StatusReply<Done>> replyTo) implements IoEngineProtocol.Internal {}

  record PeerLost(String peerKey, BackendType type, String reason) implements IoEngineProtocol.Internal {}

  /** A backend's path to a peer left service (an RDMA queue pair in ERR): connect that backend to it again. */
  record Reconnect(String peerKey, BackendType type, String reason) implements IoEngineProtocol.Internal {}

  public record OpenSession(long localId, String peerKey, SessionActor.Handle session, ActorRef<Done> replyTo)
      implements IoEngineProtocol.Internal {}

  record SessionEnded(ActorRef<SessionActor.Command> session) implements IoEngineProtocol.Internal {}

  record BackendRemoved(BackendType type, ActorRef<StatusReply<Done>> replyTo) implements IoEngineProtocol.Internal {}

  public record Shutdown(ActorRef<Done> replyTo) implements IoEngineProtocol.Internal {}

  /**
   * Engine to engine: the sender (of incarnation {@code incarnation}) is closing; sent when its close begins, to the
   * engines it registered and those that confirmed its memory. The receiver declares it lost at once, so that what
   * waits on it (a region confirmation the closed engine will never answer, work on the wire) ends with
   * ERR_PEER_LOST now instead of after a timeout.
   */
  public record PeerClosing(String engineKey, long incarnation) implements IoEngineProtocol.Internal, ControlMessage {}
}
