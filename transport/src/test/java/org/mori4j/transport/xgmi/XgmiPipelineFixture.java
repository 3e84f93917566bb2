package org.mori4j.transport.xgmi;

import org.mori4j.transport.RegionConfirmer;
import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.xgmi.XgmiTestBackends.Op;
/**
 * What the XGMI pipeline tests ({@link XgmiBackendPipelineTest}, {@link XgmiBackendRefusalTest}) share: the XGMI
 * backend's worker end to end on {@link HostBackedGpuRuntime}, an in-memory device whose copies and batch kernel
 * really move bytes asynchronously on stream threads: an initiator backend and an owner backend in this JVM,
 * connected as engines of one process (direct addresses, peer copies between two devices) or as engines of two
 * processes (the owner's IPC handle opened into a second mapping). The owner's "engine" is a confirmer answering
 * from the owner backend's registrations, as the engine's XgmiControl does. After each test every stream, event,
 * module and mapping must be freed. The real driver, kernel and IPC are XgmiTransferGpuTest's, on a GPU.
 */
abstract class XgmiPipelineFixture {
  static final long MIB = 1L << 20;
  final List<AutoCloseable> cleanup = new ArrayList<>();
  HostBackedGpuRuntime gpu;
  final AtomicLong ids = new AtomicLong(100);

  /** What the owner registered: the engine keeps the same for XgmiControl to answer from. */
  record Registered(LocalRegion region, byte[] data) {}

  /** The owner side: a backend, its registrations, and the confirmer an initiator uses to ask it. */
  final class Owner {
    final XgmiBackend backend;
    final Map<Long, Registered> regions = new ConcurrentHashMap<>();
    final AtomicInteger asked = new AtomicInteger();

    Owner(String key) {
      backend = started(key, (peer, id, k, answer) -> answer.refused(TransportError.NOT_FOUND, "nobody asks the owner"));
    }

    RegionConfirmer confirmer() {
      return (peer, id, key, answer) -> {
        asked.incrementAndGet();
        // answered later from another thread, as a reply over the control plane would be
        CompletableFuture.runAsync(() -> {
          Registered r = regions.get(id);
          if (r == null || !r.region.live() || r.region.accessKey() != key) answer.refused(TransportError.NOT_FOUND, "memory id " + id + " is not registered");
          else answer.registered(r.region.address(), r.region.size(), r.data);
        }, CompletableFuture.delayedExecutor(200, TimeUnit.MICROSECONDS));
      };
    }

    Registered register(DeviceBuffer buffer, long offset, long size) {
      LocalRegion region = LocalRegion.gpu(ids.incrementAndGet(), ids.incrementAndGet() * 31, buffer.address() + offset, size, buffer.device());
      Registered r = new Registered(region, backend.registerMemory(region));
      regions.put(region.id(), r);
      return r;
    }

    /** Deregistration as the engine does it: gone from the table, then every importer revokes. */
    void deregister(Registered r, XgmiBackend importer, String ownerKey) throws Exception {
      regions.remove(r.region.id());
      r.region.kill();
      CompletableFuture<Void> revoked = new CompletableFuture<>();
      importer.revoke(ownerKey, r.region.id(), () -> revoked.complete(null));
      revoked.get(30, TimeUnit.SECONDS);
    }
  }

  XgmiBackend started(String key, RegionConfirmer confirmer) {
    return started(key, confirmer, XgmiSettings.of(4, 4));
  }

  XgmiBackend started(String key, RegionConfirmer confirmer, XgmiSettings settings) {
    return started(key, confirmer, settings, BackendListener.NONE);
  }

  XgmiBackend started(String key, RegionConfirmer confirmer, XgmiSettings settings, BackendListener listener) {
    return XgmiTestBackends.started(key, settings, () -> gpu, confirmer, listener, cleanup);
  }

  DeviceBuffer alloc(int device, long size) {
    DeviceBuffer d = gpu.allocDevice(device, size);
    cleanup.add(d);
    return d;
  }

  static MemorySegment mem(DeviceBuffer d) {
    return MemorySegment.ofAddress(d.address()).reinterpret(d.size());
  }

  static void fill(MemorySegment s, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    for (long i = 0; i < s.byteSize(); i++) s.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) r.nextInt());
  }

  /** Connects {@code initiator} to {@code owner} as an engine of this process, or of another process on this host. */
  static Object connect(XgmiBackend initiator, String initiatorKey, XgmiBackend owner, String ownerKey, boolean otherProcess) {
    byte[] reply = owner.acceptHandshake(initiatorKey, initiator.handshakeRequest(ownerKey));
    if (otherProcess) {
      XgmiHost me = XgmiHost.decode(reply);
      reply = new XgmiHost(me.bootId(), me.hostName(), me.pidNamespace(), me.pid() + 1, me.processNonce() + 1).encode();
    }
    return initiator.connect(ownerKey, reply);
  }

  static Op single(XgmiBackend b, byte kind, LocalRegion local, long lo, Object peer, Registered remote, long ro, long size) {
    Op op = new Op();
    op.initSingle(kind, local, lo, peer, remote.region.id(), remote.region.accessKey(), remote.region.address(), ro, size, 1);
    op.remoteData(remote.data);
    b.submit(op);
    return op;
  }

  @AfterEach
  void closeEverything() throws Exception {
    XgmiTestBackends.closeAndCheckNothingLeft(cleanup, gpu);
  }

  Op forge(XgmiBackend b, LocalRegion local, Object peer, long id, long key, long address, byte[] data, long ro, long size) {
    Op op = new Op();
    op.initSingle(TransferOp.WRITE, local, 0, peer, id, key, address, ro, size, 1);
    op.remoteData(data);
    b.submit(op);
    return op;
  }
}
