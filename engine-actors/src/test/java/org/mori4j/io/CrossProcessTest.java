package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.io.Bytes.*;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The engine's transfers across two JVMs on the suite's data backend ({@link TestBackends}): a target engine in a
 * child JVM ({@link TargetProcessMain}) and an initiator here. Single writes and reads (1 byte to 8 MiB), a
 * scattered batch, session calls and forged descriptors, each checked byte for byte by reading back. On RDMA this
 * is the software provider's wire between processes and the region confirmation across the control plane.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CrossProcessTest {
  private static final long BUF = 8L << 20;
  private Process child;
  private IoEngine initiator;
  private final Arena arena = Arena.ofShared();
  private MemorySegment local;
  private MemorySegment check;
  private MemoryDesc localDesc;
  private MemoryDesc checkDesc;
  private MemoryDesc remote;

  @BeforeAll
  void start() throws Exception {
    String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
    List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx256m"));
    cmd.addAll(TestBackends.childJvmFlags());
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), TargetProcessMain.class.getName(),
        "xproc-target-" + ProcessHandle.current().pid(), String.valueOf(BUF)));
    child = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    String line;
    String[] ready = null;
    List<String> seen = new ArrayList<>();
    while ((line = out.readLine()) != null) {
      if (seen.size() < 200) seen.add(line);
      if (line.startsWith("READY ")) {
        ready = line.split(" ");
        break;
      }
    }
    assertNotNull(ready, "child target never became ready: " + seen);
    Thread drain = new Thread(() -> {
      try {
        while (out.readLine() != null) {
          // keep the pipe empty
        }
      } catch (java.io.IOException ignored) {
        // child gone
      }
    });
    drain.setDaemon(true);
    drain.start();
    initiator = IoEngine.create("xproc-initiator-" + ProcessHandle.current().pid(), IoEngineConfig.loopback());
    TestBackends.create(initiator);
    EngineDesc target = initiator.discover(ready[1], Integer.parseInt(ready[2]));
    remote = initiator.lookupMemory(target, "buf").orElseThrow();
    initiator.registerRemoteEngine(target);
    local = arena.allocate(BUF, 4096);
    check = arena.allocate(BUF, 4096);
    localDesc = initiator.registerMemory(local);
    checkDesc = initiator.registerMemory(check);
  }

  @AfterAll
  void stop() throws Exception {
    if (initiator != null) initiator.close();
    if (child != null) {
      child.getOutputStream().close();
      if (!child.waitFor(20, TimeUnit.SECONDS)) child.destroyForcibly();
    }
    arena.close();
  }

  /** Reads [remoteOffset, +len) back into {@code check} and compares it with local [localOffset, +len). */
  private void assertRemoteHolds(long localOffset, long remoteOffset, long len, String what) {
    assertSucceeds(initiator.read(checkDesc, 0, remote, remoteOffset, len, initiator.allocateTransferUid()), what + ": read back");
    assertRangeEquals(local, localOffset, check, 0, len, what);
  }

  @Test
  void singleWritesAndReadsOfManySizesLandExactly() {
    long[] sizes = {1, 7, 4095, 4096, 65537, 1L << 20, BUF};
    long seed = 1;
    for (long size : sizes) {
      randomize(local, 0, size, seed++);
      long remoteOffset = size == BUF ? 0 : 13;
      assertSucceeds(initiator.write(localDesc, 0, remote, remoteOffset, size, initiator.allocateTransferUid()), "write " + size);
      assertRemoteHolds(0, remoteOffset, size, TestBackends.describe() + ": write of " + size + " bytes across JVMs");
    }
  }

  @Test
  void scatteredBatchAndSessionLandExactly() {
    int n = 256;
    long[] lo = new long[n], ro = new long[n], sz = new long[n];
    for (int i = 0; i < n; i++) {
      lo[i] = (long) i * 8192;
      ro[i] = (long) (n - 1 - i) * 8192 + 100;
      sz[i] = 1 + (i * 37 % 4000);
    }
    randomize(local, 0, (long) n * 8192, 42);
    List<TransferStatus> b = initiator.batchWrite(List.of(localDesc), List.of(lo), List.of(remote), List.of(ro), List.of(sz),
        new long[] {initiator.allocateTransferUid()});
    assertSucceeds(b.get(0), "batch write");
    for (int i = 0; i < n; i += 17) assertRemoteHolds(lo[i], ro[i], sz[i], "batch block " + i);

    IoEngineSession s = initiator.createSession(localDesc, remote).orElseThrow();
    randomize(local, 0, 1 << 20, 43);
    assertSucceeds(s.write(0, 4096, 1 << 20, s.allocateTransferUid()), "session write");
    assertRemoteHolds(0, 4096, 1 << 20, "session write");
    assertSucceeds(s.batchWrite(new long[] {0, 1 << 19}, new long[] {0, 2L << 20}, new long[] {1000, 5000}, s.allocateTransferUid()),
        "session batch write");
    assertRemoteHolds(1 << 19, 2L << 20, 5000, "session batch block 1");
  }

  @Test
  void forgedDescriptorsAreRefusedAcrossJvms() {
    MemoryDesc bigger = new MemoryDesc(remote.engineKey(), remote.id(), remote.deviceId(), remote.address(), 2 * BUF, remote.location(),
        remote.accessKey(), remote.backendData(), remote.ownerIncarnation());
    MemoryDesc otherKey = new MemoryDesc(remote.engineKey(), remote.id(), remote.deviceId(), remote.address(), remote.size(), remote.location(),
        remote.accessKey() ^ 1, remote.backendData(), remote.ownerIncarnation());
    assertFailsWith(initiator.write(localDesc, 0, bigger, BUF, 4096, 1), "past the registered end", StatusCode.ERR_INVALID_ARGS);
    // one code for a key the owner never issued, on every backend (ErrorContractTest#remoteRegionUnderAnAccessKey...)
    assertFailsWith(initiator.write(localDesc, 0, otherKey, 0, 4096, 2), "another access key", StatusCode.ERR_NOT_FOUND);
    assertTrue(initiator.write(localDesc, 0, remote, 0, 4096, 3).await(Duration.ofSeconds(20)));
  }
}
