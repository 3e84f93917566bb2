package org.mori4j.transport;

import java.util.List;

/**
 * The service-provider interface every transfer medium implements (TCP and XGMI now; RDMA later). A
 * backend owns its resources (sockets, queue pairs, streams), checks inbound requests against the local
 * registrations it was given, and reports outcomes through each {@link TransferOp}. Control methods
 * (handshake, connect, register) are called from one control thread at a time; {@link #submit} from any
 * thread; the {@link #completionSources()} are driven by the engine's pollers.
 *
 * <p>Connecting to a peer is a two-step handshake carried by the engines' control plane: the initiator's
 * {@link #handshakeRequest} bytes reach the peer backend's {@link #acceptHandshake}, whose reply is given
 * to {@link #connect}. TCP exchanges its data address and a connection token that way; RDMA will exchange
 * queue-pair numbers and GIDs the same way.
 */
public interface TransferBackend extends AutoCloseable {
  String name();

  /** Starts the backend (listening sockets, devices); events go to {@code listener}. */
  void start(BackendListener listener);

  /** Initiator side: what to send to the peer backend to open a connection to it. */
  byte[] handshakeRequest(String peerKey);

  /** Target side: answers an initiator's handshake request; throws {@link TransportException} to refuse. */
  byte[] acceptHandshake(String initiatorKey, byte[] request);

  /**
   * Initiator side: opens the data path to the peer with the peer's handshake reply; blocks at most the
   * configured connect timeout. Returns the handle to put in {@link TransferOp#peer}.
   */
  Object connect(String peerKey, byte[] handshakeReply);

  /** Closes the data path to a peer; its in-flight transfers fail with {@code reason}. */
  void disconnect(String peerKey, TransportError error, String reason);

  /** Whether the data path to {@code peerKey} is up (connected and not lost). */
  boolean connected(String peerKey);

  /** Makes a region reachable through this backend; returns the data to advertise in its descriptor. */
  byte[] registerMemory(LocalRegion region);

  void deregisterMemory(LocalRegion region);

  /**
   * Makes {@code view} reachable, a region that lies inside {@code parent} (registered with this backend, same
   * memory kind and device; a tensor view of an allocation): backends whose registration is costly (pinning
   * memory with the NIC, asking the driver for an IPC handle) share the parent's, so that registering a view
   * costs no new device registration, and keep it until both are deregistered. {@code view} is deregistered
   * like any region. The default registers it as a region of its own.
   */
  default byte[] registerView(LocalRegion view, LocalRegion parent) {
    return registerMemory(view);
  }

  /** Whether this backend can move bytes between a local region and remote memory of the given kind. */
  boolean canServe(LocalRegion local, boolean remoteGpu);

  /**
   * Whether this backend can move bytes between {@code local} and one particular remote region reached through
   * {@code peer} (the handle {@link #connect} returned): {@code remoteGpu} is the region's location and
   * {@code remoteData} this backend's part of its descriptor (null when it has none). Called on the data path
   * for every transfer: it must not block or allocate. Backends that need nothing of the region keep the default.
   */
  default boolean canServe(LocalRegion local, Object peer, boolean remoteGpu, byte[] remoteData) {
    return canServe(local, remoteGpu);
  }

  /**
   * Why this backend cannot serve the pair that {@link #canServe(LocalRegion, Object, boolean, byte[])} is asked
   * about, or null when it can; for the engine's path explanation, off the data path (it may allocate). Backends
   * that can say more than "no" override it; their answer must agree with {@code canServe}.
   */
  default ServeRefusal refusal(LocalRegion local, Object peer, boolean remoteGpu, byte[] remoteData) {
    return canServe(local, peer, remoteGpu, remoteData) ? null
        : new ServeRefusal(ServeRefusal.Reason.OTHER, name() + " cannot move " + (local.gpu() ? "GPU" : "host") + " memory to "
            + (remoteGpu ? "GPU" : "host") + " memory of this peer");
  }

  /**
   * For the engine's path explanation: how this backend reaches {@code peer} (the handle {@link #connect}
   * returned): its connections or device, in a few words. Off the data path.
   */
  default String describePeer(Object peer) {
    return name();
  }

