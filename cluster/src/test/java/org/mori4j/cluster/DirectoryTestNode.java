package org.mori4j.cluster;

import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.TransferStatus;

/**
 * A directory member in its own JVM for {@link DirectoryCrashTest}: joins the cluster at {@code --seed},
 * publishes a region filled from {@code --pattern} under {@code --publish}, looks up {@code --read} and reads it
 * through its engine, checking it against {@code --read-pattern}, then waits until its stdin closes (or it is
 * killed). It prints {@code PUBLISHED <name>}, {@code READ-OK <name>} or {@code FAILED <why>}.
 */
public final class DirectoryTestNode {
  private static final Duration LIMIT = Duration.ofSeconds(60);

  public static void main(String[] args) throws Exception {
    String seed = null, key = null, publish = null, read = null;
    int size = 1 << 18, pattern = 0, readPattern = 0;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--seed" -> seed = args[++i];
        case "--key" -> key = args[++i];
        case "--publish" -> publish = args[++i];
        case "--pattern" -> pattern = Integer.parseInt(args[++i]);
        case "--read" -> read = args[++i];
        case "--read-pattern" -> readPattern = Integer.parseInt(args[++i]);
        case "--size" -> size = Integer.parseInt(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (seed == null || key == null || publish == null || read == null)
      throw new IllegalArgumentException("--seed, --key, --publish and --read are required");
    ActorSystem<Void> sys = ClusterSettings.builder().host("127.0.0.1").port(0).seed(seed).build().startSystem();
    try (Arena arena = Arena.ofShared(); IoEngine engine = IoEngine.create(sys, key, IoEngineConfig.loopback())) {
      engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      ClusterEngine.start(engine);
      DescriptorDirectory dir = DescriptorDirectory.start(engine);
      long deadline = System.nanoTime() + LIMIT.toNanos();
      while (Cluster.get(sys).selfMember().status() != MemberStatus.up()) {
        if (System.nanoTime() > deadline) fail("not Up within " + LIMIT);
        Thread.sleep(50);
      }
      MemorySegment own = arena.allocate(size, 8);
      fill(own, pattern);
      dir.publish(publish, engine.registerMemory(own)).toCompletableFuture().get(LIMIT.toSeconds(), TimeUnit.SECONDS);
      System.out.println("PUBLISHED " + publish);

      MemoryDesc remote = dir.lookup(read, LIMIT).toCompletableFuture().get(LIMIT.toSeconds() * 2, TimeUnit.SECONDS);
      MemorySegment expected = arena.allocate(remote.size(), 8);
      fill(expected, readPattern);
      MemorySegment got = arena.allocate(remote.size(), 8);
      MemoryDesc local = engine.registerMemory(got);
      TransferStatus s;
      do {
        // the owner's engine is registered by ClusterEngine on its own schedule; until then the read fails fast
        s = engine.read(local, 0, remote, 0, remote.size(), engine.allocateTransferUid());
        s.await(LIMIT);
        if (!s.succeeded()) Thread.sleep(100);
      } while (!s.succeeded() && System.nanoTime() < deadline + LIMIT.toNanos());
      if (!s.succeeded()) fail("read of " + read + ": " + s.code() + " " + s.message());
      if (got.mismatch(expected) != -1) fail("read of " + read + ": bytes differ at " + got.mismatch(expected));
      System.out.println("READ-OK " + read);
      System.out.flush();
      InputStream in = System.in;
      while (in.read() >= 0) {
        // wait for the test to close stdin (or kill this process)
      }
    } catch (Exception e) {
      fail(e.toString());
    } finally {
      sys.terminate();
    }
  }

  static void fill(MemorySegment seg, int seed) {
    java.util.Random r = new java.util.Random(seed);
    for (long o = 0; o + 8 <= seg.byteSize(); o += 8) seg.set(ValueLayout.JAVA_LONG, o, r.nextLong());
  }

  private static void fail(String why) {
    System.out.println("FAILED " + why);
    System.out.flush();
    Runtime.getRuntime().halt(1);
  }
}
