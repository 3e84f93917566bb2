package org.mori4j.bench;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.RdmaBackendConfig;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.XgmiBackendConfig;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;

/**
 * {@code mori4j info --probe}: instead of predicting, starts two engines on loopback in this process, asks each
 * for every backend (TCP, XGMI, RDMA on the configured provider) and prints what {@code createBackend}
 * answered, then registers host memory (and GPU memory on the first and the last device when there is a GPU
 * runtime), registers the engines with each other and prints the engine's own {@code explain} of each pair:
 * the path a transfer between them takes here and why not the others. It frees everything it made.
 */
final class InfoProbe {
  private static final long SIZE = 1 << 20;

  private InfoProbe() {}

  static String run(GpuRuntime gpu) {
    StringBuilder sb = new StringBuilder("Probe: two engines on loopback in this process\n");
    String pid = Long.toString(ProcessHandle.current().pid());
    List<DeviceBuffer> buffers = new ArrayList<>();
    try (Arena arena = Arena.ofShared();
         IoEngine a = IoEngine.create("info-probe-a-" + pid, IoEngineConfig.loopback());
         IoEngine b = IoEngine.create("info-probe-b-" + pid, IoEngineConfig.loopback())) {
      for (BackendType t : List.of(BackendType.TCP, BackendType.XGMI, BackendType.RDMA)) {
        String answer = "started";
        for (IoEngine e : List.of(a, b)) {
          try {
            e.createBackend(t, switch (t) {
              case TCP -> TcpBackendConfig.defaults();
              case XGMI -> XgmiBackendConfig.defaults();
              case RDMA -> RdmaBackendConfig.defaults();
            });
          } catch (IoEngineException x) {
            answer = "refused: " + x.code() + ": " + x.getMessage();
          }
        }
        sb.append("  createBackend(").append(t).append("): ").append(answer).append('\n');
      }
      List<String[]> pairs = new ArrayList<>();
      List<MemoryDesc[]> descs = new ArrayList<>();
      descs.add(new MemoryDesc[] {a.registerMemory(arena.allocate(SIZE, 4096)), b.registerMemory(arena.allocate(SIZE, 4096))});
      pairs.add(new String[] {"host <-> host"});
      int devices = gpuDevices(gpu);
      if (devices > 0) {
        int last = devices - 1;
        MemoryDesc a0 = gpuRegion(a, gpu, 0, buffers, sb);
        MemoryDesc b0 = gpuRegion(b, gpu, 0, buffers, sb);
        MemoryDesc bl = last == 0 ? b0 : gpuRegion(b, gpu, last, buffers, sb);
        if (a0 != null && b0 != null) {
          descs.add(new MemoryDesc[] {a0, b0});
          pairs.add(new String[] {"GPU0 <-> GPU0"});
        }
        if (a0 != null && bl != null && last > 0) {
          descs.add(new MemoryDesc[] {a0, bl});
          pairs.add(new String[] {"GPU0 <-> GPU" + last});
        }
      } else {
        sb.append("  GPU pairs: not probed (no GPU runtime or no device)\n");
      }
      a.registerRemoteEngine(b.engineDesc());
      b.registerRemoteEngine(a.engineDesc());
      for (int i = 0; i < descs.size(); i++) {
        sb.append("  ").append(pairs.get(i)[0]).append(": ");
        try {
          String e = a.explain(descs.get(i)[0], descs.get(i)[1]).toString();
          sb.append(e.substring(e.indexOf("': ") + 3).replace("\n", "\n    ")).append('\n');
        } catch (IoEngineException x) {
          sb.append("cannot be explained: ").append(x.getMessage()).append('\n');
        }
      }
      // dropped before the engines close, so that neither logs the other's close as a lost peer
      a.deregisterRemoteEngine(b.engineDesc());
      b.deregisterRemoteEngine(a.engineDesc());
    } catch (IoEngineException e) {
      sb.append("  the probe stopped: ").append(e.code()).append(": ").append(e.getMessage()).append('\n');
    } finally {
      for (DeviceBuffer d : buffers) d.close();
    }
    return sb.toString();
  }

  private static int gpuDevices(GpuRuntime gpu) {
    if (gpu == null || !gpu.available()) return 0;
    try {
      return gpu.deviceCount();
    } catch (RuntimeException e) {
      return 0;
    }
  }

  private static MemoryDesc gpuRegion(IoEngine e, GpuRuntime gpu, int device, List<DeviceBuffer> buffers, StringBuilder sb) {
    try {
      DeviceBuffer d = gpu.allocDevice(device, SIZE);
      buffers.add(d);
      return e.registerMemory(d.address(), SIZE, device, MemoryLocationType.GPU);
    } catch (RuntimeException x) {
      sb.append("  GPU").append(device).append(" memory could not be registered: ").append(x.getMessage()).append('\n');
      return null;
    }
  }
}
