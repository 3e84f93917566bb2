package org.mori4j.shmem;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.mori4j.io.gpuinit.GpuQueueLayout;
import org.mori4j.io.gpuinit.RdmaDeviceContext;
import org.mori4j.natives.gpu.DeviceBuffer;

/**
 * The host wiring of PEs without a direct path, on the in-memory GPU: with {@code MORI_DISABLE_P2P} every PE
 * opens its engine, context and {@code numQpPerPe} endpoints per peer, exchanges and connects them, and writes
 * the tables the device library reads into {@link GpuStates}; work requests written into those endpoints by the
 * queue layout (what {@code mori_shmem_proxy.cuh} does on a GPU) move bytes between the PEs' heaps and do
 * atomics there (a 2 MiB write included); registered buffers enter the lkey table; finalize closes every endpoint. With direct paths
 * nothing is opened.
 */
class ShmemRemotePeersTest {
  private static final long HEAP = 8L << 20;
  private static ShmemTestDevice device;

  @BeforeAll
  static void start() {
    device = new ShmemTestDevice(1);
  }

  @AfterAll
  static void stop() {
    device.shutdown();
  }

  @Test
  void disabledP2pGivesConnectedEndpointsWhoseWorkRequestsMoveHeapBytes() {
    int blocksBefore = RdmaDeviceContext.openEndpointBlocksInProcess();
    try (PeGroup g = PeGroup.start(2, device.config(HEAP).withDisableP2p(true).withNumQpPerPe(2))) {
      long[] obj = g.onAllOk(pe -> pe.malloc(1 << 16)).stream().mapToLong(Long::longValue).toArray();
      Shmem a = g.pe(0), b = g.pe(1);
      GpuStates.Remote ra = a.gpuStates().remote(), rb = b.gpuStates().remote();
      assertEquals(2, a.numQpPerPe());
      assertEquals(2, ra.numQpPerPe());
      assertEquals(List.of(false, false), List.of(a.hasDirectPath(1), b.hasDirectPath(0)));
      long[] eps = ra.endpoints();
      assertEquals(0, eps[0], "no endpoint to itself");
      assertEquals(0, eps[1]);
      assertTrue(eps[2] != 0 && eps[3] != 0 && eps[2] != eps[3], java.util.Arrays.toString(eps));
      assertEquals(b.heapBase(), ra.peerHeapRemoteBase()[1]);
      assertEquals(a.heapBase(), rb.peerHeapRemoteBase()[0]);
      assertNotEquals(0, ra.peerHeapRkey()[1]);
      assertNotEquals(0, ra.heapLkey());
      assertEquals(ra, GpuStates.fromBytes(a.gpuStates().toBytes()).remote(), "the bytes moduleInit copies carry the tables");

      // PE 0 writes 4 KiB of its object into PE 1's through its second endpoint to PE 1
      byte[] pattern = new byte[4096];
      new Random(11).nextBytes(pattern);
      MemorySegment.copy(pattern, 0, at(obj[0], 4096), ValueLayout.JAVA_BYTE, 0, 4096);
      long ep = eps[3];
      long off = obj[0] - a.heapBase(); // symmetric: the same offset in every heap
      long w = post(ep, GpuQueueLayout.OP_RDMA_WRITE, 0, obj[0], ra.heapLkey(), 4096, ra.peerHeapRemoteBase()[1] + off + 64, ra.peerHeapRkey()[1], 0, 0);
      waitRetired(ep, w);
      assertArrayEquals(pattern, at(obj[1] + 64, 4096).toArray(ValueLayout.JAVA_BYTE));
      // a fenced fetch-add on PE 1's word, the old value in the WQE's result cell
      at(obj[1] + 8192, 8).set(ValueLayout.JAVA_LONG, 0, 40);
      long f = post(ep, GpuQueueLayout.OP_ATOMIC_FETCH_AND_ADD, GpuQueueLayout.FLAG_FENCE, 0, 0, 8, ra.peerHeapRemoteBase()[1] + off + 8192,
          ra.peerHeapRkey()[1], 2, 0);
      waitRetired(ep, f);
      assertEquals(42, at(obj[1] + 8192, 8).get(ValueLayout.JAVA_LONG, 0));
      long depth = at(ep, 1024).get(ValueLayout.JAVA_INT, GpuQueueLayout.CTRL_SQ_DEPTH);
      long cells = at(ep, 1024).get(ValueLayout.JAVA_LONG, GpuQueueLayout.CTRL_ATOMIC_RESULTS);
      assertEquals(40, at(cells + 8 * (f & (depth - 1)), 8).get(ValueLayout.JAVA_LONG, 0));
      assertTrue(a.endpointErrors().isEmpty(), a.endpointErrors().toString());
      // a 2 MiB WRITE (the size that stalled on 1x H100 in the device API scenario) lands whole here
      long[] big = g.onAllOk(pe -> pe.malloc(2L << 20)).stream().mapToLong(Long::longValue).toArray();
      byte[] large = new byte[2 << 20];
      new Random(12).nextBytes(large);
      MemorySegment.copy(large, 0, at(big[0], large.length), ValueLayout.JAVA_BYTE, 0, large.length);
      long w2 = post(ep, GpuQueueLayout.OP_RDMA_WRITE, 0, big[0], ra.heapLkey(), large.length, ra.peerHeapRemoteBase()[1] + (big[0] - a.heapBase()),
          ra.peerHeapRkey()[1], 0, 0);
      waitRetired(ep, w2);
      assertArrayEquals(large, at(big[1], large.length).toArray(ValueLayout.JAVA_BYTE));

      // a registered buffer enters the device's lkey table, and leaves it
      List<DeviceBuffer> buffers = g.onAllOk(pe -> pe.gpu().allocDevice(pe.device(), 1 << 20));
      try {
        g.onAllOk(pe -> pe.bufferRegister(buffers.get(pe.myPe()).address(), 65536));
        List<GpuStates.RegisteredBuffer> table = a.gpuStates().remote().registered();
        assertEquals(1, table.size());
        assertEquals(buffers.get(0).address(), table.getFirst().base());
        assertEquals(65536, table.getFirst().size());
        assertNotEquals(0, table.getFirst().lkey());
        g.onAllOk(pe -> pe.bufferDeregister(buffers.get(pe.myPe()).address(), 65536));
        assertEquals(0, a.gpuStates().remote().registered().size());
      } finally {
        for (DeviceBuffer d : buffers) d.close();
      }
    }
    assertEquals(blocksBefore, RdmaDeviceContext.openEndpointBlocksInProcess(), "finalize closes every endpoint");
  }

