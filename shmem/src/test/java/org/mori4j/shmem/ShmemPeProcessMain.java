package org.mori4j.shmem;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import org.mori4j.natives.gpu.GpuStream;

/**
 * A PE in its own JVM, for the tests that need PEs in separate processes (IPC-mapped heaps, a PE that is
 * killed). Arguments: mode, rank, nPes, the unique id in hex, heap bytes, and for the in-memory device its
 * memory directory. Answers on standard output behind {@code "@@ "} (between log lines).
 *
 * <p>Modes: {@code device-api} runs {@link DeviceApiScenario} (real GPU) and prints {@code PASS}/{@code FAIL}
 * lines; {@code host} runs the host scenario of {@code ShmemTwoProcessTest} on the in-memory device;
 * {@code hang} joins, allocates, prints {@code READY} and sleeps until it is killed. Every mode ends with {@code DONE <failures>}.
 */
public final class ShmemPeProcessMain {
  private ShmemPeProcessMain() {}

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    int rank = Integer.parseInt(args[1]), n = Integer.parseInt(args[2]);
    byte[] id = HexFormat.of().parseHex(args[3]);
    long heap = Long.parseLong(args[4]);
    ShmemConfig config;
    ShmemTestDevice device = null;
    if (args.length > 5) {
      device = new ShmemTestDevice(2, Path.of(args[5]));
      config = device.config(heap);
    } else {
      config = ShmemConfig.load().withHeapSize(heap);
    }
    if (mode.equals("device-api-proxy")) config = config.withDisableP2p(true);
    int failures = 0;
    try (Shmem pe = Shmem.initWithUniqueId(rank, n, id, config)) {
      answer("UP " + pe.device() + " " + pe.gpu().pciBusId(pe.device()));
      switch (mode) {
        case "device-api", "device-api-proxy" -> {
          try (GpuStream stream = pe.gpu().createStream(pe.device())) {
            DeviceApiScenario s = new DeviceApiScenario(pe, stream);
            List<String> failed = s.run();
            for (String p : s.passed()) answer("PASS " + p);
            for (String f : failed) answer("FAIL " + f);
            failures = failed.size();
          }
        }
        case "host" -> failures = hostScenario(pe);
        case "hang" -> {
          pe.malloc(4096);
          answer("READY");
          Thread.sleep(Long.MAX_VALUE); // out of every collective call: the parent's next one waits for it until it is killed
        }
        default -> throw new IllegalArgumentException("mode " + mode);
      }
      pe.finalizeShmem();
    } finally {
      if (device != null) device.shutdown();
    }
    answer("DONE " + failures);
  }

  /**
   * The host scenario of the two-process test on the in-memory device, mirrored by the parent: malloc, each PE
   * writes its rank's pattern into the other's object through {@link Shmem#ptrP2p} (an IPC mapping here),
   * a host barrier, each checks what arrived, then a stream barrier.
   */
  static int hostScenario(Shmem pe) {
    int failures = 0;
    long obj = pe.malloc(1 << 20);
    answer("OFFSET " + (obj - pe.heapBase()));
    int other = 1 - pe.myPe();
    long remote = pe.ptrP2p(obj, pe.myPe(), other);
    if (remote == 0) {
      answer("FAIL ptrP2p to the other process is 0");
      failures++;
    } else {
      MemorySegment there = MemorySegment.ofAddress(remote).reinterpret(1 << 20);
      for (int i = 0; i < 1 << 20; i++) there.set(ValueLayout.JAVA_BYTE, i, DeviceApiScenario.pattern(pe.myPe(), i));
    }
    pe.barrierAll();
    MemorySegment here = MemorySegment.ofAddress(obj).reinterpret(1 << 20);
    int bad = 0;
    for (int i = 0; i < 1 << 20; i++) if (here.get(ValueLayout.JAVA_BYTE, i) != DeviceApiScenario.pattern(other, i)) bad++;
    if (bad != 0) {
      answer("FAIL " + bad + " bytes from PE " + other + " wrong");
      failures++;
    }
    try (GpuStream s = pe.gpu().createStream(pe.device())) {
      for (int i = 0; i < 10; i++) pe.barrierAll(s);
      s.synchronize();
    }
    pe.free(obj);
    return failures;
  }

  static void answer(String line) {
    System.out.println("@@ " + line);
    System.out.flush();
  }
}