  /**
   * Whether a transfer between {@code local} and remote memory of the given kind passes through host staging
   * buffers (a copy between device and pinned host memory on either side) rather than moving directly.
   */
  default boolean stages(LocalRegion local, boolean remoteGpu) {
    return false;
  }

  /**
   * Whether this backend reads a batch op's block arrays ({@link TransferOp#localOffset} and the others) only
   * until it completes the op, on the thread that completes it, and never afterwards. The engine then hands the
   * arrays of a completed batch to a later one instead of allocating three new arrays per batch (a 4,096-block
   * batch is 96 KiB of heap). False by default: a backend that frames or stages blocks on other threads, or
   * may still read them while another thread fails the op, must not claim it.
   */
  default boolean readsBlocksOnlyUntilDone() {
    return false;
  }

  /** What this backend adds to its engine's descriptor (XGMI: where the engine runs); empty by default. */
  default byte[] engineData() {
    return new byte[0];
  }

  /**
   * Whether an engine whose descriptor carries {@code peerEngineData} for this backend (null: none) can be
   * reached at all; the engine does not try to connect when not (XGMI: an engine on another host).
   */
  default boolean reaches(byte[] peerEngineData) {
    return true;
  }

  /** Queues a checked op; never blocks, never throws for a closed backend (the op fails instead). */
  void submit(TransferOp op);

  /**
   * Submitting thread: puts the checked batch {@code op} on its way from this thread when the backend can do so at
   * once (XGMI: its worker is idle and everything the op needs is set up, so the caller uploads the block table and
   * launches the kernel itself, without a hand-off and a wake-up in front of the launch; XGMI also takes a single-block
   * op here, its copy issued from this thread, unless {@code mori4j.xgmi.caller-poll} is off). True when the op was taken
   * (issued, or failed with the message its worker would have given); the backend has then read its block arrays for
   * the last time, so the engine may pass the caller's own arrays, which the caller reuses once the call returns.
   * False when nothing was done: the engine then submits the op with arrays of its own. Never blocks on the
   * backend's threads. False by default.
   */
  default boolean issueFromCaller(TransferOp op) {
    return false;
  }

  /**
   * Whether this backend may carry several batch entries of one batch-of-batches call as one unit of work
   * ({@link #submitGroup}): the engine then holds back the entries it routes here and hands them over together at
   * the end of the call. False by default (every entry is submitted as it is routed).
   */
  default boolean fusesBatches() {
    return false;
  }

  /**
   * Submitting thread: {@link #issueFromCaller} for the checked entries {@code ops} of one batch-of-batches call, all
   * routed to this backend, all or nothing: true when every one was taken (issued, or failed with the backend's
   * message), and then none of their block arrays is read again; false when nothing was done. False by default.
   */
  default boolean issueGroupFromCaller(java.util.List<? extends TransferOp> ops) {
    return false;
  }

  /**
   * Queues the checked entries {@code ops} of one batch-of-batches call, all routed to this backend, in order. Each op
   * keeps its own outcome; a backend that {@link #fusesBatches} may move several of them with one unit of work (XGMI:
   * one kernel launch). Never blocks, never throws for a closed backend. The default submits them one by one.
   */
  default void submitGroup(java.util.List<? extends TransferOp> ops) {
    for (TransferOp op : ops) submit(op);
  }

  List<CompletionSource> completionSources();

  /** Target-side record of inbound transfers. */
  InboundNotifications inbound();

  /**
   * Removes and returns the outcome of inbound transfer {@code uid} from {@code initiatorKey}, or null. A backend
   * whose notifications arrive on another thread (RDMA: receive completions its workers poll) first takes in
   * what has already arrived, so that a notification whose transfer the initiator saw complete is found.
   */
  default InboundNotifications.Outcome popInbound(String initiatorKey, long uid) {
    return inbound().pop(initiatorKey, uid);
  }

  /**
   * Region {@code regionId} of engine {@code ownerKey}, which this backend may have confirmed (see
   * {@link RegionConfirmer}), is gone: forget it, and run {@code done} once nothing of this backend uses it
   * any more. Backends that confirm nothing run {@code done} at once.
   */
  default void revoke(String ownerKey, long regionId, Runnable done) {
    done.run();
  }

  /** Fails everything in flight with {@link TransportError#BAD_STATE} and frees every resource. */
  @Override
  void close();
}
