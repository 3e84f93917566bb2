package org.mori4j.bench.kv;

import java.lang.foreign.Arena;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.kv.KvCache;
import org.mori4j.io.kv.KvCacheDesc;
import org.mori4j.io.kv.KvCacheLayout;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;

/**
 * The two sides of a kv-bench run and everything they own, closed in reverse order: this side's engine, cache
 * memory and contiguous region; the receiver either a child JVM ({@link KvBenchTarget}: TCP, or XGMI across two
 * processes through IPC handles) or, for single-process XGMI, a second engine with its cache in this JVM.
 */
final class KvBenchSetup implements AutoCloseable {
  final IoEngine engine;
  final KvBenchMemory memory;
  final MemoryDesc region;
  final KvCacheDesc remote;
  final MemoryDesc remoteRegion;
  final KvBenchReceiver receiver;
  final String where;
  private final Deque<AutoCloseable> owned = new ArrayDeque<>();
  /** JVM options added to each target JVM's command line, space-separated (none by default). */
  static final String CHILD_OPTIONS_PROPERTY = "mori4j.kv-bench.target-jvm-options";

  /** {@code gpu} null: TCP over host memory; else XGMI from {@code device} to {@code targetDevice}. */
  KvBenchSetup(KvModel model, int blockTokens, int capacity, long contiguous, GpuRuntime gpu, int device, int targetDevice,
               boolean singleProcess) throws Exception {
    this(model, blockTokens, capacity, contiguous, gpu, device, targetDevice, singleProcess, "");
  }

  /**
   * As above, the engines' keys ending in {@code suffix}: several setups in one JVM (kv-bench's pairs) need keys of
   * their own, since a JVM opens one engine per key.
   */
  KvBenchSetup(KvModel model, int blockTokens, int capacity, long contiguous, GpuRuntime gpu, int device, int targetDevice,
               boolean singleProcess, String suffix) throws Exception {
    boolean xgmi = gpu != null;
    KvCacheLayout layout = model.layout(blockTokens, capacity);
    try {
      // memory before the engines, so that each engine closes (and drops its registrations) before its memory is freed
      Arena arena = own(Arena.ofShared());
      memory = own(xgmi ? KvBenchMemory.gpu(layout, gpu, device) : KvBenchMemory.host(layout, arena));
      DeviceBuffer r = xgmi ? own(gpu.allocDevice(device, contiguous)) : null;
      java.lang.foreign.MemorySegment hostRegion = xgmi ? null : arena.allocate(contiguous, 4096);
      engine = own(IoEngine.create("kv-bench-initiator" + suffix, IoEngineConfig.loopback()));
      KvBenchCommand.createBackend(engine, xgmi);
      region = xgmi ? engine.registerMemory(r.address(), contiguous, device, MemoryLocationType.GPU) : engine.registerMemory(hostRegion);
      if (xgmi && singleProcess) {
        KvBenchMemory targetMemory = own(KvBenchMemory.gpu(layout, gpu, targetDevice));
        DeviceBuffer tr = own(gpu.allocDevice(targetDevice, contiguous));
        IoEngine target = own(IoEngine.create("kv-bench-target" + suffix, IoEngineConfig.loopback()));
        KvBenchCommand.createBackend(target, true);
        remoteRegion = target.registerMemory(tr.address(), contiguous, targetDevice, MemoryLocationType.GPU);
        KvCache targetCache = own(targetMemory.register(target, "kv-bench"));
        receiver = own(new KvBenchReceiver.InProcess(targetCache, targetMemory));
        remote = targetCache.desc();
        engine.registerRemoteEngine(target.engineDesc());
        target.registerRemoteEngine(engine.engineDesc());
        where = "xgmi, GPU" + device + " -> GPU" + targetDevice + ", one process";
      } else {
        Process child = startChild(model, blockTokens, capacity, contiguous, "kv-bench-target" + suffix, xgmi ? new String[] {"xgmi", Integer.toString(targetDevice)} : new String[] {"tcp"});
        owned.push(() -> {
          child.destroy();
          if (!child.waitFor(30, TimeUnit.SECONDS)) child.destroyForcibly();
        });
        KvBenchLink link = own(new KvBenchLink(child));
        String[] ready = link.next("READY", 300).split(" ");
        EngineDesc remoteEngine = EngineDesc.fromBytes(Base64.getDecoder().decode(ready[1]));
        remote = KvCacheDesc.fromBytes(Base64.getDecoder().decode(ready[2]));
        remoteRegion = MemoryDesc.fromBytes(Base64.getDecoder().decode(ready[3]));
        engine.registerRemoteEngine(remoteEngine);
        link.send("ENGINE " + Base64.getEncoder().encodeToString(engine.engineDesc().toBytes()));
        link.next("REGISTERED", 60);
        receiver = link;
        where = xgmi ? "xgmi, GPU" + device + " -> GPU" + targetDevice + ", two processes" : "tcp, CPU memory, two JVMs on loopback";
      }
    } catch (Exception | Error e) {
      close();
      throw e;
    }
  }

  private <T extends AutoCloseable> T own(T t) {
    if (t != null) owned.push(t);
    return t;
  }

  private static Process startChild(KvModel m, int blockTokens, int capacity, long contiguous, String key, String[] backend) throws Exception {
    String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
    List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx512m", "-cp",
        System.getProperty("java.class.path"), KvBenchTarget.class.getName(), m.name(), Integer.toString(blockTokens), Integer.toString(capacity),
        Long.toString(contiguous)));
    cmd.addAll(List.of(backend));
    String runtime = System.getProperty("mori4j.gpu.runtime");
    if (runtime != null) cmd.add(3, "-Dmori4j.gpu.runtime=" + runtime); // before -cp
    cmd.add(3, "-D" + KvBenchTarget.KEY_PROPERTY + "=" + key);
    // extra JVM options for the target (tests: a short-lived child spends most of its CPU in the JIT)
    String extra = System.getProperty(CHILD_OPTIONS_PROPERTY, "").trim();
    if (!extra.isEmpty()) cmd.addAll(3, List.of(extra.split("\\s+")));
    return new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
  }

  @Override
  public void close() {
    RuntimeException first = null;
    while (!owned.isEmpty()) {
      try {
        owned.pop().close();
      } catch (Exception e) {
        if (first == null) first = new IllegalStateException("kv-bench: closing: " + e, e);
      }
    }
    if (first != null) throw first;
  }
}