  /** A work request naming a key the peer never gave out completes in error, and the PE reports it. */
  @Test
  void aWrongRkeyIsAnErrorCompletionThePeReports() {
    try (PeGroup g = PeGroup.start(2, device.config(HEAP).withDisableP2p(true))) {
      long obj = g.onAllOk(pe -> pe.malloc(4096)).getFirst();
      Shmem a = g.pe(0);
      GpuStates.Remote ra = a.gpuStates().remote();
      long ep = ra.endpoints()[1];
      long w = post(ep, GpuQueueLayout.OP_RDMA_WRITE, 0, obj, ra.heapLkey(), 64, ra.peerHeapRemoteBase()[1] + (obj - a.heapBase()),
          ra.peerHeapRkey()[1] + 1000, 0, 0);
      // 2 s at most for the proxy to complete it in error
      for (int i = 0; i < 200 && a.endpointErrors().isEmpty(); i++) java.util.concurrent.locks.LockSupport.parkNanos(10_000_000);
      waitRetired(ep, w, true);
      MemorySegment c = at(ep, 1024);
      assertEquals(GpuQueueLayout.WC_REM_ACCESS_ERR, c.get(ValueLayout.JAVA_INT, GpuQueueLayout.CTRL_FIRST_ERROR_STATUS));
      assertEquals(w, c.get(ValueLayout.JAVA_LONG, GpuQueueLayout.CTRL_FIRST_ERROR_WR_ID));
      assertEquals(GpuQueueLayout.STATE_ERROR, c.get(ValueLayout.JAVA_INT, GpuQueueLayout.CTRL_STATE));
      List<String> errors = a.endpointErrors();
      assertEquals(1, errors.size(), errors.toString());
      assertTrue(errors.getFirst().startsWith("PE 0 -> PE 1 qpn "), errors.getFirst());
    }
  }

  @Test
  void withDirectPathsNothingIsOpened() {
    int blocksBefore = RdmaDeviceContext.openEndpointBlocksInProcess();
    try (PeGroup g = PeGroup.start(2, device.config(HEAP))) {
      assertEquals(0, g.pe(0).gpuStates().remote().numQpPerPe());
      assertEquals(1, g.pe(0).numQpPerPe());
      assertTrue(g.pe(0).hasDirectPath(1));
      assertEquals(blocksBefore, RdmaDeviceContext.openEndpointBlocksInProcess());
    }
  }

