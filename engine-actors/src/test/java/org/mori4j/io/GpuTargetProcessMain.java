package org.mori4j.io;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;

/**
 * A target engine in its own JVM for the GPU transfer tests: a TCP backend on loopback, one device buffer
 * published as "gpu" (on the device given) and one host buffer published as "cpu", both of the given size;
 * prints {@code READY <host> <port>} and waits until its standard input closes.
 *
 * <p>Arguments: engine key, buffer size in bytes, device.
 */
public final class GpuTargetProcessMain {
  private GpuTargetProcessMain() {}

  public static void main(String[] args) throws Exception {
    String key = args[0];
    long size = Long.parseLong(args[1]);
    int device = Integer.parseInt(args[2]);
    GpuRuntime gpu = GpuRuntimes.select("auto");
    IoEngine engine = IoEngine.create(key, IoEngineConfig.loopback());
    engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
    try (DeviceBuffer dev = gpu.allocDevice(device, size)) {
      MemorySegment host = Arena.global().allocate(size, 4096);
      engine.publishMemory("gpu", engine.registerMemory(dev.address(), size, device, MemoryLocationType.GPU));
      engine.publishMemory("cpu", engine.registerMemory(host));
      EngineDesc me = engine.engineDesc();
      System.out.println("READY " + me.host() + " " + me.port());
      System.out.flush();
      while (System.in.read() >= 0) {
        // wait for the parent to close our stdin
      }
      engine.close();
    }
    System.exit(0);
  }
}
