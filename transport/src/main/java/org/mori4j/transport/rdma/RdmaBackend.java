package org.mori4j.transport.rdma;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.CompletionSource;
import org.mori4j.transport.InboundNotifications;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.RegionConfirmer;
import org.mori4j.transport.TransferBackend;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.TransportException;
import org.mori4j.transport.rdma.verbs.CompletionChannel;
import org.mori4j.transport.rdma.verbs.CompletionQueue;
import org.mori4j.transport.rdma.verbs.VerbsDevice;
import org.mori4j.transport.rdma.verbs.VerbsProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * MORI-IO's RDMA backend, written once against {@link VerbsProvider}: the same code drives a real NIC through
 * libibverbs and the software provider (emulation) that CI runs. Per selected device ({@code MORI_RDMA_DEVICES})
 * one protection domain and {@code numWorkerThreads} workers, each with its own completion queue and thread; per
 * remote engine and device {@code qpPerTransfer} reliable-connected queue pairs on one worker, brought up with
 * the QPN/GID/LID/PSN/MTU exchanged in the engines' backend handshake ({@link QpBringUp}; the handshakes, peers and
 * their loss live in {@link RdmaConnections}). Transfers are RDMA
 * WRITE/READ chains ({@link PartPoster}); remote regions are confirmed with their owner before first use
 * ({@link RegionConfirmer}), so a forged or stale descriptor is refused before anything is posted; a write to a
 * target with notifications ends with an 8-byte SEND of its uid, which the target's worker records for
 * {@code popInboundTransferStatus}.
 */
public final class RdmaBackend implements TransferBackend {
  private static final Logger log = LoggerFactory.getLogger(RdmaBackend.class);

  private final String engineKey;
  private final RdmaSettings settings;
  private final VerbsProvider provider;
  private final RegionConfirmer confirmer;
  private final InboundNotifications inbound = new InboundNotifications();
  private final List<RdmaDevice> devices = new ArrayList<>();
  private final List<RdmaWorker> workers = new ArrayList<>();
  /** Handshakes, the peers this engine reaches and the initiators it serves, and their loss. */
  private final RdmaConnections connections;
  private final ConcurrentHashMap<Long, LocalRegion> registered = new ConcurrentHashMap<>();
  /** The devices as the data path reads them (published once started; empty once closed). */
  private volatile RdmaDevice[] open = new RdmaDevice[0];
  private volatile BackendListener listener = BackendListener.NONE;
  private volatile boolean closed;

  public RdmaBackend(String engineKey, RdmaSettings settings, VerbsProvider provider, RegionConfirmer confirmer) {
    this.engineKey = engineKey;
    this.settings = settings;
    this.provider = provider;
    this.confirmer = confirmer;
    this.connections = new RdmaConnections(engineKey, settings, devices, () -> listener);
  }

  @Override
  public String name() {
    return provider.emulated() ? "RDMA (software provider: emulation)" : "RDMA (" + provider.name() + ")";
  }

  public VerbsProvider provider() {
    return provider;
  }

  @Override
  public void start(BackendListener listener) {
    this.listener = listener;
    List<String> names = provider.deviceNames();
    if (names.isEmpty())
      throw new TransportException(TransportError.RDMA_OP, "no RDMA device on this machine: " + provider.whyNoDevice());
    List<String> chosen;
    try {
      chosen = DeviceSelection.select(settings.devices(), names);
    } catch (IllegalArgumentException e) {
      throw new TransportException(TransportError.INVALID_ARGS, e.getMessage());
    }
    try {
      for (String name : chosen) {
        VerbsDevice d = provider.open(name);
        RdmaWorker[] ws = new RdmaWorker[settings.numWorkerThreads()];
        try {
          for (int i = 0; i < ws.length; i++) ws[i] = newWorker(d, i);
          devices.add(new RdmaDevice(devices.size(), d, ws));
        } catch (RuntimeException e) {
          for (RdmaWorker w : ws) if (w != null) w.close(0);
          d.close();
          throw e;
        }
        workers.addAll(List.of(ws));
      }
    } catch (RuntimeException e) {
      close();
      throw e instanceof TransportException te ? te
          : new TransportException(TransportError.RDMA_OP, "cannot open RDMA devices " + chosen + " (" + provider.name() + "): " + e.getMessage(), e);
    }
    open = devices.toArray(RdmaDevice[]::new);
    log.info("RDMA backend of engine {} on {} device(s) {} through the {} provider{}", engineKey, devices.size(), chosen, provider.name(),
        provider.emulated() ? " (software: emulation, not NIC performance)" : "");
  }

