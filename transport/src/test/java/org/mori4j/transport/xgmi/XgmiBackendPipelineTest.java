package org.mori4j.transport.xgmi;

import org.mori4j.transport.RegionConfirmer;
import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.xgmi.XgmiTestBackends.Op;

/**
 * The XGMI backend's worker end to end on {@link HostBackedGpuRuntime}, an in-memory device whose copies and
 * batch kernel really move bytes asynchronously on stream threads: an initiator backend and an owner backend
 * in this JVM, connected as engines of one process (direct addresses, peer copies between two devices) or as
 * engines of two processes (the owner's IPC handle opened into a second mapping). The owner's "engine" is a
 * confirmer answering from the owner backend's registrations, as the engine's XgmiControl does. Checked: bytes
 * of single transfers and batches in both directions, more transfers than events (queued in order), forged and
 * stale descriptors refused without moving a byte, a revocation that waits for the copies using a mapping,
 * GPU-side failures, peer loss, and close (every op ends exactly once; every stream, event, module and mapping
 * freed). The real driver, kernel and IPC are XgmiTransferGpuTest's, on a GPU.
 */
class XgmiBackendPipelineTest {
  private static final long MIB = 1L << 20;
  private final List<AutoCloseable> cleanup = new ArrayList<>();
  private HostBackedGpuRuntime gpu;
  private final AtomicLong ids = new AtomicLong(100);

  /** An op that remembers how it ended, and fails the test if it ends twice. */
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

  private XgmiBackend started(String key, RegionConfirmer confirmer) {
    return started(key, confirmer, XgmiSettings.of(4, 4));
  }

  private XgmiBackend started(String key, RegionConfirmer confirmer, XgmiSettings settings) {
    return started(key, confirmer, settings, BackendListener.NONE);
  }

  private XgmiBackend started(String key, RegionConfirmer confirmer, XgmiSettings settings, BackendListener listener) {
    return XgmiTestBackends.started(key, settings, () -> gpu, confirmer, listener, cleanup);
  }

  private DeviceBuffer alloc(int device, long size) {
    DeviceBuffer d = gpu.allocDevice(device, size);
    cleanup.add(d);
    return d;
  }

  private static MemorySegment mem(DeviceBuffer d) {
    return MemorySegment.ofAddress(d.address()).reinterpret(d.size());
  }

