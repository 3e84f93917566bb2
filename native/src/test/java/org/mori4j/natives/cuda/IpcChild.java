package org.mori4j.natives.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HexFormat;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.gpu.IpcMapping;

/**
 * The other process of {@link CudaRuntimeGpuTest}'s IPC test: opens the parent's allocation from its handle
 * (args: device, handle in hex, size, expected byte, byte to write), checks every byte is the expected one,
 * overwrites it with the other, and prints {@code IPC-CHILD-OK <size>} or the first difference.
 */
public final class IpcChild {
  private IpcChild() {}

  public static void main(String[] args) {
    int device = Integer.parseInt(args[0]);
    byte[] handle = HexFormat.of().parseHex(args[1]);
    long size = Long.parseLong(args[2]);
    byte expected = (byte) Integer.parseInt(args[3]);
    byte write = (byte) Integer.parseInt(args[4]);
    GpuRuntime runtime = GpuRuntimes.select("cuda");
    try (IpcMapping mapping = runtime.openIpcHandle(device, handle); Arena arena = Arena.ofConfined()) {
      if (mapping.size() < size) {
        System.out.println("IPC-CHILD-FAIL mapping has " + mapping.size() + " bytes, expected at least " + size);
        System.exit(2);
      }
      MemorySegment host = arena.allocate(size);
      runtime.copyDeviceToHost(host, mapping.address(), size);
      for (long i = 0; i < size; i++) {
        if (host.get(ValueLayout.JAVA_BYTE, i) != expected) {
          System.out.println("IPC-CHILD-FAIL byte " + i + " is " + host.get(ValueLayout.JAVA_BYTE, i) + ", expected " + expected);
          System.exit(3);
        }
      }
      runtime.fill(mapping.address(), write, size);
      // a synchronous device-to-host copy on the same (legacy) stream returns only after the fill has landed
      runtime.copyDeviceToHost(host, mapping.address(), 1);
      System.out.println("IPC-CHILD-OK " + size);
    }
    System.exit(0);
  }
}
