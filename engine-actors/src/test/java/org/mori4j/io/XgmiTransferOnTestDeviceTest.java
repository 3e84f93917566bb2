package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mori4j.io.XgmiTransferSupport.*;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.transport.xgmi.HostBackedGpuRuntime;

/**
 * {@link XgmiTransferTests} on every build machine, on transport's in-memory device
 * ({@link HostBackedGpuRuntime}: two "GPUs" with peer access whose memory is shared memory files, copies and
 * the batch kernel moving real bytes on stream threads, IPC handles that the child JVM maps from the same
 * directory). The engines select it by its registered name ({@code mori4j.gpu.runtime}), so everything above
 * the driver is the real thing: descriptors, routing, the owner's confirmation and revocation over remoting
 * between two JVMs, the worker, close. Sizes are smaller than on a GPU (64 MiB, 32,768 blocks of up to 4 KiB).
 * Also here, because only this device can refuse a genuine IPC handle on demand: XGMI's fallback to TCP.
 */
class XgmiTransferOnTestDeviceTest extends XgmiTransferTests {
  static final String MODE = "xgmi-test-device";
  private static Path dir;
  private static HostBackedGpuRuntime device;

  @BeforeAll
  static void useTheTestDevice() {
    dir = HostBackedGpuRuntime.newDirectory();
    device = new HostBackedGpuRuntime(2, 20, true, dir);
    TestGpuDevice.select(MODE, device);
  }

  @AfterAll
  static void forgetTheTestDevice() {
    TestGpuDevice.forget(MODE, device);
  }