  /** One WQE by the queue layout: reserve, fill, publish, ring (what the device library does). */
  private static long post(long ep, int opcode, int flags, long laddr, int lkey, int length, long raddr, int rkey, long compareAdd, long swap) {
    MemorySegment c = at(ep, 1024);
    long idx = c.get(ValueLayout.JAVA_LONG, GpuQueueLayout.CTRL_SQ_POST_IDX);
    c.set(ValueLayout.JAVA_LONG, GpuQueueLayout.CTRL_SQ_POST_IDX, idx + 1);
    int depth = c.get(ValueLayout.JAVA_INT, GpuQueueLayout.CTRL_SQ_DEPTH);
    long ring = c.get(ValueLayout.JAVA_LONG, GpuQueueLayout.CTRL_SQ_RING);
    if (opcode == GpuQueueLayout.OP_ATOMIC_FETCH_AND_ADD || opcode == GpuQueueLayout.OP_ATOMIC_CMP_AND_SWP) {
      laddr = c.get(ValueLayout.JAVA_LONG, GpuQueueLayout.CTRL_ATOMIC_RESULTS) + 8 * (idx & (depth - 1));
      lkey = c.get(ValueLayout.JAVA_INT, GpuQueueLayout.CTRL_INTERNAL_LKEY);
    }
    MemorySegment wqe = at(ring + GpuQueueLayout.WQE_BYTES * (idx & (depth - 1)), GpuQueueLayout.WQE_BYTES);
    wqe.fill((byte) 0);
    wqe.set(ValueLayout.JAVA_BYTE, GpuQueueLayout.WQE_OPCODE, (byte) opcode);
    wqe.set(ValueLayout.JAVA_BYTE, GpuQueueLayout.WQE_FLAGS, (byte) flags);
    wqe.set(ValueLayout.JAVA_LONG, GpuQueueLayout.WQE_WR_ID, idx);
    wqe.set(ValueLayout.JAVA_LONG, GpuQueueLayout.WQE_LOCAL_ADDR, laddr);
    wqe.set(ValueLayout.JAVA_INT, GpuQueueLayout.WQE_LKEY, lkey);
    wqe.set(ValueLayout.JAVA_INT, GpuQueueLayout.WQE_LENGTH, length);
    wqe.set(ValueLayout.JAVA_LONG, GpuQueueLayout.WQE_REMOTE_ADDR, raddr);
    wqe.set(ValueLayout.JAVA_INT, GpuQueueLayout.WQE_RKEY, rkey);
    wqe.set(ValueLayout.JAVA_LONG, GpuQueueLayout.WQE_COMPARE_ADD, compareAdd);
    wqe.set(ValueLayout.JAVA_LONG, GpuQueueLayout.WQE_SWAP, swap);
    java.lang.invoke.VarHandle.fullFence();
    ValueLayout.JAVA_LONG.varHandle().setVolatile(c, (long) GpuQueueLayout.CTRL_SQ_DBR_RECORD, idx + 1);
    ValueLayout.JAVA_LONG.varHandle().setVolatile(c, (long) GpuQueueLayout.CTRL_SQ_DOORBELL, idx + 1);
    return idx;
  }

  /** Until sqRetired passes idx; 10 s at most, and an error completion fails at once. */
  private static void waitRetired(long ep, long idx) {
    waitRetired(ep, idx, false);
  }

  private static void waitRetired(long ep, long idx, boolean errorExpected) {
    MemorySegment c = at(ep, 1024);
    long deadline = System.nanoTime() + 10_000_000_000L;
    while ((long) ValueLayout.JAVA_LONG.varHandle().getVolatile(c, (long) GpuQueueLayout.CTRL_SQ_RETIRED) <= idx) {
      int errors = (int) ValueLayout.JAVA_INT.varHandle().getVolatile(c, (long) GpuQueueLayout.CTRL_ERROR_COUNT);
      if (errors != 0 && !errorExpected) throw new AssertionError("endpoint error: status " + c.get(ValueLayout.JAVA_INT, GpuQueueLayout.CTRL_FIRST_ERROR_STATUS));
      if (System.nanoTime() > deadline) throw new AssertionError("WQE " + idx + " did not retire in 10 s");
      Thread.onSpinWait();
    }
  }

  private static MemorySegment at(long address, long size) {
    return MemorySegment.ofAddress(address).reinterpret(size);
  }
}
