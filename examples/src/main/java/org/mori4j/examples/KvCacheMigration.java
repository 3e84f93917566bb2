package org.mori4j.examples;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.typed.Cluster;
import org.mori4j.cluster.ClusterEngine;
import org.mori4j.cluster.ClusterSettings;
import org.mori4j.cluster.DescriptorDirectory;
import org.mori4j.cluster.KvCacheDirectory;
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
 * Disaggregated prefill and decode in two JVMs of one cluster on 127.0.0.1. This process is the decode node and
 * starts the prefill node as a child (same java, same class path). Prefill keeps a paged KV cache in vLLM's
 * layout (one {@code [K|V, blocks, ...]} buffer per layer), "computes" a request into blocks scattered over its
 * free list (bytes derived from (layer, tensor, block), so anyone can check them) and publishes the cache by
 * name in the cluster's directory; it tells decode the request's block table. Decode keeps its cache in another
 * layout (K and V in buffers of their own per layer, as SGLang does), looks the prefill cache up by name, takes
 * blocks from its own shuffled free list, pulls the request's blocks into them with one {@link KvCache#pull}
 * (coalesced, one batch per buffer pair), waits until every layer landed, and checks every byte: each slot holds
 * its prefill block's bytes, and every block it did not pull into is still untouched. Exits non-zero if any check
 * fails.
 */
public final class KvCacheMigration {
  private KvCacheMigration() {}

  static final int LAYERS = 8;
  static final int TENSORS = 2;
  static final long BLOCK_BYTES = 16 * 8 * 128 * 2; // 16 tokens x 8 KV heads x 128 x bf16, as Llama-3
  static final int PREFILL_BLOCKS = 96;
  static final int DECODE_BLOCKS = 128;
  static final int REQUEST_BLOCKS = 40; // a 640-token request
  static final String CACHE = "prefill-0";
  static final Duration LIMIT = Duration.ofSeconds(60);

  /** The bytes prefill computed for one slot: a function of (layer, tensor, prefill block). */
  static void slotBytes(MemorySegment seg, long at, int layer, int tensor, int block) {
    Random r = new Random(((long) layer << 40) ^ ((long) tensor << 32) ^ block ^ 0x6b76L);
    for (long o = 0; o < BLOCK_BYTES; o += 8) seg.set(ValueLayout.JAVA_LONG_UNALIGNED, at + o, r.nextLong());
  }

  /** One cluster member with an engine, its directories and a KV cache. */
  static final class Node implements AutoCloseable {
    final ActorSystem<Void> system;
    final IoEngine engine;
    final KvCacheDirectory caches;
    final Arena arena = Arena.ofShared();
    final List<MemorySegment> buffers = new ArrayList<>();
    final KvCache cache;

    Node(String name, String seed, String cacheName, KvCacheLayout layout) {
      ClusterSettings.Builder b = ClusterSettings.builder().host("127.0.0.1").port(0);
      if (seed != null) b.seed(seed);
      system = b.build().startSystem();
      engine = IoEngine.create(system, name, IoEngineConfig.loopback());
      engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      ClusterEngine.start(engine); // the members' engines register each other
      caches = new KvCacheDirectory(DescriptorDirectory.start(engine), system);
      for (int i = 0; i < layout.buffers(); i++) buffers.add(arena.allocate(layout.bufferBytes(), 4096));
      cache = KvCache.create(engine, cacheName, layout, buffers);
    }

    int port() {
      return Cluster.get(system).selfMember().address().getPort().get();
    }

    @Override
    public void close() throws Exception {
      cache.close();
      engine.close();
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      arena.close();
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length == 2 && args[0].equals("--prefill")) {
      try {
        runPrefill(args[1]);
      } catch (Exception e) {
        System.out.println("PREFILL FAILED " + e);
        Runtime.getRuntime().halt(1);
      }
    } else if (args.length == 0) runDecode();
    else throw new IllegalArgumentException("usage: KvCacheMigration   (or, for the prefill node it starts: --prefill <seed host:port>)");
  }

