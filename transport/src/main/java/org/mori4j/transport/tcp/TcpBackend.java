package org.mori4j.transport.tcp;

import static org.mori4j.transport.tcp.WireFormat.*;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.CompletionSource;
import org.mori4j.transport.DeviceStaging;
import org.mori4j.transport.InboundNotifications;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.RegionTable;
import org.mori4j.transport.TransferBackend;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.TransportException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TCP backend: NIO sockets, several lanes per peer spread over the I/O loops, requests sent zero-copy
 * from registered memory through direct views, large single transfers striped over every lane, batches
 * sent as one request with vectored I/O. The handshake hands the initiator this backend's data address
 * and a per-initiator token, which the initiator must present in its HELLO; a connection without one is
 * refused ({@link TcpHandshake} keeps that reply's format and the tokens).
 */
public final class TcpBackend implements TransferBackend {
  private static final Logger log = LoggerFactory.getLogger(TcpBackend.class);

  private final String engineKey;
  private final TcpSettings settings;
  private final RegionTable regions = new RegionTable();
  private final InboundNotifications inbound = new InboundNotifications();
  private final TcpHandshake handshake = new TcpHandshake();
  private final ConcurrentHashMap<String, TcpPeer> peers = new ConcurrentHashMap<>();
  private final List<TcpIoLoop> loops = new ArrayList<>();
  private final AtomicInteger nextLoop = new AtomicInteger();
  private ServerSocketChannel server;
  private InetSocketAddress boundAddress;
  private volatile BackendListener listener = BackendListener.NONE;
  private volatile boolean closed;
  private final DeviceStaging staging;
  private final TcpLatency latency;
  /** Extra lanes per peer for stripes only, on {@link #bulkLoop} (0: none; stripes go over every regular lane). */
  private final int bulkLanes;
  /** The I/O loop of the bulk lanes, both ends: this engine's as initiator, and the ones peers open to it; or null. */
  private TcpIoLoop bulkLoop;
  private final RefusalLog refusals = new RefusalLog(LoggerFactory.getLogger(TargetConnection.class));

  /** A backend for host memory only: GPU regions are refused. */
  public TcpBackend(String engineKey, TcpSettings settings) {
    this(engineKey, settings, null);
  }

  /** A backend that also moves GPU memory, through {@code staging}'s pinned buffers (null: host memory only). */
  public TcpBackend(String engineKey, TcpSettings settings, DeviceStaging staging) {
    this(engineKey, settings, staging, TcpLatency.OFF);
  }

  /** A backend with {@code latency}'s caller-driven round trips and serve spin (see {@link TcpLatency}). */
  public TcpBackend(String engineKey, TcpSettings settings, DeviceStaging staging, TcpLatency latency) {
    this(engineKey, settings, staging, latency, 0);
  }

  /**
   * A backend that also opens {@code bulkLanes} bulk lanes to each peer: connections served by one more I/O thread at
   * both ends, which carry only the stripes of transfers of at least the stripe threshold (the first regular lane
   * carries one stripe, each bulk lane one). A large transfer is then written and read by two threads on each side,
   * while small transfers stay on the regular lanes and never wake the bulk thread. 0: no bulk lanes.
   */
  public TcpBackend(String engineKey, TcpSettings settings, DeviceStaging staging, TcpLatency latency, int bulkLanes) {
    if (bulkLanes < 0 || bulkLanes > 16) throw new IllegalArgumentException("bulkLanes must be between 0 and 16: " + bulkLanes);
    this.engineKey = engineKey;
    this.settings = settings;
    this.staging = staging;
    this.latency = latency;
    this.bulkLanes = bulkLanes;
  }

  @Override
  public String name() {
    return "TCP";
  }

  RegionTable regions() {
    return regions;
  }

  /** Where target connections closed for cause are logged, rate-limited per reason. */
  RefusalLog refusals() {
    return refusals;
  }

  /** How long an accepted connection may take to present a valid hello: the initiators' own connect timeout. */
  long helloTimeoutNanos() {
    return settings.connectTimeout().toNanos();
  }

  /** Where the data listener is bound (after {@link #start}). */
  public InetSocketAddress boundAddress() {
    return boundAddress;
  }

  @Override
  public void start(BackendListener listener) {
    this.listener = listener;
    try {
      long timeout = settings.peerTimeout().toNanos();
      for (int i = 0; i < settings.ioThreads(); i++) loops.add(new TcpIoLoop("tcp-io-" + engineKey + "-" + i, timeout, staging, settings.gpuStagingChunk(),
          latency.serveSpinNanos()));
      // bulk lanes carry stripes of megabytes, never a ping-pong: no serve spin. Without bulk lanes of its own an
      // engine serves a peer's bulk lanes on its regular loops (one setting for a whole cluster is the expected use)
      if (bulkLanes > 0) bulkLoop = new TcpIoLoop("tcp-io-" + engineKey + "-bulk", timeout, staging, settings.gpuStagingChunk(), 0);
      server = ServerSocketChannel.open();
      server.bind(new InetSocketAddress(settings.bindHost(), settings.bindPort()), 128);
      server.configureBlocking(false);
      boundAddress = (InetSocketAddress) server.getLocalAddress();
      TcpIoLoop acceptLoop = loops.get(0);
      server.register(acceptLoop.selector(), SelectionKey.OP_ACCEPT, (Runnable) this::acceptAll);
      log.info("TCP backend of engine {} listening on {}{}", engineKey, boundAddress, settings.tls() == null ? "" : " (TLS: " + settings.tls() + ")");
    } catch (IOException e) {
      close();
      throw new TransportException(TransportError.TRANSPORT,
          "TCP backend cannot listen on " + settings.bindHost() + ":" + settings.bindPort() + ": " + e.getMessage(), e);
    }
  }

  private void acceptAll() {
    try {
      SocketChannel ch;
      while ((ch = server.accept()) != null) {
        DataSockets.configure(ch, settings);
        TcpIoLoop loop = pickLoop();
        SocketChannel accepted = ch;
        loop.execute(() -> {
          try {
            TargetConnection c = new TargetConnection(loop, accepted, this, settings.maxBatchEntries());
            // the handshake comes first; the connection reads its hello only once it is done
            if (settings.tls() != null) c.tls = new TlsChannel(settings.tls().serverEngine(), accepted);
            c.attach();
          } catch (IOException e) {
            log.warn("cannot register accepted connection", e);
            closeQuietly(accepted);
          }
        });
      }
    } catch (IOException | IllegalStateException e) {
      if (!closed) log.warn("accept failed on {}", boundAddress, e);
    }
  }

  private TcpIoLoop pickLoop() {
    return loops.get(Math.floorMod(nextLoop.getAndIncrement(), loops.size()));
  }

  @Override
  public byte[] handshakeRequest(String peerKey) {
    return engineKey.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public byte[] acceptHandshake(String initiatorKey, byte[] request) {
    if (closed) throw new TransportException(TransportError.BAD_STATE, "TCP backend of " + engineKey + " is closed");
    return handshake.accept(initiatorKey, request, boundAddress, settings.tls() != null);
  }

  /** Whether {@code token} is the one this target issued {@code initiatorKey} last (see {@link TcpHandshake}). */
  boolean acceptsToken(String initiatorKey, long token) {
    return handshake.acceptsToken(initiatorKey, token);
  }

  @Override
  public Object connect(String peerKey, byte[] reply) {
    if (closed) throw new TransportException(TransportError.BAD_STATE, "TCP backend of " + engineKey + " is closed");
    TcpHandshake.Reply r = TcpHandshake.parse(peerKey, reply);
    InetSocketAddress address = r.address();
    long token = r.token();
    boolean peerTls = r.tls();
    if (peerTls != (settings.tls() != null))
      throw new TransportException(TransportError.INVALID_ARGS, "engine '" + peerKey + "' runs its TCP data path "
          + (peerTls ? "with TLS" : "without TLS") + " but engine '" + engineKey + "' " + (peerTls ? "without" : "with")
          + " (mori4j.tcp.tls): both ends of a data connection must agree");
    TcpPeer peer = new TcpPeer(peerKey, settings.connectionsPerPeer(), bulkLanes, listener);
    List<SocketChannel> opened = new ArrayList<>();
    try {
      for (int i = 0; i < peer.lanes.length; i++) {
        SocketChannel ch = SocketChannel.open();
        opened.add(ch);
        boolean bulk = i >= peer.regular;
        TlsChannel tls = DataSockets.openAndHello(ch, address, token, bulk, engineKey, settings);
        DataSockets.configure(ch, settings);
        TcpIoLoop loop = bulk ? bulkLoop : pickLoop();
        // stripes never take the caller-driven path, so a bulk lane needs none of its state
        peer.lanes[i] = new InitiatorConnection(loop, ch, peer, settings.maxBatchEntries(), bulk ? TcpLatency.OFF : latency);
        peer.lanes[i].tls = tls;
      }
      for (InitiatorConnection c : peer.lanes) attachOnLoop(c);
    } catch (IOException | RuntimeException e) {
      opened.forEach(TcpBackend::closeQuietly);
      throw new TransportException(TransportError.TRANSPORT, "cannot open TCP data connection to " + peerKey + " at " + address + ": " + e.getMessage(), e);
    }
    TcpPeer old = peers.put(peerKey, peer);
    if (old != null) old.lost(TransportError.PEER_LOST, "replaced by a new connection");
    return peer;
  }

  private void attachOnLoop(InitiatorConnection c) throws IOException {
    CompletableFuture<Void> done = new CompletableFuture<>();
    c.loop.execute(() -> {
      try {
        c.attach();
        done.complete(null);
      } catch (IOException e) {
        done.completeExceptionally(e);
      }
    });
    try {
      done.get(settings.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new IOException("I/O loop did not take the connection: " + e, e);
    }
  }

  @Override
  public void disconnect(String peerKey, TransportError error, String reason) {
    TcpPeer p = peers.remove(peerKey);
    if (p != null) p.lost(error, reason);
    handshake.revoke(peerKey);
  }

  @Override
  public boolean connected(String peerKey) {
    TcpPeer p = peers.get(peerKey);
    return p != null && p.alive();
  }

  @Override
  public byte[] registerMemory(LocalRegion region) {
    if (region.gpu() && !gpuReady())
      throw new TransportException(TransportError.GPU_OP, "the TCP backend of engine " + engineKey + " cannot move GPU memory: "
          + (staging == null ? "it was created without GPU staging" : staging.unavailableReason()));
    regions.put(region);
    return new byte[0];
  }

  @Override
  public void deregisterMemory(LocalRegion region) {
    regions.remove(region.id());
  }

  @Override
  public boolean canServe(LocalRegion local, boolean remoteGpu) {
    // a remote GPU end is the target's business (it stages on its side); a local one needs our staging
    return !local.gpu() || gpuReady();
  }

  @Override
  public org.mori4j.transport.ServeRefusal refusal(LocalRegion local, Object peer, boolean remoteGpu, byte[] remoteData) {
    if (!(peer instanceof TcpPeer p)) return new org.mori4j.transport.ServeRefusal(org.mori4j.transport.ServeRefusal.Reason.NOT_CONNECTED, "no TCP connection to the peer");
    if (local.gpu() && !gpuReady())
      return new org.mori4j.transport.ServeRefusal(org.mori4j.transport.ServeRefusal.Reason.NO_GPU_RUNTIME, "TCP stages GPU memory through host"
          + " buffers, which needs a GPU runtime: " + (staging == null ? "created without GPU staging" : staging.unavailableReason()));
    return canServe(local, peer, remoteGpu, remoteData) ? null : org.mori4j.transport.TransferBackend.super.refusal(local, peer, remoteGpu, remoteData);
  }

  @Override
  public String describePeer(Object peer) {
    return peer instanceof TcpPeer p ? p.describe() : "TCP";
  }

  /** GPU memory on either side passes through pinned host buffers (the target stages its own). */
  @Override
  public boolean stages(LocalRegion local, boolean remoteGpu) {
    return local.gpu() || remoteGpu;
  }

  private boolean gpuReady() {
    return staging != null && staging.available();
  }

  @Override
  public void submit(TransferOp op) {
    if (CallerDriveStats.TRACE) CallerDriveStats.trace(CallerDriveStats.SUBMIT, op.uid());
    if (!(op.peer() instanceof TcpPeer peer)) {
      op.transferFailed(TransportError.BAD_STATE, "op has no TCP peer");
      return;
    }
    if (!peer.alive()) {
      op.transferFailed(TransportError.PEER_LOST, "peer " + peer.key + " lost: " + peer.lostReason());
      return;
    }
    if (op.blockCount() > settings.maxBatchEntries()) {
      op.transferFailed(TransportError.INVALID_ARGS, "batch of " + op.blockCount() + " blocks exceeds the TCP limit of "
          + settings.maxBatchEntries() + " (mori4j.tcp.max-batch-entries)");
      return;
    }
    if (!op.local().segment().scope().isAlive()) {
      // a closed segment would make the I/O thread fail mid-request and take the whole connection down
      op.transferFailed(TransportError.BAD_STATE, "local memory id " + op.local().id() + " was freed while registered");
      return;
    }
    if (peer.stripes() > 1 && op.blockCount() == 1 && op.totalBytes() >= settings.stripeThreshold()) {
      StripePart.submitStripes(op, peer);
      return;
    }
    InitiatorConnection c = peer.lane();
    op.lane = c;
    // an idle connection sends a small request from this thread, and its caller may read the response itself
    if (c.callerTrip != null && c.callerTrip.trySend(op)) return;
    c.queued.incrementAndGet();
    if (CallerDriveStats.TRACE) CallerDriveStats.trace(CallerDriveStats.LOOP_SUBMIT, op.uid());
    c.loop.submit(op);
  }

  @Override
  public List<CompletionSource> completionSources() {
    List<CompletionSource> all = new ArrayList<>(loops);
    if (bulkLoop != null) all.add(bulkLoop);
    return List.copyOf(all);
  }

  /** The bulk lanes' I/O loop, or null without bulk lanes (tests look at it). */
  TcpIoLoop bulkLoop() {
    return bulkLoop;
  }

  /**
   * Loop thread of {@code c}, a target connection whose hello said it is a bulk lane: hands it to the bulk loop, which
   * reads it from then on (false: it stays where it is, this backend having no bulk loop or closing).
   */
  boolean toBulkLoop(TargetConnection c) {
    TcpIoLoop bulk = bulkLoop;
    if (bulk == null || c.loop == bulk) return false;
    c.detach();
    try {
      bulk.execute(() -> c.arriveOn(bulk));
      return true;
    } catch (IllegalStateException loopClosed) {
      c.fail(TransportError.BAD_STATE, "TCP backend closed");
      return true;
    }
  }

  /** Whether this target keeps inbound writes for the application (MORI's {@code enable_notification}). */
  boolean notificationsEnabled() {
    return settings.enableNotification();
  }

  @Override
  public InboundNotifications inbound() {
    return inbound;
  }

  @Override
  public void close() {
    if (closed) return;
    closed = true;
    for (TcpPeer p : peers.values()) p.lost(TransportError.BAD_STATE, "TCP backend closed");
    peers.clear();
    if (server != null) closeQuietly(server);
    for (TcpIoLoop l : loops) l.close(2000);
    if (bulkLoop != null) bulkLoop.close(2000);
  }

  private static void closeQuietly(java.nio.channels.Channel c) {
    try {
      c.close();
    } catch (IOException e) {
      log.debug("close", e);
    }
  }
}
