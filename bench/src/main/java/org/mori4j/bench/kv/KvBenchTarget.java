package org.mori4j.bench.kv;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.kv.KvCache;
import org.mori4j.io.kv.KvCacheLayout;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;

/**
 * kv-bench's other process: an engine with one KV cache and one contiguous region (host memory over TCP, or
 * device memory of one GPU over XGMI), both described on stdout ({@code READY <engine> <cache> <region>},
 * base64), the initiator's engine registered from stdin ({@code ENGINE <desc>}), and every landed range printed
 * as {@code LANDED <request> <from> <to> <nanoTime> <lastWriteNanoTime>} (the second: when this engine's backend
 * last recorded a write, answered per uid to {@code WROTE <uid>}; System.nanoTime is CLOCK_MONOTONIC on Linux, one clock for
 * both processes of a host). For the byte check it fills blocks from a seed ({@code FILL <seed> <blocks>},
 * answered {@code FILLED}) and answers the CRC32C of blocks ({@code SUM <blocks>}, answered {@code SUM <crc>}).
 * Exits when stdin closes. Arguments: model, block tokens, blocks, contiguous bytes, then {@code tcp} or
 * {@code xgmi <device>}; the engine's key from the system property {@link #KEY_PROPERTY} (default
 * {@code kv-bench-target}).
 */
public final class KvBenchTarget {
  static final String KEY_PROPERTY = "mori4j.kv-bench.target-key";

  public static void main(String[] args) throws Exception {
    KvModel model = KvModel.preset(args[0]);
    int blockTokens = Integer.parseInt(args[1]);
    int blocks = Integer.parseInt(args[2]);
    long contiguous = Long.parseLong(args[3]);
    boolean xgmi = args.length > 4 && args[4].equals("xgmi");
    int device = xgmi ? Integer.parseInt(args[5]) : -1;
    Base64.Encoder b64 = Base64.getEncoder();
    KvCacheLayout layout = model.layout(blockTokens, blocks);
    GpuRuntime gpu = xgmi ? KvBenchCommand.gpuRuntime() : null;
    // memory first: the engine closes (dropping its registrations) before the memory is freed
    try (Arena arena = Arena.ofShared();
         KvBenchMemory mem = xgmi ? KvBenchMemory.gpu(layout, gpu, device) : KvBenchMemory.host(layout, arena);
         DeviceBuffer gpuRegion = xgmi ? gpu.allocDevice(device, contiguous) : null;
         IoEngine engine = IoEngine.create(System.getProperty(KEY_PROPERTY, "kv-bench-target"), IoEngineConfig.loopback())) {
      KvBenchCommand.createBackend(engine, xgmi);
      MemoryDesc region = xgmi ? engine.registerMemory(gpuRegion.address(), contiguous, device, MemoryLocationType.GPU)
          : engine.registerMemory(arena.allocate(contiguous, 4096));
      // when this engine's backend recorded each write (its I/O thread): the wire's end, before the KV endpoint's hop
      java.util.concurrent.ConcurrentHashMap<Long, Long> wrote = new java.util.concurrent.ConcurrentHashMap<>();
      java.util.concurrent.atomic.AtomicLong lastWrite = new java.util.concurrent.atomic.AtomicLong();
      try (AutoCloseable inbound = engine.onInboundLanded((from, uid) -> {
             long now = System.nanoTime();
             lastWrite.set(now);
             if (wrote.size() < 100_000) wrote.put(uid, now);
           });
           KvCache cache = mem.register(engine, "kv-bench");
           AutoCloseable sub = cache.subscribe(e -> {
             long now = System.nanoTime();
             System.out.println("LANDED " + e.requestId() + " " + e.fromLayer() + " " + e.toLayer() + " " + now + " " + lastWrite.get());
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
            wrote.clear();
          } else if (l.startsWith("WROTE ")) {
            Long t = wrote.get(Long.parseLong(l.substring(6).trim()));
            System.out.println("WROTE " + (t == null ? -1 : t));
            System.out.flush();
          } else if (l.startsWith("FILL ")) {
            String[] f = l.split(" ");
            KvBenchCheck.fill(mem, KvBenchCheck.parseCsv(f[2]), Long.parseLong(f[1]));
            System.out.println("FILLED");
            System.out.flush();
          } else if (l.startsWith("SUM ")) {
            System.out.println("SUM " + KvBenchCheck.sum(mem, KvBenchCheck.parseCsv(l.substring(4).trim())));
            System.out.flush();
          }
        }
      }
    }
  }
}