  /** n blocks from a shuffled free list of {@code capacity}. */
  static int[] allocate(int capacity, int n, long seed) {
    List<Integer> free = new ArrayList<>();
    for (int i = 0; i < capacity; i++) free.add(i);
    Collections.shuffle(free, new Random(seed));
    return free.subList(0, n).stream().mapToInt(Integer::intValue).toArray();
  }

  // ---- the prefill node (child JVM) ----

  static void runPrefill(String seed) throws Exception {
    KvCacheLayout layout = KvCacheLayout.perLayer(LAYERS, TENSORS, PREFILL_BLOCKS, BLOCK_BYTES);
    try (Node node = new Node("prefill", seed, CACHE, layout)) {
      int[] blocks = allocate(PREFILL_BLOCKS, REQUEST_BLOCKS, 1);
      for (int l = 0; l < LAYERS; l++)
        for (int t = 0; t < TENSORS; t++)
          for (int b : blocks) slotBytes(node.buffers.get(layout.bufferOf(l, t)), layout.offset(l, t, b), l, t, b);
      node.caches.publish(node.cache).toCompletableFuture().get(LIMIT.toSeconds(), TimeUnit.SECONDS);
      StringBuilder table = new StringBuilder();
      for (int b : blocks) table.append(table.isEmpty() ? "" : ",").append(b);
      System.out.println("PREFILL READY req-1 " + table);
      System.out.flush();
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line; (line = in.readLine()) != null && !line.equals("exit"); ) {
        // decode's pull reads this cache; nothing to do here until it says exit
      }
    }
    System.out.println("PREFILL EXIT");
  }

  // ---- the decode node (this JVM) ----

  static void runDecode() throws Exception {
    KvCacheLayout layout = KvCacheLayout.perLayerTensor(LAYERS, TENSORS, DECODE_BLOCKS, BLOCK_BYTES);
    Process prefill = null;
    try (Node node = new Node("decode", null, "decode-0", layout)) {
      prefill = spawnPrefill("127.0.0.1:" + node.port());
      BlockingQueue<String> lines = follow(prefill);
      String ready = await(lines, prefill, "PREFILL READY");
      String request = ready.split(" ")[2];
      int[] prefillBlocks = Arrays.stream(ready.split(" ")[3].split(",")).mapToInt(Integer::parseInt).toArray();
      System.out.printf("decode: prefill computed %s into %d of its blocks (%s ...)%n", request, prefillBlocks.length,
          Arrays.toString(Arrays.copyOf(prefillBlocks, 6)).replace("]", ""));

      KvCacheDesc remote = node.caches.lookup(CACHE, LIMIT).toCompletableFuture().get(LIMIT.toSeconds() * 2, TimeUnit.SECONDS);
      System.out.printf("decode: looked up '%s' by name: engine '%s', %d buffers, %s%n", remote.name(), remote.engineKey(),
          remote.buffers().size(), remote.layout());
      int[] mine = allocate(DECODE_BLOCKS, prefillBlocks.length, 2);
      KvMigration m = pullWhenReachable(node.cache, request, prefillBlocks, remote, mine);
      if (!node.cache.awaitLanded(m.requestId(), 0, LAYERS, LIMIT)) throw new IllegalStateException("the layers of " + m.requestId() + " never landed");
      System.out.printf("decode: pulled %s: %d bytes in %d transfers (%d block slots), all %d layers landed%n", m.requestId(), m.bytes(),
          m.transfers(), m.blockSlots(), LAYERS);
      check(node, layout, prefillBlocks, mine);
      System.out.printf("decode: every byte checked: %d slots hold their prefill block's bytes, the other %d blocks untouched%n",
          LAYERS * TENSORS * mine.length, DECODE_BLOCKS - mine.length);
      try (Writer w = new OutputStreamWriter(prefill.getOutputStream(), StandardCharsets.UTF_8)) {
        w.write("exit\n");
      }
      await(lines, prefill, "PREFILL EXIT");
      if (!prefill.waitFor(30, TimeUnit.SECONDS) || prefill.exitValue() != 0) throw new IllegalStateException("the prefill node did not exit cleanly");
      System.out.println("KvCacheMigration: OK");
    } finally {
      if (prefill != null) prefill.destroyForcibly();
    }
  }

  /** Pulls, retrying (a new request id each time) while the prefill engine is not yet registered here. */
  static KvMigration pullWhenReachable(KvCache cache, String request, int[] src, KvCacheDesc remote, int[] dst) throws InterruptedException {
    long deadline = System.nanoTime() + LIMIT.toNanos();
    for (int attempt = 0; ; attempt++) {
      KvMigration m = cache.pull(request + (attempt == 0 ? "" : "-retry-" + attempt), src, remote, dst);
      if (!m.await(LIMIT)) throw new IllegalStateException("pull of " + m.requestId() + " still running after " + LIMIT);
      if (m.succeeded()) return m;
      // ClusterEngine registers a new member's engine within a second or two; refused arguments are a real failure
      if (m.code() == StatusCode.ERR_INVALID_ARGS || System.nanoTime() > deadline) throw new IllegalStateException(m.code() + " " + m.message());
      if (attempt == 0) System.out.println("decode: first pull " + m.code() + " (" + m.message() + "); retrying while the engines register each other");
      cache.forget(m.requestId());
      Thread.sleep(200);
    }
  }

  static void check(Node node, KvCacheLayout layout, int[] prefillBlocks, int[] mine) {
    MemorySegment want = node.arena.allocate(BLOCK_BYTES, 8);
    boolean[] pulledInto = new boolean[DECODE_BLOCKS];
    for (int b : mine) pulledInto[b] = true;
    for (int l = 0; l < LAYERS; l++)
      for (int t = 0; t < TENSORS; t++) {
        MemorySegment buf = node.buffers.get(layout.bufferOf(l, t));
        for (int i = 0; i < mine.length; i++) {
          slotBytes(want, 0, l, t, prefillBlocks[i]);
          long at = layout.offset(l, t, mine[i]);
          long diff = MemorySegment.mismatch(want, 0, BLOCK_BYTES, buf, at, at + BLOCK_BYTES);
          if (diff != -1)
            throw new IllegalStateException("layer " + l + " tensor " + t + ": decode block " + mine[i] + " (from prefill block " + prefillBlocks[i]
                + ") differs at byte " + diff);
        }
        for (int b = 0; b < DECODE_BLOCKS; b++) {
          if (pulledInto[b]) continue;
          long at = layout.offset(l, t, b);
          for (long o = 0; o < BLOCK_BYTES; o += 8)
            if (buf.get(ValueLayout.JAVA_LONG_UNALIGNED, at + o) != 0)
              throw new IllegalStateException("layer " + l + " tensor " + t + ": decode block " + b + " was not pulled into but changed at byte " + o);
        }
      }
  }

  static Process spawnPrefill(String seed) throws Exception {
    String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
    List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-Xmx256m"));
    String logConfig = System.getProperty("logback.configurationFile");
    if (logConfig != null) cmd.add("-Dlogback.configurationFile=" + logConfig);
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), KvCacheMigration.class.getName(), "--prefill", seed));
    return new ProcessBuilder(cmd).redirectErrorStream(true).start();
  }

  /** The child's lines starting with PREFILL, queued; the rest echoed. */
  static BlockingQueue<String> follow(Process p) {
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    Thread.ofPlatform().daemon().name("prefill-output").start(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        for (String l; (l = r.readLine()) != null; ) {
          if (l.startsWith("PREFILL ")) lines.add(l);
          else System.out.println("  [prefill] " + l);
        }
      } catch (java.io.IOException gone) {
        // the process ended
      }
    });
    return lines;
  }

  static String await(BlockingQueue<String> lines, Process p, String prefix) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    while (System.nanoTime() < deadline) {
      String l = lines.poll(1, TimeUnit.SECONDS);
      if (l == null) {
        if (!p.isAlive()) throw new IllegalStateException("the prefill node exited with " + p.exitValue() + " before '" + prefix + "'");
        continue;
      }
      if (l.startsWith("PREFILL FAILED")) throw new IllegalStateException(l);
      if (l.startsWith(prefix)) return l;
    }
    throw new IllegalStateException("the prefill node printed no '" + prefix + "' line within 120 s");
  }
}
