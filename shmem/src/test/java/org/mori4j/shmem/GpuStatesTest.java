package org.mori4j.shmem;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The bytes {@code moduleInit} copies into {@code globalGpuStates}: their exact layout, and that it is the
 * layout of {@code MoriShmemGpuStates} in {@code mori_shmem.cuh} as a C compiler lays it out.
 */
class GpuStatesTest {

  @Test
  void theLayoutIsFixedFieldByField() {
    assertEquals(4928, GpuStates.LAYOUT.byteSize());
    assertEquals(0, GpuStates.offsetOf("rank"));
    assertEquals(4, GpuStates.offsetOf("nPes"));
    assertEquals(8, GpuStates.offsetOf("flags"));
    assertEquals(12, GpuStates.offsetOf("version"));
    assertEquals(16, GpuStates.offsetOf("heapSize"));
    assertEquals(24, GpuStates.offsetOf("heapBase"));
    assertEquals(32, GpuStates.offsetOf("internalOffset"));
    assertEquals(40, GpuStates.offsetOf("waitTimeoutNs"));
    assertEquals(48, GpuStates.offsetOf("peerHeapBase"));
    assertEquals(560, GpuStates.offsetOf("numQpPerPe"));
    assertEquals(564, GpuStates.offsetOf("heapLkey"));
    assertEquals(568, GpuStates.offsetOf("numRegistered"));
    assertEquals(576, GpuStates.offsetOf("peerHeapRemoteBase"));
    assertEquals(1088, GpuStates.offsetOf("peerHeapRkey"));
    assertEquals(1344, GpuStates.offsetOf("endpoints"));
    assertEquals(3392, GpuStates.offsetOf("registered"));
    assertEquals(24, GpuStates.REGISTERED_LAYOUT.byteSize());
  }

  /** The remote tables land where the device reads them: endpoints with the table's fixed stride of MAX_QP_PER_PE. */
  @Test
  void theRemoteTablesAreWrittenAtTheirOffsets() {
    GpuStates.Remote r = new GpuStates.Remote(2, 0x11, new long[] {0xA000, 0xB000}, new int[] {0x21, 0x22}, new long[] {0, 0, 0xE10, 0xE11},
        java.util.List.of(new GpuStates.RegisteredBuffer(0xC000, 4096, 0x31)));
    GpuStates s = new GpuStates(0, 2, GpuStates.FLAG_P2P_DISABLED, 1 << 20, 0xA000, 0, 0, new long[] {0xA000, 0}, r);
    ByteBuffer b = ByteBuffer.wrap(s.toBytes()).order(ByteOrder.LITTLE_ENDIAN);
    assertEquals(2, b.getInt(560));
    assertEquals(0x11, b.getInt(564));
    assertEquals(1, b.getInt(568));
    assertEquals(0xB000, b.getLong(576 + 8));
    assertEquals(0x22, b.getInt(1088 + 4));
    assertEquals(0, b.getLong(1344));
    assertEquals(0xE10, b.getLong(1344 + 8 * GpuStates.MAX_QP_PER_PE));
    assertEquals(0xE11, b.getLong(1344 + 8 * GpuStates.MAX_QP_PER_PE + 8));
    assertEquals(0xC000, b.getLong(3392));
    assertEquals(4096, b.getLong(3400));
    assertEquals(0x31, b.getInt(3408));
    assertEquals(s, GpuStates.fromBytes(s.toBytes()));
    assertEquals(r, GpuStates.fromBytes(s.toBytes()).remote());
    assertThrows(IllegalArgumentException.class, () -> new GpuStates.Remote(GpuStates.MAX_QP_PER_PE + 1, 0, new long[1], new int[1], new long[5], java.util.List.of()));
    assertThrows(IllegalArgumentException.class, () -> new GpuStates.Remote(1, 0, new long[2], new int[2], new long[3], java.util.List.of()));
  }

  @Test
  void toBytesWritesEveryFieldLittleEndianAndZeroesUnusedPeers() {
    GpuStates s = new GpuStates(1, 3, GpuStates.FLAG_P2P_DISABLED, 64L << 20, 0x7f00_0000_0000L, 0, 10_000_000_000L,
        new long[] {0x7e00_0000_0000L, 0x7f00_0000_0000L, 0});
    ByteBuffer expected = ByteBuffer.allocate(4928).order(ByteOrder.LITTLE_ENDIAN);
    expected.putInt(1).putInt(3).putInt(1).putInt(GpuStates.VERSION).putLong(64L << 20).putLong(0x7f00_0000_0000L).putLong(0).putLong(10_000_000_000L)
        .putLong(0x7e00_0000_0000L).putLong(0x7f00_0000_0000L).putLong(0);
    assertArrayEquals(expected.array(), s.toBytes());
    assertEquals(s, GpuStates.fromBytes(s.toBytes()));
  }

