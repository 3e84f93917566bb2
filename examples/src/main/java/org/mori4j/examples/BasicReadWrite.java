package org.mori4j.examples;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.TransferStatus;

/**
 * MORI-IO's basic example in Java: two engines, descriptors exchanged as bytes (as they would be between
 * processes), one write and one read over TCP, and the target's inbound notification.
 */
public final class BasicReadWrite {
  private BasicReadWrite() {}

  public static void main(String[] args) {
    long size = 1 << 20;
    try (Arena arena = Arena.ofShared();
         IoEngine initiator = IoEngine.create("initiator", IoEngineConfig.loopback());
         IoEngine target = IoEngine.create("target", IoEngineConfig.loopback())) {
      initiator.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      target.createBackend(BackendType.TCP, TcpBackendConfig.defaults());

      // descriptors cross process boundaries as bytes; here they only make a round trip
      initiator.registerRemoteEngine(EngineDesc.fromBytes(target.engineDesc().toBytes()));
      target.registerRemoteEngine(EngineDesc.fromBytes(initiator.engineDesc().toBytes()));

      MemorySegment src = arena.allocate(size, 4096);
      MemorySegment dst = arena.allocate(size, 4096);
      for (long i = 0; i < size; i++) src.set(ValueLayout.JAVA_BYTE, i, (byte) i);
      MemoryDesc local = initiator.registerMemory(src);
      MemoryDesc remote = MemoryDesc.fromBytes(target.registerMemory(dst).toBytes());

      long uid = initiator.allocateTransferUid();
      TransferStatus w = initiator.write(local, 0, remote, 0, size, uid).await();
      System.out.println("write: " + w.code() + ", bytes equal: " + (src.mismatch(dst) == -1));
      System.out.println("target saw transfer " + uid + ": " + target.popInboundTransferStatus("initiator", uid).map(TransferStatus::code).orElse(null));

      src.fill((byte) 0);
      TransferStatus r = initiator.read(local, 0, remote, 0, size, initiator.allocateTransferUid()).await();
      System.out.println("read: " + r.code() + ", bytes equal: " + (src.mismatch(dst) == -1));
      if (!w.succeeded() || !r.succeeded() || src.mismatch(dst) != -1) throw new IllegalStateException("example failed");
    }
  }
}
