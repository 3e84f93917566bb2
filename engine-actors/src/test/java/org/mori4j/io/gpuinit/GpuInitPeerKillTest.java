package org.mori4j.io.gpuinit;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.io.gpuinit.GpuQueueLayout.*;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.gpuinit.HostDevice.Cqe;
import org.mori4j.io.gpuinit.HostDevice.Wr;

/**
 * A peer JVM SIGKILLed while an endpoint streams writes to it: the stream ends with one RETRY_EXC_ERR and then flushed
 * completions, within seconds, never a hang.
 */
class GpuInitPeerKillTest {
  @Test
  void aPeerKilledMidStreamGivesRetryExceededThenFlushes() throws Exception {
    String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
    List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx256m"));
    for (String p : List.of("mori4j.test.backend", "mori4j.rdma.provider")) {
      String v = System.getProperty(p);
      if (v != null) cmd.add("-D" + p + "=" + v);
    }
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), GpuInitHostPeerMain.class.getName()));
    Process child = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    try (Arena arena = Arena.ofShared(); IoEngine a = IoEngine.create("gpuinit-killer-" + ProcessHandle.current().pid(), IoEngineConfig.loopback())) {
      GpuInitBed.backend(a);
      BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
      List<String> seen = Collections.synchronizedList(new ArrayList<>());
      // read on another thread so that a child that hangs without printing cannot hang the test
      CompletableFuture<String> readyLine = CompletableFuture.supplyAsync(() -> {
        try {
          for (String line; seen.size() < 500 && (line = out.readLine()) != null; ) {
            seen.add(line);
            if (line.startsWith("READY ")) return line;
          }
        } catch (IOException e) {
          seen.add("(" + e + ")");
        }
        return null;
      });
      String ready;
      try {
        ready = readyLine.get(60, TimeUnit.SECONDS);
      } catch (TimeoutException e) {
        ready = null;
      }
      assertNotNull(ready, "child not ready within 60 s: " + seen);
      Thread.ofPlatform().daemon().start(() -> {
        try {
          while (out.readLine() != null) {
            // keep the pipe empty
          }
        } catch (IOException ignored) {
          // child gone
        }
      });
      HexFormat hex = HexFormat.of();
      String[] w = ready.split(" ");
      EngineDesc peer = EngineDesc.fromBytes(hex.parseHex(w[1]));
      EndpointHandle handle = EndpointHandle.fromBytes(hex.parseHex(w[2]));
      RdmaMemoryRegion far = RdmaMemoryRegion.fromBytes(hex.parseHex(w[3]));
      a.registerRemoteEngine(peer);
      try (RdmaDeviceContext ctx = RdmaDeviceContext.open(a, GpuInitBed.settings(a))) {
        RdmaEndpoint ep = ctx.createEndpoint(new RdmaEndpointConfig(false, -1, 64, 128, 0));
        ctx.connectEndpoint(ep, handle);
        MemorySegment src = arena.allocate(1 << 16, 4096);
        RdmaMemoryRegion ms = ctx.registerMemoryRegion(src);
        HostDevice d = new HostDevice(ep);
        d.post(Wr.write(src.address(), ms.lkey(), far.address(), far.rkey(), 4096, FLAG_SIGNALED, 0));
        assertEquals(WC_SUCCESS, d.awaitCqe().status(), "a write reaches the child");
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong posted = new AtomicLong(1);
        Thread poster = Thread.ofPlatform().start(() -> {
          for (int i = 1; i <= 50_000 && !stop.get(); i++) {
            d.post(Wr.write(src.address(), ms.lkey(), far.address(), far.rkey(), 1 << 16, FLAG_SIGNALED, i));
            posted.set(i + 1);
          }
        });
        Thread.sleep(50);
        long t0 = System.nanoTime();
        child.destroyForcibly(); // SIGKILL
        Cqe first = null;
        for (int i = 0; i < 50_000 && first == null; i++) {
          Cqe e = d.awaitCqe();
          if (e.status() != WC_SUCCESS) first = e;
        }
        long took = (System.nanoTime() - t0) / 1_000_000;
        stop.set(true);
        poster.join(20_000);
        assertNotNull(first);
        assertEquals(WC_RETRY_EXC_ERR, first.status(), first.toString());
        Duration bound = "rdma".equals(System.getProperty("mori4j.test.backend")) ? Duration.ofSeconds(15) : Duration.ofSeconds(8);
        assertTrue(took < bound.toMillis(), "RETRY_EXC_ERR within " + bound.toSeconds() + " s of the kill: " + took + " ms");
        long remaining = posted.get() - d.get(CTRL_CQ_POLL_IDX);
        for (long k = 0; k < remaining; k++) assertEquals(WC_WR_FLUSH_ERR, d.awaitCqe().status());
        assertEquals(RdmaEndpoint.State.ERROR, ep.state());
        assertFalse(ep.errors().isEmpty());
      }
    } finally {
      child.destroyForcibly();
      child.waitFor(20, TimeUnit.SECONDS);
    }
  }
}
