package org.mori4j.bench.kv;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.kv.KvCache;
import org.mori4j.io.kv.KvCacheLayout;

/**
 * kv-bench's other process: an engine with one KV cache and one contiguous region, both described on stdout
 * ({@code READY <engine> <cache> <region>}, base64), the initiator's engine registered from stdin
 * ({@code ENGINE <desc>}), and every landed range printed as {@code LANDED <request> <from> <to> <nanoTime>}
 * (System.nanoTime is CLOCK_MONOTONIC on Linux, one clock for both processes of a host). For the byte check it
 * fills blocks from a seed ({@code FILL <seed> <blocks>}, answered {@code FILLED}) and answers the CRC32C of
 * blocks ({@code SUM <blocks>}, answered {@code SUM <crc>}). Exits when stdin closes.
 */
public final class KvBenchTarget {
  public static void main(String[] args) throws Exception {
    KvModel model = KvModel.preset(args[0]);
    int blockTokens = Integer.parseInt(args[1]);
    int blocks = Integer.parseInt(args[2]);
    long contiguous = Long.parseLong(args[3]);
    Base64.Encoder b64 = Base64.getEncoder();
    try (Arena arena = Arena.ofShared(); IoEngine engine = IoEngine.create("kv-bench-target", IoEngineConfig.loopback())) {
      engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      KvCacheLayout layout = model.layout(blockTokens, blocks);
      List<MemorySegment> bufs = new ArrayList<>();
      for (int i = 0; i < layout.buffers(); i++) bufs.add(arena.allocate(layout.bufferBytes(), 4096));
      MemoryDesc region = engine.registerMemory(arena.allocate(contiguous, 4096));
      try (KvCache cache = KvCache.create(engine, "kv-bench", layout, bufs);
           AutoCloseable sub = cache.subscribe(e -> {
             long now = System.nanoTime();
             System.out.println("LANDED " + e.requestId() + " " + e.fromLayer() + " " + e.toLayer() + " " + now);
           })) {
        System.out.println("READY " + b64.encodeToString(engine.engineDesc().toBytes()) + " " + b64.encodeToString(cache.desc().toBytes())
            + " " + b64.encodeToString(region.toBytes()));
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String l; (l = in.readLine()) != null; ) {
          if (l.startsWith("ENGINE ")) {
            engine.registerRemoteEngine(EngineDesc.fromBytes(Base64.getDecoder().decode(l.substring(7).trim())));
            System.out.println("REGISTERED");
            System.out.flush();
          } else if (l.startsWith("FORGET ")) {
            cache.forget(l.substring(7).trim());
          } else if (l.startsWith("FILL ")) {
            String[] f = l.split(" ");
            KvBenchCheck.fill(layout, bufs, KvBenchCheck.parseCsv(f[2]), Long.parseLong(f[1]));
            System.out.println("FILLED");
            System.out.flush();
          } else if (l.startsWith("SUM ")) {
            System.out.println("SUM " + KvBenchCheck.sum(layout, bufs, KvBenchCheck.parseCsv(l.substring(4).trim())));
            System.out.flush();
          }
        }
      }
    }
  }
}