  /**
   * A launched copy cannot be stopped: with the device's streams stalled, a write, a batch and a read end with
   * ERR_TIMEOUT at their deadline (or on cancel()), their late completions are ignored, and later transfers on the
   * same streams are byte-exact (the batch's pooled block arrays are not handed to a later batch while the stalled
   * one still reads them).
   */
  @Test
  void aStalledCopyEndsWithTimeoutAtItsDeadlineAndItsLateCompletionIsIgnored() {
    long cap = 8 * MIB;
    java.time.Duration deadline = java.time.Duration.ofMillis(200), slack = java.time.Duration.ofMillis(1500);
    String pid = String.valueOf(ProcessHandle.current().pid());
    try (Arena arena = Arena.ofShared(); DeviceBuffer a = gpu.allocDevice(0, cap); DeviceBuffer b = gpu.allocDevice(remoteDevice(), cap);
         IoEngine x = engine("xgmi-deadline-a-" + pid); IoEngine y = engine("xgmi-deadline-b-" + pid)) {
      x.registerRemoteEngine(y.engineDesc());
      MemoryDesc local = x.registerMemory(a.address(), cap, 0, MemoryLocationType.GPU);
      MemoryDesc remote = y.registerMemory(b.address(), cap, remoteDevice(), MemoryLocationType.GPU);
      assertEquals(BackendType.XGMI, x.createSession(local, remote).orElseThrow().backendType());
      MemorySegment pattern = arena.allocate(cap, 4096);
      GpuPattern.fill(pattern, 31);
      upload(a, pattern);
      ok(x.write(local, 0, remote, 0, 4096, x.allocateTransferUid()), "warm-up write (maps the remote region)");
      TransferOptions opt = TransferOptions.deadline(deadline);
      TransferStatus w, bw, c;
      device.stallStreams(true);
      try {
        long t0 = System.nanoTime();
        w = x.write(local, 0, remote, 0, MIB, x.allocateTransferUid(), opt);
        bw = x.batchWrite(List.of(local), List.of(new long[] {0, 2 * 4096, 5 * 4096}), List.of(remote), List.of(new long[] {MIB, MIB + 3 * 4096, MIB + 9 * 4096}),
            List.of(new long[] {4096, 4096, 100}), new long[] {x.allocateTransferUid()}, opt).get(0);
        c = x.read(local, 2 * MIB, remote, 0, 4096, x.allocateTransferUid());
        assertTrue(c.cancel(), "cancel() of a copy waiting on a stalled stream");
        for (TransferStatus s : List.of(w, bw)) {
          assertTrue(s.await(deadline.plus(slack)), "no end within the deadline + slack");
          assertEquals(StatusCode.ERR_TIMEOUT, s.code(), s.message());
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(ms >= deadline.toMillis() && ms <= deadline.plus(slack).toMillis(), "ended " + ms + " ms after the call");
        assertEquals(StatusCode.ERR_TIMEOUT, c.code());
      } finally {
        device.stallStreams(false);
      }
      // later transfers, behind the late copies on the same streams, are byte-exact; the late completions changed no status
      GpuPattern.fill(pattern, 32);
      upload(a, pattern);
      ok(x.write(local, 0, remote, 4 * MIB, 2 * MIB, x.allocateTransferUid()), "write after the stall");
      assertEquals(-1, MemorySegment.mismatch(download(arena, b, 4 * MIB, 2 * MIB), 0, 2 * MIB, pattern, 0, 2 * MIB));
      long[] lo = {3 * 4096, 7 * 4096, 11 * 4096}, ro = {6 * MIB, 6 * MIB + 2 * 4096, 6 * MIB + 4 * 4096};
      ok(x.batchWrite(List.of(local), List.of(lo), List.of(remote), List.of(ro), List.of(new long[] {4096, 4096, 4096}),
          new long[] {x.allocateTransferUid()}).get(0), "batch after the stall");
      for (int i = 0; i < 3; i++)
        assertEquals(-1, MemorySegment.mismatch(download(arena, b, ro[i], 4096), 0, 4096, pattern, lo[i], lo[i] + 4096), "block " + i);
      for (TransferStatus s : List.of(w, bw, c)) assertEquals(StatusCode.ERR_TIMEOUT, s.code(), "a late completion changed a cancelled status");
    }
  }

  @Test
  void whenTheOwnersIpcHandleDoesNotOpenHereTransfersFallBackToTcpWithoutFailing() throws Exception {
    long cap = 4 * MIB;
    Process child = startChild(cap);
    BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    PrintWriter cmd = new PrintWriter(new OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8), true);
    try (Arena arena = Arena.ofShared(); DeviceBuffer a = gpu.allocDevice(0, cap)) {
      String ready = answer(out, "start");
      try (IoEngine x = engine("xgmi-fallback-" + ProcessHandle.current().pid())) {
        MemoryDesc remote = childMemory(x, ready);
        MemoryDesc local = x.registerMemory(a.address(), cap, 0, MemoryLocationType.GPU);
        assertEquals(BackendType.XGMI, x.createSession(local, remote).orElseThrow().backendType());
        MemorySegment pattern = arena.allocate(cap, 4096);
        GpuPattern.fill(pattern, 77);
        upload(a, pattern);
        assertEquals("ZEROED", ask(cmd, out, "ZERO"));
        device.failIpcOpens("CUDA_ERROR_PEER_ACCESS_UNSUPPORTED");
        // routed to XGMI, which finds it cannot map the child's memory and hands both over to TCP: no failure
        long[] offsets = {2 * MIB, 0, MIB};
        long[] sizes = {MIB, MIB, 4096};
        ok(x.write(local, 0, remote, 0, MIB, x.allocateTransferUid()), "write after the handle failed to open");
        ok(x.batchWrite(List.of(local), List.of(offsets), List.of(remote), List.of(offsets), List.of(sizes), new long[] {x.allocateTransferUid()}).get(0),
            "batch write after the handle failed to open");
        assertEquals(1, x.metrics().getReroutes(), "XGMI handed the write to TCP; the batch went to TCP from the start");
        MemorySegment want = arena.allocate(3 * MIB, 4096);
        MemorySegment.copy(pattern, 0, want, 0, 3 * MIB);
        want.asSlice(MIB + 4096, MIB - 4096).fill((byte) 0); // the batch wrote only 4 KiB at 1 MiB
        assertEquals("CRC " + GpuPattern.crc(want), ask(cmd, out, "CRC 0 " + 3 * MIB), "the child holds what was written over TCP");
        assertEquals(BackendType.TCP, x.createSession(local, remote).orElseThrow().backendType(), "the pair is routed to TCP from now on");
        // and explain says so, with XGMI's reason: the IPC handle did not open here
        PathExplanation why = x.explain(local, remote);
        assertEquals(BackendType.TCP, why.chosen(), why.toString());
        assertTrue(why.staged(), why.toString());
        assertEquals(PathExplanation.Reason.IPC_HANDLE_NOT_OPENED, why.refusal(BackendType.XGMI).reason(), why.toString());
        assertTrue(why.refusal(BackendType.XGMI).message().contains("CUDA_ERROR_PEER_ACCESS_UNSUPPORTED") && why.slower(), why.toString());
        // and reads come back the same way
        assertEquals("FILLED", ask(cmd, out, "FILL 5"));
        ok(x.read(local, 0, remote, 0, cap, x.allocateTransferUid()), "read over TCP");
        MemorySegment childPattern = arena.allocate(cap, 4096);
        GpuPattern.fill(childPattern, 5);
        assertEquals(-1, download(arena, a, 0, cap).mismatch(childPattern));
      }
    } finally {
      device.failIpcOpens(null);
      cmd.close();
      if (!child.waitFor(60, TimeUnit.SECONDS)) child.destroyForcibly();
    }
  }

  @Override
  GpuRuntime runtime() {
    return device;
  }

  @Override
  long maxSingle() {
    return 64 * MIB;
  }

  @Override
  long childBuffer() {
    return 128 * MIB;
  }

  @Override
  long batchStride() {
    return 4096 + 16;
  }

  @Override
  List<String> childRuntimeArgs() {
    return List.of(MODE, dir.toString());
  }
}
