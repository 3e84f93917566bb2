package org.mori4j.cluster;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.kv.KvCache;
import org.mori4j.io.kv.KvCacheLayout;

/**
 * A prefill member in its own JVM for {@link KvClusterTest}: joins the cluster at {@code --seed}, opens a KV cache
 * of {@link #layout()} filled by {@link #fill}, publishes it as {@code --name}, prints {@code PUBLISHED <name>} and
 * waits until stdin closes or it is killed.
 */
public final class KvTestNode {
  static KvCacheLayout layout() {
    return KvCacheLayout.perLayer(8, 2, 256, 32 * 1024);
  }

  static void fill(MemorySegment s, int buffer) {
    for (long i = 0; i < s.byteSize(); i += 8) s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, (i * 0x9E3779B97F4A7C15L) ^ buffer);
  }

  public static void main(String[] args) throws Exception {
    String seed = args[0], key = args[1], name = args[2];
    ActorSystem<Void> sys = ClusterSettings.builder().host("127.0.0.1").port(0).seed(seed).build().startSystem();
    try (Arena arena = Arena.ofShared(); IoEngine engine = IoEngine.create(sys, key, IoEngineConfig.loopback())) {
      engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      ClusterEngine.start(engine);
      KvCacheDirectory kv = new KvCacheDirectory(DescriptorDirectory.start(engine), sys);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (Cluster.get(sys).selfMember().status() != MemberStatus.up()) {
        if (System.nanoTime() > deadline) throw new IllegalStateException("not Up within 60 s");
        Thread.sleep(50);
      }
      List<MemorySegment> bufs = new ArrayList<>();
      for (int i = 0; i < layout().buffers(); i++) {
        MemorySegment s = arena.allocate(layout().bufferBytes(), 4096);
        fill(s, i);
        bufs.add(s);
      }
      try (KvCache cache = KvCache.create(engine, name, layout(), bufs)) {
        kv.publish(cache).toCompletableFuture().get(60, TimeUnit.SECONDS);
        System.out.println("PUBLISHED " + name);
        System.out.flush();
        while (System.in.read() >= 0) {
          // wait for the test to close stdin (or kill this process)
        }
      }
    } catch (Exception e) {
      System.out.println("FAILED " + e);
      System.out.flush();
    } finally {
      sys.terminate();
      sys.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    Duration.ZERO.isZero();
  }
}
