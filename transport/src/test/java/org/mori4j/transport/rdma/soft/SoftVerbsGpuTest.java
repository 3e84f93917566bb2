package org.mori4j.transport.rdma.soft;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.natives.verbs.VerbsConstants.*;
import static org.mori4j.transport.rdma.soft.SoftFixture.*;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.mori4j.transport.rdma.verbs.MemoryRegion;
import org.mori4j.transport.rdma.verbs.QueuePair;
import org.mori4j.transport.rdma.verbs.SendRequests;

/**
 * GPU memory regions on the software provider, through {@link InMemoryStaging} (a device whose copies really move
 * bytes on a copy thread): transfers at both ends spanning several staging chunks, and copies that fail in the
 * middle of a payload: the rest of the payload is padded (source) or drained (target), the stream stays framed
 * and the request fails with {@code IBV_WC_GENERAL_ERR} (its own source) or {@code IBV_WC_REM_OP_ERR} (the
 * responder's target), while a later queue pair between the same devices still works.
 */
class SoftVerbsGpuTest {
  private static final int CHUNK = 64 << 10;

  private static SoftwareVerbsProvider provider(InMemoryStaging staging) {
    return new SoftwareVerbsProvider("127.0.0.1", staging, new SoftSettings(Duration.ofSeconds(2), CHUNK));
  }

  @Test
  void gpuMemoryMovesThroughStagingAtBothEnds() {
    InMemoryStaging staging = new InMemoryStaging();
    int size = 5 * CHUNK + 1234;
    try (SoftFixture f = new SoftFixture(provider(staging), 64)) {
      QueuePair[] qp = f.connected(16, 16, NORMAL);
      MemorySegment hostSrc = f.memory(size), gpuA = f.memory(size), gpuB = f.memory(size), hostBack = f.memory(size);
      fill(hostSrc, 10);
      MemoryRegion mHost = f.register(f.pdA, hostSrc, ALL);
      MemoryRegion mBack = f.register(f.pdA, hostBack, ALL);
      MemoryRegion mGpuA = f.own(f.pdA.registerGpuMemory(gpuA.address(), size, 0, ALL));
      MemoryRegion mGpuB = f.own(f.pdB.registerGpuMemory(gpuB.address(), size, 1, ALL));
      SendRequests wr = new SendRequests(3)
          .write(0, 1, mHost.address(), size, mHost.lkey(), mGpuB.address(), mGpuB.rkey(), IBV_SEND_SIGNALED) // host -> GPU
          .read(1, 2, mGpuA.address(), size, mGpuA.lkey(), mGpuB.address(), mGpuB.rkey(), IBV_SEND_SIGNALED) // GPU <- GPU
          .read(2, 3, mBack.address(), 1000, mBack.lkey(), mGpuB.address() + size - 1000, mGpuB.rkey(), IBV_SEND_SIGNALED);
      qp[0].postSend(wr, 0, 3);
      for (Wc w : poll(f.cqA, 3)) assertEquals(IBV_WC_SUCCESS, w.status(), w.toString());
      assertSameBytes(hostSrc, gpuB);
      assertSameBytes(hostSrc, gpuA);
      assertSameBytes(hostSrc.asSlice(size - 1000, 1000), hostBack.asSlice(0, 1000));
      // GPU -> host through staging on the requester side
      MemorySegment hostDst = f.memory(size);
      MemoryRegion mDst = f.register(f.pdB, hostDst, ALL);
      qp[0].postSend(new SendRequests(1).write(0, 4, mGpuA.address(), size, mGpuA.lkey(), mDst.address(), mDst.rkey(),
          IBV_SEND_SIGNALED), 0, 1);
      assertEquals(IBV_WC_SUCCESS, poll(f.cqA, 1).get(0).status());
      assertSameBytes(hostSrc, hostDst);
      assertTrue(staging.copies.get() >= 12, "copies went through staging: " + staging.copies.get());
    } finally {
      staging.shutdown();
    }
    assertEquals(0, staging.openSlots.get(), "every staging slot is closed with its connection");
  }

  @Test
  void failedCopiesFailTheirRequestAndKeepTheStreamFramed() {
    InMemoryStaging staging = new InMemoryStaging();
    int size = 3 * CHUNK;
    try (SoftFixture f = new SoftFixture(provider(staging), 64)) {
      MemorySegment gpuA = f.memory(size), gpuB = f.memory(size), host = f.memory(size);
      fill(host, 12);
      MemoryRegion mGpuA = f.own(f.pdA.registerGpuMemory(gpuA.address(), size, 0, ALL));
      MemoryRegion mGpuB = f.own(f.pdB.registerGpuMemory(gpuB.address(), size, 0, ALL));
      MemoryRegion mHost = f.register(f.pdA, host, ALL);

      // the requester's source copy fails in the second chunk: the payload goes out padded, the request fails
      staging.poisonAddress = gpuA.address() + CHUNK + 5;
      QueuePair[] qp = f.connected(8, 8, NORMAL);
      qp[0].postSend(new SendRequests(2)
          .write(0, 1, mGpuA.address(), size, mGpuA.lkey(), mGpuB.address(), mGpuB.rkey(), IBV_SEND_SIGNALED)
          .write(1, 2, mHost.address(), 8, mHost.lkey(), mGpuB.address(), mGpuB.rkey(), IBV_SEND_SIGNALED), 0, 2);
      assertEquals(java.util.List.of(IBV_WC_GENERAL_ERR, IBV_WC_WR_FLUSH_ERR), poll(f.cqA, 2).stream().map(Wc::status).toList());
      assertEquals(IBV_QPS_RTS, qp[1].state(), "the responder saw a well-framed write");

      // the responder's target copy fails: the rest is drained and the requester hears a remote operation error
      staging.poisonAddress = gpuB.address() + 2 * CHUNK + 7;
      QueuePair[] qp2 = f.connected(8, 8, NORMAL);
      qp2[0].postSend(new SendRequests(1).write(0, 3, mHost.address(), size, mHost.lkey(), mGpuB.address(), mGpuB.rkey(),
          IBV_SEND_SIGNALED), 0, 1);
      assertEquals(IBV_WC_REM_OP_ERR, poll(f.cqA, 1).get(0).status());
      assertEquals(IBV_QPS_ERR, qp2[1].state());

      // the devices are fine: a new pair moves the bytes
      staging.poisonAddress = -1;
      QueuePair[] qp3 = f.connected(8, 8, NORMAL);
      qp3[0].postSend(new SendRequests(1).write(0, 4, mHost.address(), size, mHost.lkey(), mGpuB.address(), mGpuB.rkey(),
          IBV_SEND_SIGNALED), 0, 1);
      assertEquals(IBV_WC_SUCCESS, poll(f.cqA, 1).get(0).status());
      assertSameBytes(host, gpuB);
    } finally {
      staging.shutdown();
    }
    assertEquals(0, staging.openSlots.get());
  }
}