  @Test
  void impossibleStatesAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> new GpuStates(2, 2, 0, 1, 1, 0, 0, new long[2]));
    assertThrows(IllegalArgumentException.class, () -> new GpuStates(0, 65, 0, 1, 1, 0, 0, new long[65]));
    assertThrows(IllegalArgumentException.class, () -> new GpuStates(0, 2, 0, 1, 1, 0, 0, new long[3]));
  }

  @Test
  void theHeadersStructHasTheSameLayoutAsACCompilerSeesIt() throws Exception {
    String header = ShmemKernels.deviceLibrary();
    Matcher m = Pattern.compile("(?s)typedef struct \\{((?:(?!typedef).)*?)\\} MoriShmemGpuStates;").matcher(header);
    assertEquals(true, m.find(), "MoriShmemGpuStates is not in mori_shmem.cuh");
    String fields = m.group(1);
    Matcher reg = Pattern.compile("(?s)(typedef struct \\{[^}]*\\} MoriShmemRegisteredBuffer;)").matcher(header);
    assertEquals(true, reg.find(), "MoriShmemRegisteredBuffer is not in mori_shmem.cuh");
    Matcher max = Pattern.compile("#define MORI_SHMEM_MAX_PES (\\d+)").matcher(header);
    assertEquals(true, max.find());
    assertEquals(GpuStates.MAX_PES, Integer.parseInt(max.group(1)));
    Matcher version = Pattern.compile("#define MORI_SHMEM_STATES_VERSION (\\d+)u").matcher(header);
    assertEquals(true, version.find());
    assertEquals(GpuStates.VERSION, Integer.parseInt(version.group(1)));
    Matcher flag = Pattern.compile("#define MORI_SHMEM_FLAG_P2P_DISABLED (\\d+)u").matcher(header);
    assertEquals(true, flag.find());
    assertEquals(GpuStates.FLAG_P2P_DISABLED, Integer.parseInt(flag.group(1)));

    Path dir = Files.createTempDirectory("m4j-states");
    StringBuilder c = new StringBuilder("#include <stdio.h>\n#include <stddef.h>\n#define MORI_SHMEM_MAX_PES ").append(GpuStates.MAX_PES)
        .append("\n#define MORI_SHMEM_MAX_QP_PER_PE ").append(GpuStates.MAX_QP_PER_PE).append("\n#define MORI_SHMEM_MAX_REGISTERED ")
        .append(GpuStates.MAX_REGISTERED).append("\n").append(reg.group(1)).append("\ntypedef struct {").append(fields).append("} MoriShmemGpuStates;\nint main(void) {\n")
        .append("  printf(\"size %zu\\n\", sizeof(MoriShmemGpuStates));\n");
    for (String f : new String[] {"rank", "nPes", "flags", "version", "heapSize", "heapBase", "internalOffset", "waitTimeoutNs", "peerHeapBase", "numQpPerPe", "heapLkey",
        "numRegistered", "peerHeapRemoteBase", "peerHeapRkey", "endpoints", "registered"})
      c.append("  printf(\"").append(f).append(" %zu\\n\", offsetof(MoriShmemGpuStates, ").append(f).append("));\n");
    c.append("  return 0;\n}\n");
    Files.writeString(dir.resolve("probe.c"), c);
    Process cc;
    try {
      cc = new ProcessBuilder("gcc", "-o", dir.resolve("probe").toString(), dir.resolve("probe.c").toString()).redirectErrorStream(true).start();
    } catch (java.io.IOException e) {
      assumeTrue(false, "no gcc on this machine: " + e.getMessage());
      return;
    }
    String log = new String(cc.getInputStream().readAllBytes());
    assertEquals(true, cc.waitFor(60, TimeUnit.SECONDS));
    assertEquals(0, cc.exitValue(), "the header's struct does not compile as C: " + log);
    Process run = new ProcessBuilder(dir.resolve("probe").toString()).start();
    Map<String, Long> probe = new HashMap<>();
    for (String line : new String(run.getInputStream().readAllBytes()).split("\n")) {
      String[] kv = line.trim().split(" ");
      probe.put(kv[0], Long.parseLong(kv[1]));
    }
    run.waitFor(10, TimeUnit.SECONDS);
    assertEquals(GpuStates.LAYOUT.byteSize(), probe.get("size"));
    for (var e : probe.entrySet()) if (!e.getKey().equals("size")) assertEquals(GpuStates.offsetOf(e.getKey()), e.getValue(), e.getKey());
    assertEquals(17, probe.size());
  }
}
