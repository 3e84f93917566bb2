package org.mori4j.io.kv;

import java.lang.foreign.Arena;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.TcpBackendConfig;

/**
 * The KV tests' bed: two engines of this JVM with TCP backends on loopback that have registered each other, and a
 * shared arena for their caches' buffers; closed engines first, then the arena (the engines may touch the buffers
 * until they are closed).
 */
final class TcpEnginePair implements AutoCloseable {
  final IoEngine first;
  final IoEngine second;
  final Arena arena = Arena.ofShared();

  TcpEnginePair(String firstKey, String secondKey) {
    first = IoEngine.create(firstKey, IoEngineConfig.loopback());
    second = IoEngine.create(secondKey, IoEngineConfig.loopback());
    first.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
    second.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
    first.registerRemoteEngine(second.engineDesc());
    second.registerRemoteEngine(first.engineDesc());
  }

  @Override
  public void close() {
    first.close();
    second.close();
    arena.close();
  }
}
