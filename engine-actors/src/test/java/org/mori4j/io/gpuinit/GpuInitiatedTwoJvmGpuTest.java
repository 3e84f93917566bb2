package org.mori4j.io.gpuinit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.mori4j.io.gpuinit.GpuQueueLayout.*;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.gpuinit.GpuInitTestRig.Cqe;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.gpu.KernelArgs;

/**
 * The device library between two JVMs: this one's endpoint on GPU 0, the peer's ({@link GpuInitPeerMain}) on GPU 1
 * (GPU 0 with one GPU). A kernel here posts 128 writes, rings and polls their CQEs; the peer's kernel verifies the
 * bytes on its GPU. Then a kernel posts writes one by one while the peer JVM is SIGKILLed: the kernel must see
 * RETRY_EXC_ERR, the host must report it, and nothing may hang. GPU machine only; skips elsewhere saying why.
 */
@Tag("gpu")
class GpuInitiatedTwoJvmGpuTest {
  static final int BUF = 1 << 20;

  @Test
  void writesAcrossJvmsLandAndAKilledPeerGivesRetryExceeded() throws Exception {
    GpuRuntime gpu = GpuRuntimes.select("auto");
    assumeTrue(gpu.available(), "no GPU runtime on this machine: " + gpu.version());
    int peerDevice = gpu.deviceCount() > 1 ? 1 : 0;
    HexFormat hex = HexFormat.of();
    String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
    Process child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Xmx512m", "-cp", System.getProperty("java.class.path"),
        GpuInitPeerMain.class.getName(), Integer.toString(peerDevice), Integer.toString(BUF)).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    try (IoEngine engine = IoEngine.create("gpuinit-parent", IoEngineConfig.loopback());
         GpuInitTestRig rig = new GpuInitTestRig(gpu, 0)) {
      BufferedReader from = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
      PrintWriter to = new PrintWriter(child.getOutputStream(), true, StandardCharsets.UTF_8);
      String[] ready = expect(from, "READY");
      engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      engine.registerRemoteEngine(EngineDesc.fromBytes(hex.parseHex(ready[1])));
      EndpointHandle peer = EndpointHandle.fromBytes(hex.parseHex(ready[2]));
      RdmaMemoryRegion peerMr = RdmaMemoryRegion.fromBytes(hex.parseHex(ready[3]));
      try (RdmaDeviceContext ctx = RdmaDeviceContext.open(engine)) {
        RdmaEndpoint ep = ctx.createEndpoint(RdmaEndpointConfig.gpu(0));
        ctx.connectEndpoint(ep, peer);
        to.println("PEER " + hex.formatHex(engine.engineDesc().toBytes()) + " " + hex.formatHex(ep.handle().toBytes()));
        String[] connected = expect(from, "CONNECTED");
        DeviceBuffer buf = rig.alloc(BUF);
        RdmaMemoryRegion mr = ctx.registerMemoryRegion(buf.address(), BUF, 0, MemoryLocationType.GPU, ACCESS_ALL);
        System.out.printf(Locale.ROOT, "gpuinit 2 JVMs: qpn %d (GPU 0, this JVM) <-> qpn %s (GPU %d, pid %d)%n", ep.qpn(), connected[2], peerDevice,
            child.pid());

        int threads = 128, bytes = 1000, seed = 11;
        rig.fill(buf.address(), (long) threads * bytes, seed);
        DeviceBuffer idx = rig.alloc(8L * threads), out = rig.alloc((long) CQE_BYTES * threads), ok = rig.alloc(8);
        assertTrue(rig.runAndWait("t_post", 4, 32, KernelArgs.of().pointer(ep.address()).i32(0).i32(1).i64(buf.address()).i32(mr.lkey())
            .i64(peerMr.address()).i32(peerMr.rkey()).i32(bytes).i32(FLAG_SIGNALED).pointer(idx.address()), 30_000));
        assertTrue(rig.runAndWait("t_poll", 1, 1, KernelArgs.of().pointer(ep.address()).i32(threads).pointer(out.address()).pointer(ok.address()), 60_000));
        List<Cqe> cqes = rig.cqes(out.address(), threads);
        for (Cqe c : cqes) assertEquals(WC_SUCCESS, c.status(), c.toString());
        to.println("CHECK " + (long) threads * bytes + " " + seed);
        assertEquals("0", expect(from, "CHECKED")[1], "bytes differ on the peer's GPU");
        System.out.println("gpuinit 2 JVMs: 128 warp-scope writes of 1000 B, 128 CQEs polled in the kernel, bytes exact on the peer's GPU");

        // a kernel keeps writing; the peer dies under it
        DeviceBuffer progress = rig.alloc(24);
        rig.launch("t_until_error", 1, 1, KernelArgs.of().pointer(ep.address()).i64(buf.address()).i32(mr.lkey()).i64(peerMr.address())
            .i32(peerMr.rkey()).i32(10_000_000).pointer(progress.address()));
        MemorySegment ctrl = MemorySegment.ofAddress(ep.address()).reinterpret(CTRL_BYTES);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while ((long) ctrl.get(ValueLayout.JAVA_LONG, CTRL_SQ_RETIRED) < 200 + threads && System.nanoTime() < deadline) Thread.sleep(1);
        long retiredAtKill = ctrl.get(ValueLayout.JAVA_LONG, CTRL_SQ_RETIRED);
        assertTrue(retiredAtKill >= 200 + threads, "the kernel's writes did not progress: sqRetired " + retiredAtKill);
        long killed = System.nanoTime();
        child.destroyForcibly(); // SIGKILL
        assertTrue(rig.await(60_000), "the kernel still runs 60 s after the peer was killed");
        double ms = (System.nanoTime() - killed) / 1e6;
        long[] pr = rig.longs(progress.address(), 3);
        assertEquals(WC_RETRY_EXC_ERR, (int) pr[1], "the kernel's error completion: " + statusName((int) pr[1]) + " after " + pr[0] + " writes");
        assertFalse(ep.errors().isEmpty(), "the host reports the error");
        System.out.printf(Locale.ROOT, "gpuinit 2 JVMs: peer SIGKILLed after %d writes retired; the kernel saw %s %.0f ms later (after %d successful "
            + "writes); host: %s%n", retiredAtKill, statusName((int) pr[1]), ms, pr[0], ep.errors().get(0));
        ep.close();
      }
    } finally {
      child.destroyForcibly();
      child.waitFor(10, TimeUnit.SECONDS);
    }
  }

  private static String[] expect(BufferedReader from, String word) throws Exception {
    String line;
    StringBuilder seen = new StringBuilder();
    while ((line = from.readLine()) != null) {
      if (line.startsWith(word + " ")) return line.split(" ");
      seen.append(line).append('\n');
    }
    throw new AssertionError("the peer JVM ended without " + word + ":\n" + seen);
  }
}