  private RdmaWorker newWorker(VerbsDevice d, int i) {
    // a channel in both modes: an idle worker (a target whose only completions are notification receives) sleeps on it
    CompletionChannel channel = d.createCompletionChannel();
    CompletionQueue cq;
    try {
      cq = d.createCompletionQueue(Math.min(settings.completionQueueDepth(), d.maxCompletionQueueEntries()), channel);
    } catch (RuntimeException e) {
      channel.close();
      throw e;
    }
    return new RdmaWorker("rdma-" + engineKey + "-" + d.name() + "-" + i, engineKey, settings, cq, channel, confirmer, inbound,
        connections::peerGone, connections::replace);
  }

  // ---- connections (RdmaConnections) ----

  @Override
  public byte[] handshakeRequest(String peerKey) {
    requireOpen();
    return connections.handshakeRequest(peerKey);
  }

  @Override
  public byte[] acceptHandshake(String initiatorKey, byte[] request) {
    requireOpen();
    return connections.acceptHandshake(initiatorKey, request);
  }

  @Override
  public Object connect(String peerKey, byte[] reply) {
    requireOpen();
    return connections.connect(peerKey, reply);
  }

  @Override
  public void disconnect(String peerKey, TransportError error, String reason) {
    connections.disconnect(peerKey, error, reason);
  }

  @Override
  public boolean connected(String peerKey) {
    return connections.connected(peerKey);
  }

  // ---- memory ----

  @Override
  public byte[] registerMemory(LocalRegion region) {
    requireOpen();
    int[] rkeys = new int[devices.size()];
    int ok = 0;
    try {
      for (RdmaDevice d : devices) rkeys[ok++] = d.register(region);
    } catch (RuntimeException e) {
      // ok counts the device that failed too (the index advanced before register threw)
      for (int i = 0; i < ok - 1; i++) devices.get(i).deregister(region.id());
      if (region.gpu()) {
        // another backend (TCP through staging) still carries this region; the descriptor just lacks RDMA data
        log.warn("engine {}: the RDMA backend cannot register GPU memory id {} ({} bytes on device {}): {}; its transfers use another backend",
            engineKey, region.id(), region.size(), region.deviceId(), e.getMessage());
        return new byte[0];
      }
      throw new TransportException(TransportError.RDMA_OP, "cannot register memory id " + region.id() + " with the RDMA backend: " + e.getMessage(), e);
    }
    registered.put(region.id(), region);
    return RdmaMemoryData.encode(rkeys);
  }

  /** A view shares its parent's memory region on every device: no new registration with the NIC. */
  @Override
  public byte[] registerView(LocalRegion view, LocalRegion parent) {
    requireOpen();
    if (!registered.containsKey(parent.id())) return registerMemory(view);
    int[] rkeys = new int[devices.size()];
    int ok = 0;
    try {
      for (RdmaDevice d : devices) rkeys[ok++] = d.registerView(view, parent.id());
    } catch (RuntimeException e) {
      for (int i = 0; i < ok - 1; i++) devices.get(i).deregister(view.id());
      throw new TransportException(TransportError.RDMA_OP, "cannot register memory id " + view.id() + " (inside memory id " + parent.id()
          + ") with the RDMA backend: " + e.getMessage(), e);
    }
    registered.put(view.id(), view);
    return RdmaMemoryData.encode(rkeys);
  }

  @Override
  public void deregisterMemory(LocalRegion region) {
    if (registered.remove(region.id()) == null) return;
    for (RdmaDevice d : devices) d.deregister(region.id());
  }

  @Override
  public boolean canServe(LocalRegion local, boolean remoteGpu) {
    RdmaDevice[] ds = open;
    return ds.length > 0 && ds[0].region(local.id()) != null;
  }

  @Override
  public boolean canServe(LocalRegion local, Object peer, boolean remoteGpu, byte[] remoteData) {
    return peer instanceof RdmaPeer && remoteData != null && remoteData.length > 0 && canServe(local, remoteGpu);
  }

