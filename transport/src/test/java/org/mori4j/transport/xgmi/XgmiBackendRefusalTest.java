package org.mori4j.transport.xgmi;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.xgmi.XgmiTestBackends.Op;
/**
 * The XGMI pipeline refusing and failing ops ({@link XgmiPipelineFixture}): forged and stale descriptors refused
 * without moving a byte, ops to a pair XGMI cannot reach handed to the engine for another backend, GPU-side failures
 * and peer loss, a batch over the block limit, and which GPU pairs are served at all.
 */
class XgmiBackendRefusalTest extends XgmiPipelineFixture {
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
    byte[] handle = remote.data().clone();
    handle[handle.length - 1] ^= 1;
    forged.put("handle", forge(initiator, local, peer, remote.region().id(), remote.region().accessKey(), remote.region().address(), handle, 0, 4096));
    // the descriptor may claim any size: the owner's answer bounds the copy (the allocation behind has 2 MiB)
    forged.put("size", forge(initiator, local, peer, remote.region().id(), remote.region().accessKey(), remote.region().address(), remote.data(), MIB, 4096));
    forged.put("address", forge(initiator, local, peer, remote.region().id(), remote.region().accessKey(), remote.region().address() + 4096, remote.data(), 0, 4096));
    forged.put("key", forge(initiator, local, peer, remote.region().id(), remote.region().accessKey() + 1, remote.region().address(), remote.data(), 0, 4096));
    forged.put("id", forge(initiator, local, peer, 999_999, remote.region().accessKey(), remote.region().address(), remote.data(), 0, 4096));
    XgmiMemoryData d = XgmiMemoryData.decode(remote.data());
    byte[] bigger = new XgmiMemoryData(d.device(), d.pciLocation(), d.offsetInAllocation(), d.allocationSize() * 2, d.ipcHandle()).encode();
    forged.put("allocation", forge(initiator, local, peer, remote.region().id(), remote.region().accessKey(), remote.region().address(), bigger, 0, 4096));
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
    assertTrue(single(initiator, TransferOp.WRITE, local, 0, peer, remote, 0, 4096).await().startsWith("NOT_FOUND: memory id " + remote.region().id()));
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
    op.initBatch(TransferOp.WRITE, local, offsets, peer, remote.region().id(), remote.region().accessKey(), remote.region().address(), offsets.clone(), sizes, 1);
    op.remoteData(remote.data());
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
    assertTrue(initiator.canServe(local, inProcess, true, same.data()), "one device");
    assertFalse(initiator.canServe(local, inProcess, true, other.data()), "devices 0 and 1 without peer access");
    assertFalse(initiator.canServe(host, inProcess, true, same.data()), "host memory here");
    assertFalse(initiator.canServe(local, inProcess, false, null), "host memory there");
    assertFalse(initiator.canServe(local, inProcess, true, null), "no XGMI data");
    assertFalse(initiator.canServe(local, "not a peer", true, same.data()));
    XgmiMemoryData d = XgmiMemoryData.decode(same.data());
    byte[] noHandle = new XgmiMemoryData(d.device(), d.pciLocation(), d.offsetInAllocation(), d.allocationSize(), null).encode();
    assertTrue(initiator.canServe(local, inProcess, true, noHandle), "in one process no handle is needed");
    Object otherProcess = connect(initiator, "initiator", owner.backend, "owner", true);
    assertFalse(initiator.canServe(local, otherProcess, true, noHandle), "another process needs the IPC handle");
    assertTrue(initiator.canServe(local, otherProcess, true, same.data()));
  }
}
