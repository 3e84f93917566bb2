package org.mori4j.io.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TransferStatus;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.CompletionSource;
import org.mori4j.transport.InboundNotifications;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.TransferBackend;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * An op that XGMI hands back at run time reaches the next backend with that backend's part of the remote
 * descriptor (not the first backend's, and not none), the right peer handle, and its blocks intact.
 */
class TransferPathRerouteTest {
  private static final byte[] XGMI_DATA = {1, 2, 3}, RDMA_DATA = {9, 8, 7, 6};

  /** A backend that serves every GPU pair and hands what it is given to {@code onSubmit}. */
  private static final class FakeBackend implements TransferBackend {
    final String name;
    final boolean pooled;
    final List<byte[]> askedWith = new ArrayList<>();
    Consumer<TransferOp> onSubmit = op -> {};

    FakeBackend(String name, boolean pooled) {
      this.name = name;
      this.pooled = pooled;
    }

    @Override public boolean readsBlocksOnlyUntilDone() { return pooled; }

    @Override public String name() { return name; }
    @Override public void start(BackendListener listener) {}
    @Override public byte[] handshakeRequest(String peerKey) { return new byte[0]; }
    @Override public byte[] acceptHandshake(String initiatorKey, byte[] request) { return new byte[0]; }
    @Override public Object connect(String peerKey, byte[] handshakeReply) { return peerKey; }
    @Override public void disconnect(String peerKey, TransportError error, String reason) {}
    @Override public boolean connected(String peerKey) { return true; }
    @Override public byte[] registerMemory(LocalRegion region) { return new byte[0]; }
    @Override public void deregisterMemory(LocalRegion region) {}
    @Override public boolean canServe(LocalRegion local, boolean remoteGpu) { return true; }
    @Override public void submit(TransferOp op) { onSubmit.accept(op); }
    @Override public List<CompletionSource> completionSources() { return List.of(); }
    @Override public InboundNotifications inbound() { return new InboundNotifications(); }
    @Override public void close() {}

    @Override
    public boolean canServe(LocalRegion local, Object peer, boolean remoteGpu, byte[] remoteData) {
      askedWith.add(remoteData);
      return true;
    }
  }

  private record Setup(TransferPath path, MemoryDesc local, MemoryDesc remote, FakeBackend xgmi, FakeBackend rdma,
                       Object rdmaHandle) {}

  private static Setup setup() {
    TransferPath path = new TransferPath("a", 0);
    LocalRegion region = LocalRegion.gpu(1, 11, 0x10000, 1 << 20, 0);
    MemoryDesc local = new MemoryDesc("a", 1, 0, 0x10000, 1 << 20, MemoryLocationType.GPU, 11, Map.of());
    EnumMap<BackendType, byte[]> data = new EnumMap<>(BackendType.class);
    data.put(BackendType.XGMI, XGMI_DATA);
    data.put(BackendType.RDMA, RDMA_DATA);
    MemoryDesc remote = new MemoryDesc("b", 5, 1, 0x90000, 1 << 20, MemoryLocationType.GPU, 55, data);
    EngineDesc peerDesc = new EngineDesc("b", "node", "127.0.0.1", 1, 2, "/user/b",
        Set.of(BackendType.XGMI, BackendType.RDMA), Map.of());
    FakeBackend xgmi = new FakeBackend("xgmi", true), rdma = new FakeBackend("rdma", false);
    Object xgmiHandle = "xgmi-peer", rdmaHandle = "rdma-peer";
    xgmi.onSubmit = op -> {
      assertSame(xgmiHandle, op.peer());
      assertArrayEquals(XGMI_DATA, op.remoteData());
      assertTrue(path.reroute(BackendType.XGMI, op, "peer access cannot be enabled"));
    };
    var locals = new org.mori4j.transport.LongTable<Routes.Local>();
    locals.put(1L, new Routes.Local(region, local));
    path.routes = new Routes(
        locals,
        Map.of("b", new Routes.Peer(peerDesc, Map.of(BackendType.XGMI, xgmiHandle, BackendType.RDMA, rdmaHandle))),
        List.of(new Routes.Backend(BackendType.XGMI, xgmi, null), new Routes.Backend(BackendType.RDMA, rdma, null)),
        false, Map.of());
    return new Setup(path, local, remote, xgmi, rdma, rdmaHandle);
  }

  @Test
  void aReroutedSingleCarriesTheNextBackendsPartOfTheDescriptor() {
    Setup s = setup();
    List<TransferOp> got = new ArrayList<>();
    s.rdma.onSubmit = op -> {
      got.add(op);
      op.transferSucceeded();
    };
    TransferStatus st = s.path.single(TransferOp.WRITE, s.local, 64, s.remote, 128, 4096, 7);
    assertEquals(StatusCode.SUCCESS, st.code(), st.message());
    assertEquals(1, got.size());
    TransferOp op = got.getFirst();
    assertSame(s.rdmaHandle, op.peer());
    assertArrayEquals(RDMA_DATA, op.remoteData());
    assertArrayEquals(RDMA_DATA, s.rdma.askedWith.getLast(), "canServe must see the RDMA part, not null");
    assertEquals(64, op.localOffset(0));
    assertEquals(128, op.remoteOffset(0));
    assertEquals(4096, op.blockSize(0));
  }

  @Test
  void aReroutedBatchKeepsItsBlocksAndGetsItsOwnArrays() {
    Setup s = setup();
    long[] lo = {8192, 0, 4096}, ro = {0, 8192, 4096}, sizes = {4096, 4096, 4096}; // no two join
    List<long[]> seen = new ArrayList<>();
    s.rdma.onSubmit = op -> {
      assertArrayEquals(RDMA_DATA, op.remoteData());
      assertEquals(3, op.blockCount());
      for (int i = 0; i < op.blockCount(); i++) seen.add(new long[] {op.localOffset(i), op.remoteOffset(i), op.blockSize(i)});
      op.transferSucceeded();
    };
    TransferStatus st = s.path.batch(TransferOp.WRITE, s.local, lo, s.remote, ro, sizes, 9);
    assertEquals(StatusCode.SUCCESS, st.code(), st.message());
    for (int i = 0; i < 3; i++) assertArrayEquals(new long[] {lo[i], ro[i], sizes[i]}, seen.get(i), "block " + i);
  }
}
