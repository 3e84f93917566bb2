package org.mori4j.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.Test;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.kv.KvCache;
import org.mori4j.io.kv.KvCacheDesc;
import org.mori4j.io.kv.KvCacheLayout;
import org.mori4j.io.kv.KvMigration;

/**
 * A decode member here and a prefill member ({@link KvTestNode}) in a child JVM: the KV cache is found by name
 * through the directory, a request's blocks are pulled and checked byte for byte, then the child is SIGKILLed
 * while a pull of the whole cache is in flight: that migration fails with {@code ERR_PEER_LOST} naming the request,
 * within the cluster's detection time (the TCP connection's loss is seen at once; the bound is the SBR's).
 */
class KvClusterTest {
  private static final Duration DETECTION_LIMIT = Duration.ofSeconds(30);

  @Test
  void aCacheFoundByNameIsPulledAndAKilledOwnerFailsTheMigrationWithPeerLost() throws Exception {
    String run = Long.toHexString(System.nanoTime());
    String name = "prefill-" + run;
    ActorSystem<Void> sys = ClusterSettings.builder().host("127.0.0.1").port(0).build().startSystem();
    Process child = null;
    try (Arena arena = Arena.ofShared(); IoEngine engine = IoEngine.create(sys, "decode-" + run, IoEngineConfig.loopback())) {
      engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      ClusterEngine.start(engine);
      KvCacheDirectory kv = new KvCacheDirectory(DescriptorDirectory.start(engine), sys);
      String seed = "127.0.0.1:" + Cluster.get(sys).selfMember().address().getPort().get();
      String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
      child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
          "-cp", System.getProperty("java.class.path"), KvTestNode.class.getName(), seed, "prefill-" + run, name)
          .redirectErrorStream(true).start();
      BlockingQueue<String> lines = new LinkedBlockingQueue<>();
      Process p = child;
      Thread reader = new Thread(() -> {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
          for (String l; (l = r.readLine()) != null; ) {
            if (l.startsWith("PUBLISHED") || l.startsWith("FAILED")) lines.add(l);
            if (l.contains(" WARN ") || l.contains(" ERROR ") || l.startsWith("FAILED")) System.out.println("[child] " + l);
          }
        } catch (java.io.IOException ignored) {
          // the child died: what the test does to it
        }
      }, "kv-child-output");
      reader.setDaemon(true);
      reader.start();
      assertEquals("PUBLISHED " + name, lines.poll(120, TimeUnit.SECONDS), "the child's publish");

      KvCacheDesc remote = kv.lookup(name, Duration.ofSeconds(60)).toCompletableFuture().get(90, TimeUnit.SECONDS);
      KvCacheLayout layout = KvTestNode.layout();
      assertEquals(layout, remote.layout());
      List<MemorySegment> bufs = new ArrayList<>();
      for (int i = 0; i < layout.buffers(); i++) bufs.add(arena.allocate(layout.bufferBytes(), 4096));
      try (KvCache local = KvCache.create(engine, "decode", layout, bufs)) {
        int[] src = {7, 8, 9, 100, 3, 255};
        int[] dst = {0, 1, 2, 50, 51, 52};
        KvMigration ok;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        int attempt = 0;
        do {
          // the owner's engine is registered by ClusterEngine on its own schedule; until then the pull fails fast
          ok = local.pull("req-ok-" + attempt++, src, remote, dst);
          assertTrue(ok.await(Duration.ofSeconds(30)));
          if (!ok.succeeded()) Thread.sleep(100);
        } while (!ok.succeeded() && System.nanoTime() < deadline);
        assertEquals(StatusCode.SUCCESS, ok.code(), ok.message());
        for (int l = 0; l < layout.layers(); l++)
          for (int t = 0; t < layout.tensorsPerLayer(); t++)
            for (int i = 0; i < src.length; i++) {
              MemorySegment want = arena.allocate(layout.bufferBytes(), 8);
              KvTestNode.fill(want, layout.bufferOf(l, t));
              long so = layout.offset(l, t, src[i]), d = layout.offset(l, t, dst[i]);
              assertEquals(-1, MemorySegment.mismatch(want, so, so + layout.blockBytes(), bufs.get(layout.bufferOf(l, t)), d, d + layout.blockBytes()),
                  "layer " + l + " tensor " + t + " block " + src[i] + " -> " + dst[i]);
            }

        int[] all = new int[layout.blocks()];
        for (int i = 0; i < all.length; i++) all[i] = i;
        KvMigration doomed = local.pull("req-doomed", all, remote, all);
        long killed = System.nanoTime();
        child.destroyForcibly(); // SIGKILL while 128 MiB are being read
        assertTrue(doomed.await(DETECTION_LIMIT), "the migration did not end within " + DETECTION_LIMIT);
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
        System.out.println("migration to the killed peer ended after " + tookMs + " ms: " + doomed.code() + " " + doomed.message());
        assertEquals(StatusCode.ERR_PEER_LOST, doomed.code(), doomed.message());
        assertTrue(doomed.message().contains("req-doomed"), doomed.message());
      }
    } finally {
      if (child != null) child.destroyForcibly();
      sys.terminate();
      sys.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }
}
