package org.mori4j.io;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;

/**
 * The other process of the XGMI cross-process tests: an engine with the XGMI and TCP backends that registers
 * one device buffer and publishes it as "gpu", prints {@code READY <host> <port>}, then obeys one command per
 * line of standard input and answers each on standard output (behind {@code "@@ "}, between log lines): {@code FILL <seed>} (the buffer takes
 * {@link GpuPattern} {@code seed}; answer {@code FILLED}), {@code ZERO} ({@code ZEROED}), {@code CRC <offset> <length>}
 * ({@code CRC <value>} of those bytes of the buffer), {@code DEREG} (deregisters the buffer, which returns only
 * once importers dropped their mappings; {@code DEREGISTERED}). End of input closes the engine.
 *
 * <p>Arguments: engine key, buffer size in bytes, device; for the in-memory test device also its mode name and
 * memory directory.
 */
public final class XgmiTargetProcessMain {
  private XgmiTargetProcessMain() {}

  public static void main(String[] args) throws Exception {
    String key = args[0];
    long size = Long.parseLong(args[1]);
    int device = Integer.parseInt(args[2]);
    GpuRuntime gpu;
    if (args.length > 3) {
      // the in-memory test device, sharing its memory directory with the parent (XgmiTransferOnTestDeviceTest)
      gpu = new org.mori4j.transport.xgmi.HostBackedGpuRuntime(2, 20, true, java.nio.file.Path.of(args[4]));
      GpuRuntimes.register(args[3], gpu);
      System.setProperty("mori4j.gpu.runtime", args[3]);
      com.typesafe.config.ConfigFactory.invalidateCaches();
    } else {
      gpu = GpuRuntimes.select("auto");
    }
    IoEngine engine = IoEngine.create(key, IoEngineConfig.loopback());
    engine.createBackend(BackendType.XGMI, XgmiBackendConfig.defaults());
    engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
    try (DeviceBuffer dev = gpu.allocDevice(device, size); Arena arena = Arena.ofConfined()) {
      MemorySegment host = arena.allocate(size, 4096);
      MemoryDesc desc = engine.registerMemory(dev.address(), size, device, MemoryLocationType.GPU);
      engine.publishMemory("gpu", desc);
      EngineDesc me = engine.engineDesc();
      answer("READY " + me.host() + " " + me.port());
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line; (line = in.readLine()) != null; ) {
        String[] w = line.trim().split(" ");
        switch (w[0]) {
          case "FILL" -> {
            GpuPattern.fill(host, Long.parseLong(w[1]));
            gpu.copyHostToDevice(dev.address(), host, size);
            answer("FILLED");
          }
          case "ZERO" -> {
            host.fill((byte) 0);
            gpu.copyHostToDevice(dev.address(), host, size);
            answer("ZEROED");
          }
          case "CRC" -> {
            long off = Long.parseLong(w[1]);
            long len = Long.parseLong(w[2]);
            gpu.copyDeviceToHost(host, dev.address() + off, len);
            answer("CRC " + GpuPattern.crc(host.asSlice(0, len)));
          }
          case "DEREG" -> {
            engine.deregisterMemory(desc);
            answer("DEREGISTERED");
          }
          default -> answer("UNKNOWN " + line);
        }
      }
      engine.close();
    }
    System.exit(0);
  }

  /** Answers go to stdout behind "@@ " so that the parent tells them from log lines. */
  private static void answer(String line) {
    System.out.println(ANSWER + line);
    System.out.flush();
  }

  static final String ANSWER = "@@ ";
}
