package org.mori4j.io.gpuinit;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.RdmaBackendConfig;
import org.mori4j.io.TcpBackendConfig;

/**
 * Two engines on loopback (TCP, or RDMA on the software provider: {@link #backend}), registered with each other, with one GPU-initiated context each (settings from
 * reference.conf but short RNR and peer timeouts), and helpers for connected endpoint pairs.
 */
final class GpuInitBed implements AutoCloseable {
  private static final AtomicInteger SEQ = new AtomicInteger();
  final IoEngine a, b;
  final RdmaDeviceContext ca, cb;
  final Arena arena = Arena.ofShared();

  GpuInitBed() {
    int n = SEQ.incrementAndGet();
    long pid = ProcessHandle.current().pid();
    a = IoEngine.create("gpuinit-a-" + pid + "-" + n, IoEngineConfig.loopback());
    b = IoEngine.create("gpuinit-b-" + pid + "-" + n, IoEngineConfig.loopback());
    backend(a);
    backend(b);
    a.registerRemoteEngine(b.engineDesc());
    b.registerRemoteEngine(a.engineDesc());
    ca = RdmaDeviceContext.open(a, settings(a));
    cb = RdmaDeviceContext.open(b, settings(b));
  }

  /**
   * The suite's data backend: TCP, or RDMA on the software provider in engine-actors' RDMA executions
   * ({@code -Dmori4j.test.backend=rdma}), so that the proxy runs over both.
   */
  static void backend(IoEngine e) {
    if ("rdma".equals(System.getProperty("mori4j.test.backend"))) e.createBackend(BackendType.RDMA, RdmaBackendConfig.defaults());
    else e.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
  }

  static GpuInitSettings settings(IoEngine e) {
    return GpuInitSettings.from(e.actorSystem().settings().config()).withTimeouts(300_000_000L, 3_000_000_000L);
  }

  /** Host endpoints on both sides, connected to each other. */
  RdmaEndpoint[] pair(int sq, int cq, int rq) {
    RdmaEndpointConfig cfg = new RdmaEndpointConfig(false, -1, sq, cq, rq);
    RdmaEndpoint x = ca.createEndpoint(cfg), y = cb.createEndpoint(cfg);
    ca.connectEndpoint(x, y.handle());
    cb.connectEndpoint(y, x.handle());
    return new RdmaEndpoint[] {x, y};
  }

  MemorySegment alloc(long bytes) {
    return arena.allocate(bytes, 4096);
  }

  @Override
  public void close() {
    ca.close();
    cb.close();
    a.close();
    b.close();
    arena.close();
  }
}
