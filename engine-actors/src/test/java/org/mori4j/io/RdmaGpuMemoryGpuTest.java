package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.typesafe.config.ConfigFactory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;

/**
 * GPU memory on the RDMA backend over the software provider (emulation: the device stages GPU memory through
 * pinned buffers, where a NIC would reach it by peer memory or dma-buf): two engines in this JVM with only an RDMA
 * backend, host -> GPU and GPU -> GPU writes and GPU -> host reads from 1 byte to 64 MiB, byte-exact, and the
 * route really is RDMA. Runs on the GPU machine only; skips, saying why, elsewhere.
 */
@Tag("gpu")
class RdmaGpuMemoryGpuTest {
  /** Engines embedded in their own systems reach each other through remoting, on loopback. */
  private static final String SOFTWARE_REMOTE = "mori4j.rdma.provider = software\npekko.actor.provider = remote\n"
      + "pekko.remote.artery.canonical.hostname = 127.0.0.1\npekko.remote.artery.canonical.port = 0";

  @Test
  void gpuMemoryMovesExactlyOverTheSoftwareProvider() {
    GpuRuntime gpu = GpuRuntimes.select("auto");
    assumeTrue(gpu.available(), "no GPU runtime on this machine: " + gpu.version());
    long big = 64L << 20;
    ActorSystem<Void> sa = ActorSystem.create(Behaviors.empty(), "rdma-gpu-a",
        ConfigFactory.parseString(SOFTWARE_REMOTE).withFallback(ConfigFactory.load()));
    ActorSystem<Void> sb = ActorSystem.create(Behaviors.empty(), "rdma-gpu-b",
        ConfigFactory.parseString(SOFTWARE_REMOTE).withFallback(ConfigFactory.load()));
    int remoteDevice = gpu.deviceCount() > 1 ? 1 : 0;
    try (Arena arena = Arena.ofShared();
         DeviceBuffer src = gpu.allocDevice(0, big);
         DeviceBuffer dst = gpu.allocDevice(remoteDevice, big)) {
      IoEngine a = IoEngine.create(sa, "rdma-gpu-a", IoEngineConfig.loopback());
      IoEngine b = IoEngine.create(sb, "rdma-gpu-b", IoEngineConfig.loopback());
      try {
        a.createBackend(BackendType.RDMA, RdmaBackendConfig.defaults());
        b.createBackend(BackendType.RDMA, RdmaBackendConfig.defaults());
        a.registerRemoteEngine(b.engineDesc());
        MemorySegment host = arena.allocate(big, 4096);
        MemorySegment check = arena.allocate(big, 4096);
        EnginePair.fill(host, 5);
        gpu.copyHostToDevice(src.address(), host, big);
        MemoryDesc hostDesc = a.registerMemory(host);
        MemoryDesc checkDesc = a.registerMemory(check);
        MemoryDesc srcDesc = a.registerMemory(src.address(), big, 0, MemoryLocationType.GPU);
        MemoryDesc dstDesc = b.registerMemory(dst.address(), big, remoteDevice, MemoryLocationType.GPU);
        assertTrue(dstDesc.backendData().containsKey(BackendType.RDMA), "GPU memory registered with the software device: " + dstDesc);
        assertEquals(BackendType.RDMA, a.createSession(srcDesc, dstDesc).orElseThrow().backendType());
        for (long size : List.of(1L, 4097L, (1L << 20) + 3, big)) {
          for (MemoryDesc from : List.of(hostDesc, srcDesc)) {
            gpu.fill(dst.address(), (byte) 0, big);
            Bytes.assertSucceeds(a.write(from, 0, dstDesc, 0, size, a.allocateTransferUid()), "write " + size + " from " + from.location());
            check.fill((byte) 0);
            Bytes.assertSucceeds(a.read(checkDesc, 0, dstDesc, 0, size, a.allocateTransferUid()), "read back " + size);
            assertEquals(-1, MemorySegment.mismatch(host, 0, size, check, 0, size),
                size + " bytes from " + from.location() + " to GPU " + remoteDevice + " and back over RDMA (software provider)");
          }
        }
      } finally {
        a.close();
        b.close();
      }
    } finally {
      sa.terminate();
      sb.terminate();
    }
  }
}
