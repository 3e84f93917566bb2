package org.mori4j.io.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
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
import org.mori4j.transport.LongTable;
import org.mori4j.transport.TransferBackend;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * A transfer whose caller read the routes just before the engine changed them, and asked the backend after it had
 * acted on the change, gets the change's code, not "no backend". The CI failure this pins down: a submitter read the
 * routes of an open engine, the engine closed and its RDMA backend stopped (a stopped RDMA backend serves nothing),
 * and the write ended ERR_NOT_FOUND "no backend connected ... can move" instead of a "gone" code. The fake backend
 * below makes the change at the moment it is asked, which is where the real race put it.
 */
class TransferPathCloseRaceTest {
  /** A backend that, when asked whether it serves a pair, runs {@code change} first and then refuses. */
  private static final class StoppingBackend implements TransferBackend {
    Runnable change = () -> {};

    @Override public String name() { return "stopping"; }
    @Override public void start(BackendListener listener) {}
    @Override public byte[] handshakeRequest(String peerKey) { return new byte[0]; }
    @Override public byte[] acceptHandshake(String initiatorKey, byte[] request) { return new byte[0]; }
    @Override public Object connect(String peerKey, byte[] handshakeReply) { return peerKey; }
    @Override public void disconnect(String peerKey, TransportError error, String reason) {}
    @Override public boolean connected(String peerKey) { return true; }
    @Override public byte[] registerMemory(LocalRegion region) { return new byte[0]; }
    @Override public void deregisterMemory(LocalRegion region) {}
    @Override public boolean canServe(LocalRegion local, boolean remoteGpu) { return false; }
    @Override public void submit(TransferOp op) { throw new AssertionError("nothing may be submitted to a refusing backend"); }
    @Override public List<CompletionSource> completionSources() { return List.of(); }
    @Override public InboundNotifications inbound() { return new InboundNotifications(); }
    @Override public void close() {}

    @Override
    public boolean canServe(LocalRegion local, Object peer, boolean remoteGpu, byte[] remoteData) {
      change.run();
      return false;
    }
  }

  private final TransferPath path = new TransferPath("a", 0);
  private final LongTable<Routes.Local> locals = new LongTable<>();
  private final LocalRegion region = LocalRegion.gpu(1, 11, 0x10000, 1 << 20, 0);
  private final MemoryDesc local = new MemoryDesc("a", 1, 0, 0x10000, 1 << 20, MemoryLocationType.GPU, 11, Map.of());
  private final MemoryDesc remote = new MemoryDesc("b", 5, 1, 0x90000, 1 << 20, MemoryLocationType.GPU, 55,
      Map.of(BackendType.RDMA, new byte[] {1}));
  private final StoppingBackend rdma = new StoppingBackend();
  private final List<Routes.Backend> backends = List.of(new Routes.Backend(BackendType.RDMA, rdma, null));
  private final Map<String, Routes.Peer> peers = Map.of("b", new Routes.Peer(
      new EngineDesc("b", "node", "127.0.0.1", 1, 2, "/user/b", Set.of(BackendType.RDMA), Map.of()), Map.of(BackendType.RDMA, "rdma-peer")));

  TransferPathCloseRaceTest() {
    locals.put(1L, new Routes.Local(region, local));
    path.routes = new Routes(locals, peers, backends, false, Map.of());
  }

  @Test
  void aTransferThatRacedTheEnginesCloseEndsBadStateNotNotFound() {
    // the engine publishes its closed routes, then stops the backend: the caller's snapshot is the open one
    rdma.change = () -> path.routes = new Routes(locals, peers, backends, true, Map.of());
    TransferStatus single = path.single(TransferOp.WRITE, local, 0, remote, 0, 4096, 1);
    assertEquals(StatusCode.ERR_BAD_STATE, single.code(), single.message());
    assertTrue(single.message().contains("is closed"), single.message());
    path.routes = new Routes(locals, peers, backends, false, Map.of());
    TransferStatus batch = path.batch(TransferOp.READ, local, new long[] {0, 8192}, remote, new long[] {0, 65536},
        new long[] {4096, 4096}, 2);
    assertEquals(StatusCode.ERR_BAD_STATE, batch.code(), batch.message());
  }

  @Test
  void aTransferThatRacedItsRegionsDeregistrationSaysSo() {
    // deregistration: the region leaves the live table and dies before the backends drop it
    rdma.change = () -> {
      locals.remove(1L);
      region.kill();
      path.routes = new Routes(locals, peers, backends, false, Map.of());
    };
    TransferStatus st = path.single(TransferOp.WRITE, local, 0, remote, 0, 4096, 1);
    assertEquals(StatusCode.ERR_NOT_FOUND, st.code(), st.message());
    assertTrue(st.message().contains("is not registered with this engine"), st.message());
  }

  @Test
  void noBackendForAPairNamesWhatTheEngineHad() {
    TransferStatus st = path.single(TransferOp.WRITE, local, 0, remote, 0, 4096, 1);
    assertEquals(StatusCode.ERR_NOT_FOUND, st.code(), st.message());
    assertTrue(st.message().contains("no backend connected to engine 'b'") && st.message().contains("RDMA (connected)"), st.message());
  }
}
