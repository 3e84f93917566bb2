package org.mori4j.examples;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.IoEngineSession;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.TransferStatus;

/**
 * KV-cache style transfers: a batch of scattered 4 KiB blocks written with one call (one request on the
 * wire), then the same blocks read back through a session, the low-overhead path for repeated transfers.
 */
public final class BatchAndSession {
  private BatchAndSession() {}

  public static void main(String[] args) {
    int blocks = 256;
    int block = 4096;
    long size = (long) blocks * block * 2;
    try (Arena arena = Arena.ofShared();
         IoEngine initiator = IoEngine.create("batch-initiator", IoEngineConfig.loopback());
         IoEngine target = IoEngine.create("batch-target", IoEngineConfig.loopback())) {
      initiator.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      target.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      initiator.registerRemoteEngine(target.engineDesc());
      MemorySegment src = arena.allocate(size, 4096);
      MemorySegment dst = arena.allocate(size, 4096);
      MemoryDesc local = initiator.registerMemory(src);
      MemoryDesc remote = target.registerMemory(dst);

      long[] lo = new long[blocks], ro = new long[blocks], sz = new long[blocks];
      for (int i = 0; i < blocks; i++) {
        lo[i] = (long) i * block;                          // dense on the initiator
        ro[i] = (long) (blocks - 1 - i) * 2 * block;       // scattered, reversed on the target
        sz[i] = block;
        src.asSlice(lo[i], block).fill((byte) i);
      }
      List<TransferStatus> st = initiator.batchWrite(List.of(local), List.of(lo), List.of(remote), List.of(ro),
          List.of(sz), new long[] {initiator.allocateTransferUid()});
      StatusCode c = initiator.waitAll(st, java.time.Duration.ofSeconds(30));
      System.out.println("batch write of " + blocks + " blocks: " + c);

      IoEngineSession session = initiator.createSession(local, remote).orElseThrow();
      src.fill((byte) 0);
      TransferStatus r = session.batchRead(lo, ro, sz, session.allocateTransferUid()).await();
      boolean ok = true;
      for (int i = 0; i < blocks; i++) ok &= src.get(java.lang.foreign.ValueLayout.JAVA_BYTE, lo[i]) == (byte) i;
      System.out.println("session batch read: " + r.code() + ", blocks intact: " + ok);
      if (c != StatusCode.SUCCESS || !r.succeeded() || !ok) throw new IllegalStateException("example failed");
    }
  }
}
