package org.mori4j.transport.xgmi;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.xgmi.XgmiTestBackends.Op;
/**
 * The XGMI pipeline moving bytes ({@link XgmiPipelineFixture}): single transfers and batches in both directions in
 * every peer mode, more transfers than events (queued in order), a revocation that waits for the copies using a
 * mapping, and close (every op ends exactly once; every GPU resource freed). Refusals and failures are
 * {@link XgmiBackendRefusalTest}'s.
 */
class XgmiBackendPipelineTest extends XgmiPipelineFixture {
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
      assertTrue(initiator.canServe(local, peer, true, remote.data()));
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
          op.initBatch(kind, local, lo, peer, remote.region().id(), remote.region().accessKey(), remote.region().address(), ro, sizes, 9);
          op.remoteData(remote.data());
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
    owner.regions.remove(remote.region().id());
    initiator.revoke("owner", remote.region().id(), () -> revoked.complete(inFlight.stream().filter(o -> !o.done.isDone()).toList()));
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
}
