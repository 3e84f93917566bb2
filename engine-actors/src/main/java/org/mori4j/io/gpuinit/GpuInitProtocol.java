package org.mori4j.io.gpuinit;

import org.apache.pekko.actor.typed.ActorRef;

/**
 * Messages of a context's actor ({@link ContextActor}): what peers' proxies send it (rkey lookups, SENDs,
 * write-with-immediate notices, atomics, connection probes) and what it answers them. Every {@link Wire} message
 * crosses the network through {@link GpuInitMessageSerializer}; the others stay in this process.
 */
public final class GpuInitProtocol {
  private GpuInitProtocol() {}

  /** Everything a context actor takes. */
  public sealed interface Command permits Wire, Watch, Stop {}

  /** Messages that cross the network. */
  public sealed interface Wire extends Command permits LookupRkey, RkeyAnswer, Probe, ProbeAnswer, PeerOp, PeerOpResult, Closing, Ping, Pong {}

  /** Which region rkey {@code rkey} names; answered with {@link RkeyAnswer} carrying {@code corr}. */
  public record LookupRkey(int rkey, long corr, ActorRef<Command> replyTo) implements Wire {}

  /** {@code found}: the region's address, size, access bits and engine descriptor ({@code MemoryDesc.toBytes}). */
  public record RkeyAnswer(long corr, int rkey, boolean found, long address, long size, int access, byte[] desc) implements Wire {}

  /**
   * Does endpoint {@code qpn} exist here; the answer carries its internal region's descriptor. {@code from}: the
   * connecting context, which this one tells when it closes ({@link Closing}).
   */
  public record Probe(int qpn, ActorRef<ProbeAnswer> replyTo, ActorRef<Command> from) implements Wire {}

  public record ProbeAnswer(int qpn, boolean found, byte[] desc, String message) implements Wire {}

  /**
   * One remote operation of work request {@code wqeIndex} of endpoint {@code srcQpn}, for endpoint {@code dstQpn}:
   * {@code op} is the WQE opcode (SEND with {@code payload}, WRITE_WITH_IMM's notice with {@code imm} and
   * {@code length}, or an atomic on {@code remoteAddr}/{@code rkey}). Answered with {@link PeerOpResult}.
   */
  public record PeerOp(int op, int srcQpn, int dstQpn, long wqeIndex, long remoteAddr, int rkey, long compareAdd, long swap, int imm,
                       int length, byte[] payload, ActorRef<Command> replyTo) implements Wire {}

  /** {@code status}: an ibv_wc_status for the initiator; {@code value}: an atomic's old value. */
  public record PeerOpResult(int srcQpn, long wqeIndex, int status, long value, String message) implements Wire {}

  /**
   * A context closing (or its engine's ActorSystem terminating) tells the contexts connected to it or by it: their
   * endpoints to it fail with RETRY_EXC_ERR at once. Needed because Pekko's remote deathwatch is off outside Pekko
   * Cluster ({@code pekko.remote.use-unsafe-remote-features-outside-cluster}).
   */
  public record Closing(ActorRef<Command> from) implements Wire {}

  /** Liveness probe of a peer context that has left a work request unfinished for a while; answered with {@link Pong}. */
  public record Ping(long corr, ActorRef<Command> replyTo) implements Wire {}

  public record Pong(long corr) implements Wire {}

  /** Local: watch a peer context (its termination fails that peer's endpoints with RETRY_EXC_ERR). */
  public record Watch(ActorRef<Command> peer) implements Command {}

  /** Local: stop the actor. */
  public record Stop() implements Command {}
}