  private static void fill(MemorySegment s, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    for (long i = 0; i < s.byteSize(); i++) s.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) r.nextInt());
  }

  /** Connects {@code initiator} to {@code owner} as an engine of this process, or of another process on this host. */
  private static Object connect(XgmiBackend initiator, String initiatorKey, XgmiBackend owner, String ownerKey, boolean otherProcess) {
    byte[] reply = owner.acceptHandshake(initiatorKey, initiator.handshakeRequest(ownerKey));
    if (otherProcess) {
      XgmiHost me = XgmiHost.decode(reply);
      reply = new XgmiHost(me.bootId(), me.hostName(), me.pidNamespace(), me.pid() + 1, me.processNonce() + 1).encode();
    }
    return initiator.connect(ownerKey, reply);
  }

  private static Op single(XgmiBackend b, byte kind, LocalRegion local, long lo, Object peer, Registered remote, long ro, long size) {
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

  @Test
  void singlesAndBatchesMoveExactlyTheirBytesBothWaysInEveryPeerMode() throws Exception {
    gpu = new HostBackedGpuRuntime(2, 30);
    Owner owner = new Owner("owner");
    XgmiBackend initiator = started("initiator", owner.confirmer());
    long cap = 4 * MIB;
    // mode: {other process?, owner's device}: device-to-device on 0, peer copy 0 -> 1, IPC mapping
    for (int[] mode : new int[][] {{0, 0}, {0, 1}, {1, 1}}) {
      boolean otherProcess = mode[0] == 1;
      DeviceBuffer a = alloc(0, cap), b = alloc(mode[1], cap + 4096);
      Registered remote = owner.register(b, 4096, cap); // a region that starts inside its allocation
      LocalRegion local = LocalRegion.gpu(ids.incrementAndGet(), 7, a.address(), cap, 0);
      Object peer = connect(initiator, "initiator", owner.backend, "owner", otherProcess);
      assertTrue(initiator.canServe(local, peer, true, remote.data));
      MemorySegment src = mem(a), dst = mem(b).asSlice(4096, cap);
      String what = otherProcess ? "IPC mapping" : mode[1] == 0 ? "same device" : "peer copy";
      for (long size : new long[] {1, 4097, MIB + 3}) {
        fill(src, size);
        dst.fill((byte) 0);
        assertEquals("ok", single(initiator, TransferOp.WRITE, local, 3, peer, remote, 5, size).await(), what + " write " + size);
        assertEquals(-1, MemorySegment.mismatch(src, 3, 3 + size, dst, 5, 5 + size), what + " write " + size);
        assertEquals(0, dst.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 4));
        assertEquals(0, dst.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 5 + size));
        fill(dst, size + 1);
        src.fill((byte) 0);
        assertEquals("ok", single(initiator, TransferOp.READ, local, 3, peer, remote, 5, size).await(), what + " read " + size);
        assertEquals(-1, MemorySegment.mismatch(src, 3, 3 + size, dst, 5, 5 + size), what + " read " + size);
      }
      for (int n : new int[] {2, 17, 1000}) {
        for (byte kind : new byte[] {TransferOp.WRITE, TransferOp.READ}) {
          long stride = 4096;
          SplittableRandom r = new SplittableRandom(n);
          long[] lo = new long[n], ro = new long[n], sizes = new long[n];
          for (int i = 0; i < n; i++) {
            sizes[i] = 1 + r.nextInt((int) stride - 16);
            lo[i] = (long) ((i * 7L + 3) % n) * stride + r.nextInt(16);
            ro[i] = (long) i * stride + r.nextInt(16);
          }
          MemorySegment from = kind == TransferOp.WRITE ? src : dst, to = kind == TransferOp.WRITE ? dst : src;
          fill(from, n * 3L + kind);
          to.fill((byte) 0);
          int launches = gpu.launches.get();
          Op op = new Op();
          op.initBatch(kind, local, lo, peer, remote.region.id(), remote.region.accessKey(), remote.region.address(), ro, sizes, 9);
          op.remoteData(remote.data);
          initiator.submit(op);
          assertEquals("ok", op.await(), what + " batch " + n);
          assertEquals(launches + 1, gpu.launches.get(), "one launch per batch");
          for (int i = 0; i < n; i++) {
            long f = kind == TransferOp.WRITE ? lo[i] : ro[i], t = kind == TransferOp.WRITE ? ro[i] : lo[i];
            assertEquals(-1, MemorySegment.mismatch(from, f, f + sizes[i], to, t, t + sizes[i]), what + " batch " + n + " block " + i);
          }
        }
      }
      assertEquals(otherProcess ? 1 : 0, initiator.openMappings(), what + ": one mapping per remote region and device, kept");
      owner.deregister(remote, initiator, "owner");
      assertEquals(0, initiator.openMappings(), "revocation closed the mapping");
      initiator.disconnect("owner", TransportError.BAD_STATE, "next mode");
    }
    assertTrue(gpu.peerEnabled.containsKey("0->1"), "peer access was enabled for the peer copies");
  }

  @org.junit.jupiter.params.ParameterizedTest(name = "poll nap {0} ns")
  @org.junit.jupiter.params.provider.ValueSource(longs = {0, 20_000})
  void moreTransfersThanEventsWaitTheirTurnAndAllLand(long pollNap) throws Exception {
    gpu = new HostBackedGpuRuntime(1, 50);
    Owner owner = new Owner("owner");
    XgmiBackend initiator = started("initiator", owner.confirmer(), new XgmiSettings(4, 4, 1 << 20, pollNap));
    int n = 300;
    long block = 8192;
    DeviceBuffer a = alloc(0, n * block), b = alloc(0, n * block);
    Registered remote = owner.register(b, 0, n * block);
    LocalRegion local = LocalRegion.gpu(ids.incrementAndGet(), 7, a.address(), n * block, 0);
    Object peer = connect(initiator, "initiator", owner.backend, "owner", true);
    fill(mem(a), 5);
    List<Op> ops = new ArrayList<>();
    for (int i = 0; i < n; i++) ops.add(single(initiator, TransferOp.WRITE, local, i * block, peer, remote, (n - 1 - i) * block, block));
    for (Op op : ops) assertEquals("ok", op.await());
    for (int i = 0; i < n; i++) assertEquals(-1, MemorySegment.mismatch(mem(a), i * block, (i + 1) * block, mem(b), (n - 1 - i) * block, (n - i) * block));
    assertEquals(1, owner.asked.get(), "the owner is asked once per region, not per transfer");
  }

  @Test
  void forgedAndStaleDescriptorsAreRefusedWithoutMovingAByte() throws Exception {
    gpu = new HostBackedGpuRuntime(1, 0);
    Owner owner = new Owner("owner");
    XgmiBackend initiator = started("initiator", owner.confirmer());
    DeviceBuffer a = alloc(0, MIB), b = alloc(0, 2 * MIB);
    Registered remote = owner.register(b, 0, MIB); // half of the allocation is registered
    LocalRegion local = LocalRegion.gpu(ids.incrementAndGet(), 7, a.address(), MIB, 0);
    Object peer = connect(initiator, "initiator", owner.backend, "owner", true);
    fill(mem(a), 1);
    mem(b).fill((byte) 0x11);
    Map<String, Op> forged = new HashMap<>();
    byte[] handle = remote.data.clone();
    handle[handle.length - 1] ^= 1;
    forged.put("handle", forge(initiator, local, peer, remote.region.id(), remote.region.accessKey(), remote.region.address(), handle, 0, 4096));
    // the descriptor may claim any size: the owner's answer bounds the copy (the allocation behind has 2 MiB)
    forged.put("size", forge(initiator, local, peer, remote.region.id(), remote.region.accessKey(), remote.region.address(), remote.data, MIB, 4096));
    forged.put("address", forge(initiator, local, peer, remote.region.id(), remote.region.accessKey(), remote.region.address() + 4096, remote.data, 0, 4096));
    forged.put("key", forge(initiator, local, peer, remote.region.id(), remote.region.accessKey() + 1, remote.region.address(), remote.data, 0, 4096));
    forged.put("id", forge(initiator, local, peer, 999_999, remote.region.accessKey(), remote.region.address(), remote.data, 0, 4096));
    XgmiMemoryData d = XgmiMemoryData.decode(remote.data);
    byte[] bigger = new XgmiMemoryData(d.device(), d.pciLocation(), d.offsetInAllocation(), d.allocationSize() * 2, d.ipcHandle()).encode();
    forged.put("allocation", forge(initiator, local, peer, remote.region.id(), remote.region.accessKey(), remote.region.address(), bigger, 0, 4096));
    Map<String, String> want = Map.of("handle", "INVALID_ARGS: the descriptor's XGMI data", "size", "INVALID_ARGS: block 0: remote offset " + MIB,
        "address", "INVALID_ARGS: the descriptor says", "key", "NOT_FOUND:", "id", "NOT_FOUND: memory id 999999 is not registered",
        "allocation", "INVALID_ARGS: the descriptor's XGMI data");
    for (var e : forged.entrySet()) {
      String got = e.getValue().await();
      assertTrue(got.startsWith(want.get(e.getKey())), e.getKey() + ": " + got);
    }
    MemorySegment untouched = mem(b);
    for (long i = 0; i < untouched.byteSize(); i++) assertEquals(0x11, untouched.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i), "byte " + i);
    // a genuine transfer works, then the owner deregisters: the same descriptor is now stale
    assertEquals("ok", single(initiator, TransferOp.WRITE, local, 0, peer, remote, 0, 4096).await());
    owner.deregister(remote, initiator, "owner");
    assertTrue(single(initiator, TransferOp.WRITE, local, 0, peer, remote, 0, 4096).await().startsWith("NOT_FOUND: memory id " + remote.region.id()));
    // a handle whose allocation is gone: the owner still answers (say it forgot to deregister), the open fails clearly
    Registered freed = owner.register(b, 0, MIB);
    b.close();
    String stale = single(initiator, TransferOp.WRITE, local, 0, peer, freed, 0, 4096).await();
    assertTrue(stale.startsWith("GPU_OP: XGMI cannot open the IPC handle") && stale.contains("stale")
        && stale.contains("no other backend of this engine reaches engine 'owner'"), stale);
  }

  @Test
  void opsToAPairXgmiCannotReachGoToTheEngineForAnotherBackendAndLaterOnesAreRoutedThereFirst() throws Exception {
    gpu = new HostBackedGpuRuntime(2, 0);
    Owner owner = new Owner("owner");
    List<TransferOp> rerouted = new java.util.concurrent.CopyOnWriteArrayList<>();
    List<String> reasons = new java.util.concurrent.CopyOnWriteArrayList<>();
    XgmiBackend initiator = started("initiator", owner.confirmer(), XgmiSettings.of(4, 4), new BackendListener() {
      @Override
      public void peerLost(String peerKey, TransportError error, String reason) {}

      @Override
      public boolean reroute(TransferOp op, String why) {
        reasons.add(why);
        return rerouted.add(op);
      }
    });
    DeviceBuffer a = alloc(0, MIB), b = alloc(0, MIB);
    Registered remote = owner.register(b, 0, MIB);
    LocalRegion local = LocalRegion.gpu(ids.incrementAndGet(), 7, a.address(), MIB, 0);
    Object peer = connect(initiator, "initiator", owner.backend, "owner", true);
    assertTrue(initiator.canServe(local, peer, true, remote.data()));
    // the owner's genuine handle does not open here (as when the two processes see different devices)
    gpu.failIpcOpens("CUDA_ERROR_PEER_ACCESS_UNSUPPORTED");
    Op write = single(initiator, TransferOp.WRITE, local, 0, peer, remote, 0, 4096);
    Op read = single(initiator, TransferOp.READ, local, 0, peer, remote, 0, 4096);
    long end = System.nanoTime() + 30_000_000_000L;
    while (rerouted.size() < 2 && System.nanoTime() < end) Thread.sleep(5);
    assertEquals(List.of(write, read), rerouted, "both ops handed to the engine, in order");
    Thread.sleep(50);
    assertEquals(0, write.ends.get() + read.ends.get(), "XGMI does not complete an op it handed on");
    assertTrue(reasons.get(0).contains("cannot open the IPC handle") && reasons.get(0).contains("CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"), reasons.get(0));
    assertFalse(initiator.canServe(local, peer, true, remote.data()), "the engine now routes this pair to its next backend");
    assertEquals(0, initiator.openMappings(), "nothing was mapped");
    // another local device still may use XGMI with that peer: only device 0 found it cannot
    DeviceBuffer c = alloc(1, MIB);
    assertTrue(initiator.canServe(LocalRegion.gpu(ids.incrementAndGet(), 8, c.address(), MIB, 1), peer, true, remote.data()));
  }

  private Op forge(XgmiBackend b, LocalRegion local, Object peer, long id, long key, long address, byte[] data, long ro, long size) {
    Op op = new Op();
    op.initSingle(TransferOp.WRITE, local, 0, peer, id, key, address, ro, size, 1);
    op.remoteData(data);
    b.submit(op);
    return op;
  }

  @Test
  void aRevocationWaitsForTheCopiesThatUseTheMapping() throws Exception {
    gpu = new HostBackedGpuRuntime(1, 2000);
    Owner owner = new Owner("owner");
    XgmiBackend initiator = started("initiator", owner.confirmer());
    DeviceBuffer a = alloc(0, 16 * MIB), b = alloc(0, 16 * MIB);
    Registered remote = owner.register(b, 0, 16 * MIB);
    LocalRegion local = LocalRegion.gpu(ids.incrementAndGet(), 7, a.address(), 16 * MIB, 0);
    Object peer = connect(initiator, "initiator", owner.backend, "owner", true);
    assertEquals("ok", single(initiator, TransferOp.WRITE, local, 0, peer, remote, 0, 4096).await());
    List<Op> inFlight = new ArrayList<>();
    for (int i = 0; i < 8; i++) inFlight.add(single(initiator, TransferOp.WRITE, local, 0, peer, remote, 0, 16 * MIB));
    Thread.sleep(5); // most of them are on the (slow) streams now; a slow start may leave some still queued
    CompletableFuture<List<Op>> revoked = new CompletableFuture<>();
    owner.regions.remove(remote.region.id());
    initiator.revoke("owner", remote.region.id(), () -> revoked.complete(inFlight.stream().filter(o -> !o.done.isDone()).toList()));
    List<Op> openAtClose = revoked.get(30, TimeUnit.SECONDS);
    for (Op op : inFlight) {
      String end = op.await();
      assertTrue(end.equals("ok") || end.startsWith("NOT_FOUND"), end); // on the GPU: lands; still queued: refused
      // an op that was not done when the mapping closed must be one that never reached the GPU (refused after the
      // revocation); one that ends "ok" after the close was copying through the closed mapping
      if (openAtClose.contains(op)) assertTrue(end.startsWith("NOT_FOUND"), "the mapping closed while a copy still used it: it ended " + end);
    }
    assertEquals(0, initiator.openMappings());
  }

  @Test
  void aCopyThatFailsOnTheGpuFailsItsTransferAndPeerLossFailsTheRest() throws Exception {
    gpu = new HostBackedGpuRuntime(1, 0);
    Owner owner = new Owner("owner");
    XgmiBackend initiator = started("initiator", owner.confirmer());
    DeviceBuffer a = alloc(0, MIB), b = alloc(0, MIB);
    Registered remote = owner.register(b, 0, MIB);
    LocalRegion local = LocalRegion.gpu(ids.incrementAndGet(), 7, a.address(), MIB, 0);
    Object peer = connect(initiator, "initiator", owner.backend, "owner", false);
    gpu.poisonAddress = b.address() + 100;
    String poisoned = single(initiator, TransferOp.WRITE, local, 0, peer, remote, 0, 4096).await();
    assertTrue(poisoned.startsWith("GPU_OP: XGMI transfer with memory id") && poisoned.contains("illegal address"), poisoned);
    gpu.poisonAddress = -1;
    initiator.disconnect("owner", TransportError.PEER_LOST, "its node crashed");
    assertFalse(initiator.connected("owner"));
    String lost = single(initiator, TransferOp.WRITE, local, 0, peer, remote, 0, 4096).await();
    assertTrue(lost.startsWith("PEER_LOST") && lost.contains("its node crashed"), lost);
  }

  @Test
  void closeEndsEveryTransferOnceAndFreesEveryGpuResource() throws Exception {
    gpu = new HostBackedGpuRuntime(2, 500);
    Owner owner = new Owner("owner");
    XgmiBackend initiator = started("initiator", owner.confirmer());
    DeviceBuffer a = alloc(0, 8 * MIB), b = alloc(1, 8 * MIB);
    Registered remote = owner.register(b, 0, 8 * MIB);
    LocalRegion local = LocalRegion.gpu(ids.incrementAndGet(), 7, a.address(), 8 * MIB, 0);
    Object peer = connect(initiator, "initiator", owner.backend, "owner", true);
    List<Op> ops = new ArrayList<>();
    for (int i = 0; i < 200; i++) ops.add(single(initiator, i % 2 == 0 ? TransferOp.WRITE : TransferOp.READ, local, 0, peer, remote, 0, MIB));
    initiator.close();
    for (Op op : ops) {
      String end = op.await();
      assertTrue(end.equals("ok") || end.startsWith("BAD_STATE"), end);
      assertEquals(1, op.ends.get(), "an op ends exactly once");
    }
    assertTrue(single(initiator, TransferOp.WRITE, local, 0, peer, remote, 0, 1).await().startsWith("BAD_STATE"), "after close");
    assertEquals(0, initiator.openMappings());
  }

  @Test
  void aBatchOverTheLimitIsRefusedBeforeTheGpu() throws Exception {
    gpu = new HostBackedGpuRuntime(1, 0);
    Owner owner = new Owner("owner");
    XgmiBackend initiator = started("initiator", owner.confirmer(), new XgmiSettings(2, 2, 8, 0));
    DeviceBuffer a = alloc(0, MIB), b = alloc(0, MIB);
    Registered remote = owner.register(b, 0, MIB);
    LocalRegion local = LocalRegion.gpu(ids.incrementAndGet(), 7, a.address(), MIB, 0);
    Object peer = connect(initiator, "initiator", owner.backend, "owner", false);
    long[] offsets = new long[9];
    long[] sizes = new long[9];
    for (int i = 0; i < 9; i++) {
      offsets[i] = i * 8192L;
      sizes[i] = 100;
    }
    Op op = new Op();
    op.initBatch(TransferOp.WRITE, local, offsets, peer, remote.region.id(), remote.region.accessKey(), remote.region.address(), offsets.clone(), sizes, 1);
    op.remoteData(remote.data);
    int launches = gpu.launches.get();
    initiator.submit(op);
    assertTrue(op.await().startsWith("INVALID_ARGS: batch of 9 blocks exceeds the XGMI limit of 8"), op.await());
    assertEquals(launches, gpu.launches.get());
  }

  @Test
  void onlyGpuPairsThatCanReachEachOtherAreServed() {
    gpu = new HostBackedGpuRuntime(2, 0, false);
    Owner owner = new Owner("owner");
    XgmiBackend initiator = started("initiator", owner.confirmer());
    DeviceBuffer a = alloc(0, MIB), on0 = alloc(0, MIB), on1 = alloc(1, MIB);
    LocalRegion local = LocalRegion.gpu(1, 7, a.address(), MIB, 0);
    LocalRegion host = new LocalRegion(2, 7, java.lang.foreign.Arena.ofAuto().allocate(4096), false, -1);
    Registered same = owner.register(on0, 0, MIB), other = owner.register(on1, 0, MIB);
    Object inProcess = connect(initiator, "initiator", owner.backend, "owner", false);
    assertTrue(initiator.canServe(local, inProcess, true, same.data), "one device");
    assertFalse(initiator.canServe(local, inProcess, true, other.data), "devices 0 and 1 without peer access");
    assertFalse(initiator.canServe(host, inProcess, true, same.data), "host memory here");
    assertFalse(initiator.canServe(local, inProcess, false, null), "host memory there");
    assertFalse(initiator.canServe(local, inProcess, true, null), "no XGMI data");
    assertFalse(initiator.canServe(local, "not a peer", true, same.data));
    XgmiMemoryData d = XgmiMemoryData.decode(same.data);
    byte[] noHandle = new XgmiMemoryData(d.device(), d.pciLocation(), d.offsetInAllocation(), d.allocationSize(), null).encode();
    assertTrue(initiator.canServe(local, inProcess, true, noHandle), "in one process no handle is needed");
    Object otherProcess = connect(initiator, "initiator", owner.backend, "owner", true);
    assertFalse(initiator.canServe(local, otherProcess, true, noHandle), "another process needs the IPC handle");
    assertTrue(initiator.canServe(local, otherProcess, true, same.data));
  }
}
