package org.mori4j.io.gpuinit;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;

/**
 * The peer JVM of {@link GpuInitPeerKillTest} (CPU only): an engine on loopback (the suite's backend, see
 * {@link GpuInitBed#backend}) with a GPU-initiated context, one host endpoint and one registered 1 MiB buffer.
 * Prints {@code READY <engine desc> <endpoint handle> <region>} (hex) and lives until standard input closes or it
 * is killed.
 */
public final class GpuInitHostPeerMain {
  private GpuInitHostPeerMain() {}

  public static void main(String[] args) throws Exception {
    HexFormat hex = HexFormat.of();
    try (Arena arena = Arena.ofShared(); IoEngine engine = IoEngine.create("gpuinit-hostpeer-" + ProcessHandle.current().pid(), IoEngineConfig.loopback())) {
      GpuInitBed.backend(engine);
      try (RdmaDeviceContext ctx = RdmaDeviceContext.open(engine)) {
        RdmaEndpoint ep = ctx.createEndpoint(new RdmaEndpointConfig(false, -1, 64, 64, 0));
        RdmaMemoryRegion mr = ctx.registerMemoryRegion(arena.allocate(1 << 20, 4096));
        System.out.println("READY " + hex.formatHex(engine.engineDesc().toBytes()) + " " + hex.formatHex(ep.handle().toBytes()) + " "
            + hex.formatHex(mr.toBytes()));
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        while (in.readLine() != null) {
          // nothing to do: the parent only writes into the buffer
        }
      }
    }
    System.exit(0);
  }
}
