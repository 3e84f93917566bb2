package org.mori4j.io.gpuinit;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntimes;

/**
 * The peer JVM of {@link GpuInitiatedTwoJvmGpuTest}: an engine (TCP on loopback) with a GPU-initiated context, one
 * onGpu endpoint and one registered buffer of {@code size} bytes on GPU {@code device}. Prints
 * {@code READY <engine desc> <endpoint handle> <region>} (hex), then answers lines on standard input:
 * {@code PEER <engine desc> <endpoint handle>} connects its endpoint ({@code CONNECTED}), {@code CHECK <bytes> <seed>}
 * counts the buffer's bytes that differ from the test pattern with a kernel on its GPU ({@code CHECKED <n>}).
 * Exits when standard input closes. Arguments: device, size.
 */
public final class GpuInitPeerMain {
  private GpuInitPeerMain() {}

  public static void main(String[] args) throws Exception {
    int device = Integer.parseInt(args[0]);
    long size = Long.parseLong(args[1]);
    HexFormat hex = HexFormat.of();
    var gpu = GpuRuntimes.select("auto");
    try (IoEngine engine = IoEngine.create("gpuinit-peer-" + ProcessHandle.current().pid(), IoEngineConfig.loopback())) {
      engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      try (RdmaDeviceContext ctx = RdmaDeviceContext.open(engine); GpuInitTestRig rig = new GpuInitTestRig(gpu, device)) {
        RdmaEndpoint ep = ctx.createEndpoint(RdmaEndpointConfig.gpu(device));
        DeviceBuffer buf = rig.alloc(size);
        RdmaMemoryRegion mr = ctx.registerMemoryRegion(buf.address(), size, device, MemoryLocationType.GPU, GpuQueueLayout.ACCESS_ALL);
        System.out.println("READY " + hex.formatHex(engine.engineDesc().toBytes()) + " " + hex.formatHex(ep.handle().toBytes()) + " "
            + hex.formatHex(mr.toBytes()));
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
          String[] w = line.trim().split(" ");
          switch (w[0]) {
            case "PEER" -> {
              engine.registerRemoteEngine(EngineDesc.fromBytes(hex.parseHex(w[1])));
              ctx.connectEndpoint(ep, EndpointHandle.fromBytes(hex.parseHex(w[2])));
              System.out.println("CONNECTED qpn " + ep.qpn());
            }
            case "CHECK" -> System.out.println("CHECKED " + rig.check(buf.address(), Long.parseLong(w[1]), Integer.parseInt(w[2])));
            default -> System.out.println("UNKNOWN " + line);
          }
          System.out.flush();
        }
        ep.close();
      }
    }
    System.exit(0);
  }
}