  @Override
  public org.mori4j.transport.ServeRefusal refusal(LocalRegion local, Object peer, boolean remoteGpu, byte[] remoteData) {
    if (peer instanceof RdmaPeer named) peer = named.current();
    if (!(peer instanceof RdmaPeer p)) return new org.mori4j.transport.ServeRefusal(org.mori4j.transport.ServeRefusal.Reason.NOT_CONNECTED, "no RDMA connection to the peer");
    if (!p.alive()) return new org.mori4j.transport.ServeRefusal(org.mori4j.transport.ServeRefusal.Reason.NOT_CONNECTED,
        "the RDMA path to engine '" + p.key + "' was lost: " + p.lostReason());
    if (remoteData == null || remoteData.length == 0)
      return new org.mori4j.transport.ServeRefusal(org.mori4j.transport.ServeRefusal.Reason.NOT_REGISTERED, "the remote region has no RDMA keys"
          + " (its engine could not register it with its NIC, or registered it before creating its RDMA backend)");
    if (!canServe(local, remoteGpu))
      return new org.mori4j.transport.ServeRefusal(org.mori4j.transport.ServeRefusal.Reason.NOT_REGISTERED, "local memory id " + local.id()
          + " is not registered with the RDMA devices" + (local.gpu() ? " (the NIC could not register this GPU memory)" : ""));
    return null;
  }

  @Override
  public String describePeer(Object peer) {
    if (!(peer instanceof RdmaPeer p)) return name();
    StringBuilder b = new StringBuilder(name()).append(", ");
    for (int i = 0; i < p.paths.length; i++) {
      RdmaLane[] lanes = p.paths[i].lanes;
      b.append(i == 0 ? "" : " + ").append("device ").append(p.paths[i].device.device.name()).append(" port ")
          .append(p.paths[i].device.port.port()).append(", ").append(lanes == null ? 0 : lanes.length).append(" queue pair(s)");
    }
    return b.toString();
  }

  /** The software provider moves GPU memory through host staging; a NIC reads and writes registered device memory directly. */
  @Override
  public boolean stages(LocalRegion local, boolean remoteGpu) {
    return provider.emulated() && (local.gpu() || remoteGpu);
  }

  @Override
  public void submit(TransferOp op) {
    if (!(op.peer() instanceof RdmaPeer named)) {
      op.transferFailed(TransportError.BAD_STATE, "op has no RDMA peer");
      return;
    }
    RdmaPeer peer = named.current();
    if (!peer.alive()) {
      op.transferFailed(TransportError.PEER_LOST, "engine '" + peer.key + "' lost: " + peer.lostReason());
      return;
    }
    if (!op.local().gpu() && !op.local().segment().scope().isAlive()) {
      op.transferFailed(TransportError.BAD_STATE, "local memory id " + op.local().id() + " was freed while registered");
      return;
    }
    peer.submit(op, false);
  }

  @Override
  public void revoke(String ownerKey, long regionId, Runnable done) {
    if (closed) {
      done.run();
      return;
    }
    connections.revoke(ownerKey, regionId, done);
  }

  @Override
  public List<CompletionSource> completionSources() {
    return List.copyOf(workers);
  }

  @Override
  public InboundNotifications inbound() {
    return inbound;
  }

  @Override
  public InboundNotifications.Outcome popInbound(String initiatorKey, long uid) {
    InboundNotifications.Outcome o = inbound.pop(initiatorKey, uid);
    if (o != null || initiatorKey == null) return o;
    java.util.Set<RdmaWorker> serving = connections.servingWorkers(initiatorKey);
    if (serving.isEmpty()) return null;
    // a receive completion may sit in a queue its worker has not polled yet
    for (RdmaWorker w : serving) w.executeAndWait(w::pollCompletions, 100);
    return inbound.pop(initiatorKey, uid);
  }

  /** Memory regions open on the devices (leak checks). */
  public int openMemoryRegions() {
    int n = 0;
    for (RdmaDevice d : devices) n += d.openMemoryRegions();
    return n;
  }

  @Override
  public void close() {
    if (closed) return;
    closed = true;
    open = new RdmaDevice[0];
    connections.close();
    for (RdmaWorker w : workers) w.close(2000);
    for (RdmaDevice d : devices) d.close();
    devices.clear();
    registered.clear();
  }

  private void requireOpen() {
    if (closed) throw new TransportException(TransportError.BAD_STATE, "RDMA backend of engine '" + engineKey + "' is closed");
  }
}
