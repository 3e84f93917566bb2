package org.mori4j.io;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Two engines in this JVM, connected on loopback over the suite's data backend ({@link TestBackends}: TCP, or RDMA
 * on the software provider), each with one registered buffer. Tests use it as the smallest real system: real
 * actors, real sockets, no mocks.
 */
final class EnginePair implements AutoCloseable {
  private static final AtomicInteger SEQ = new AtomicInteger();
  final IoEngine initiator;
  final IoEngine target;
  final Arena arena = Arena.ofShared();
  final MemorySegment localBuf;
  final MemorySegment remoteBuf;
  final MemoryDesc local;
  final MemoryDesc remote;

  EnginePair(long bufferSize) {
    this(bufferSize, TcpBackendConfig.defaults());
  }

  EnginePair(long bufferSize, TcpBackendConfig tcp) {
    int n = SEQ.incrementAndGet();
    initiator = IoEngine.create("initiator-" + n, IoEngineConfig.loopback());
    target = IoEngine.create("target-" + n, IoEngineConfig.loopback());
    TestBackends.create(initiator, tcp);
    TestBackends.create(target, tcp);
    initiator.registerRemoteEngine(target.engineDesc());
    target.registerRemoteEngine(initiator.engineDesc());
    localBuf = arena.allocate(bufferSize, 4096);
    remoteBuf = arena.allocate(bufferSize, 4096);
    local = initiator.registerMemory(localBuf);
    remote = target.registerMemory(remoteBuf);
  }

  static void fill(MemorySegment s, long seed) {
    java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
    long n = s.byteSize();
    long i = 0;
    for (; i + 8 <= n; i += 8) s.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
    for (; i < n; i++) s.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) r.nextInt());
  }

  /** First differing offset, or -1. */
  static long mismatch(MemorySegment a, long aOff, MemorySegment b, long bOff, long len) {
    return MemorySegment.mismatch(a, aOff, aOff + len, b, bOff, bOff + len);
  }

  @Override
  public void close() {
    initiator.close();
    target.close();
    arena.close();
  }
}
