package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.mori4j.io.internal.SettingReads;
import org.mori4j.io.kv.KvCache;
import org.mori4j.io.kv.KvCacheLayout;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.transport.xgmi.HostBackedGpuRuntime;

/**
 * One shape for "this engine cannot start with these settings": whichever section a refused value is in (engine,
 * poller, TCP, XGMI, RDMA, metrics, the standalone engine's own ActorSystem; KV at cache creation),
 * {@code IoEngine.create} throws {@code IoEngineException(ERR_INVALID_ARGS)} whose message names the engine, the key,
 * the environment variable reference.conf declares for it and the value, with the refusal as its cause. Values are
 * set as system properties (what {@code -D} does; the environment stays untouched) or as the application's
 * configuration. A real transport failure stays {@code ERR_TRANSPORT}:
 * {@code ControlErrorContractTest.engineOnAPortThatIsTakenFailsWithATransportErrorAndFreesItsKey}.
 */
class SettingRefusalTest {
  /** The start's refusal of {@code key} = {@code value}, with its environment variable {@code env} (null: none). */
  private static IoEngineException assertRefused(String engineKey, ThrowingCreate create, String key, String value, String env) {
    IoEngineException e = assertThrows(IoEngineException.class, create::create, key + " = " + value);
    assertEquals(StatusCode.ERR_INVALID_ARGS, e.code(), e.toString());
    String named = key + (env == null ? "" : " (" + env + ")") + " = '" + value + "'";
    assertTrue(e.getMessage().startsWith("cannot start engine '" + engineKey + "': " + named), e.getMessage());
    SettingReads.Refused cause = assertInstanceOf(SettingReads.Refused.class, e.getCause(), "the refusal is the cause");
    assertEquals(key, cause.key());
    return e;
  }

  @FunctionalInterface
  private interface ThrowingCreate {
    void create();
  }

  @ParameterizedTest(name = "{0} = {1}")
  @CsvSource(delimiter = '|', nullValues = "-", value = {
      "mori4j.engine.ask-timeout | soon | MORI_IO_ASK_TIMEOUT",
      "mori4j.engine.handshake-timeout | soon | -",
      "mori4j.engine.await-spin | -5us | MORI_IO_AWAIT_SPIN",
      "mori4j.engine.await-spin | soon | MORI_IO_AWAIT_SPIN",
      "mori4j.engine.system-name | my engines | -",
      "mori4j.engine.lost-peers-remembered | 0 | -",
      "mori4j.engine.transfer-deadline | -1s | MORI4J_TRANSFER_DEADLINE",
      "mori4j.engine.transfer-deadline | soon | MORI4J_TRANSFER_DEADLINE",
      "mori4j.engine.peer-liveness-probe | 0s | MORI4J_PEER_LIVENESS_PROBE",
      "mori4j.engine.peer-liveness-probe | often | MORI4J_PEER_LIVENESS_PROBE",
      "mori4j.poller.spin | soon | MORI_IO_POLLER_SPIN",
      "mori4j.poller.yield | soon | MORI_IO_POLLER_YIELD",
      "mori4j.poller.park-max | soon | -",
      "mori4j.tcp.connections-per-peer | 0 | MORI_IO_TCP_CONNECTIONS",
      "mori4j.tcp.connections-per-peer | 65 | MORI_IO_TCP_CONNECTIONS",
      "mori4j.tcp.connections-per-peer | two | MORI_IO_TCP_CONNECTIONS",
      "mori4j.tcp.io-threads | 0 | MORI_IO_TCP_IO_THREADS",
      "mori4j.tcp.stripe-threshold | 1KiB | MORI_IO_TCP_STRIPE_THRESHOLD",
      "mori4j.tcp.socket-buffer | -1 | MORI_IO_TCP_SOCKET_BUFFER",
      "mori4j.tcp.peer-timeout | 0s | MORI_IO_TCP_PEER_TIMEOUT",
      "mori4j.tcp.connect-timeout | 0s | -",
      "mori4j.tcp.enable-notification | sometimes | MORI_IO_ENABLE_NOTIFICATION",
      "mori4j.tcp.port | any | MORI_IO_TCP_PORT",
      "mori4j.tcp.port | -1 | MORI_IO_TCP_PORT",
      "mori4j.tcp.port | 65536 | MORI_IO_TCP_PORT",
      "mori4j.gpu.runtime | rocm | MORI_IO_GPU_RUNTIME",
      "mori4j.gpu.runtime | cuda12 | MORI_IO_GPU_RUNTIME",
      "mori4j.tcp.max-batch-entries | many | -",
      "mori4j.tcp.max-batch-entries | 0 | -",
      "mori4j.tcp.max-batch-entries | 134217728 | -",
      "mori4j.tcp.bulk-lanes | 17 | MORI_IO_TCP_BULK_LANES",
      "mori4j.tcp.caller-drive | sometimes | MORI_IO_TCP_CALLER_DRIVE",
      "mori4j.tcp.caller-drive-spin | 11ms | MORI_IO_TCP_CALLER_DRIVE_SPIN",
      "mori4j.tcp.serve-spin | -1us | MORI_IO_TCP_SERVE_SPIN",
      "mori4j.tcp.gpu-staging-chunk | 1KiB | MORI_IO_TCP_GPU_STAGING_CHUNK",
      "mori4j.tcp.gpu-staging-pieces | 0 | MORI_IO_TCP_GPU_STAGING_PIECES",
      "mori4j.tcp.gpu-copy-spin | 11ms | MORI_IO_TCP_GPU_COPY_SPIN",
      "mori4j.tcp.gpu-staging-memory | hugepages | MORI_IO_TCP_GPU_STAGING_MEMORY",
      "mori4j.tcp.gpu-staging-gather | sometimes | MORI_IO_TCP_GPU_STAGING_GATHER",
      "mori4j.tcp.gpu-staging-scatter | sometimes | MORI_IO_TCP_GPU_STAGING_SCATTER",
      "mori4j.tcp.gpu-staging-early-refill | sometimes | MORI_IO_TCP_GPU_STAGING_EARLY_REFILL",
      "mori4j.tcp.gpu-staging-prewarm | -1 | MORI_IO_TCP_GPU_STAGING_PREWARM",
      "mori4j.tcp.tls | maybe | MORI4J_TCP_TLS",
      "mori4j.tcp.tls-hostname-verification | sometimes | MORI4J_TCP_TLS_HOSTNAME_VERIFICATION",
      "mori4j.xgmi.poll-nap | -1us | MORI_IO_XGMI_POLL_NAP",
      "mori4j.xgmi.max-batch-blocks | 0 | -",
      "mori4j.xgmi.block-table | pinned | MORI_IO_XGMI_BLOCK_TABLE",
      "mori4j.xgmi.fuse-batches | sometimes | MORI_IO_XGMI_FUSE_BATCHES",
      "mori4j.xgmi.caller-poll | soon | MORI_IO_XGMI_CALLER_POLL",
      "mori4j.rdma.provider | verbs | MORI4J_RDMA_PROVIDER",
      "mori4j.rdma.devices | ^ | MORI_RDMA_DEVICES",
      "mori4j.rdma.qp-per-transfer | 65 | MORI_IO_QP_PER_TRANSFER",
      "mori4j.rdma.poll-cq-mode | BUSY | MORI_IO_POLL_CQ_MODE",
      "mori4j.rdma.send-queue-depth | 1000 | -",
      "mori4j.rdma.connect-timeout | 11s | MORI4J_RDMA_CONNECT_TIMEOUT",
      "mori4j.metrics.enabled | sometimes | MORI4J_METRICS",
      "mori4j.metrics.histogram | sometimes | MORI4J_METRICS_HISTOGRAM",
      "mori4j.metrics.jfr | sometimes | MORI4J_METRICS_JFR",
      "mori4j.metrics.jmx | sometimes | MORI4J_METRICS_JMX"})
  void aStandaloneEngineRefusesEachBadSettingAsInvalidArgsNamingItsKeyVariableAndValue(String key, String value, String env) {
    String engineKey = "refused-" + key;
    // a -D of the build's (mori4j.rdma.provider) is put back after
    withProperty(key, value, () -> assertRefused(engineKey, () -> IoEngine.create(engineKey, IoEngineConfig.loopback()).close(), key, value, env));
  }

  /**
   * SO_SNDBUF/SO_RCVBUF take an int: {@code socket-buffer} is refused past 2^31-1 bytes, naming the range. Before, the
   * value was cut to 32 bits: 2 to 4 GiB came out negative (refused as "below 2 GiB"), 4 GiB and more wrapped around
   * to a small size without a word (4G to 0, the kernel's autotuning; 4 GiB + 1 KiB to 1 KiB).
   */
  @ParameterizedTest(name = "socket-buffer = {0}")
  @ValueSource(strings = {"2G", "2147483648", "3GiB", "4G", "4194305K", "8T"})
  void aSocketBufferPastWhatTheSocketOptionsTakeIsRefusedNamingTheRange(String value) {
    String key = "mori4j.tcp.socket-buffer";
    withProperty(key, value, () -> {
      IoEngineException e = assertRefused("socket-buffer-" + value, () -> IoEngine.create("socket-buffer-" + value, IoEngineConfig.loopback()).close(),
          key, value, "MORI_IO_TCP_SOCKET_BUFFER");
      assertTrue(e.getMessage().endsWith(" = '" + value + "' must be in 0..2147483647 bytes (2 GiB - 1: SO_SNDBUF/SO_RCVBUF take an int; 0: the kernel's autotuning)"),
          e.getMessage());
      // the public factory refuses it too (bench turns that into a usage error)
      SettingReads.Refused r = assertThrows(SettingReads.Refused.class, TcpBackendConfig::defaults);
      assertEquals(key, r.key());
    });
  }

  /** The largest value the socket options take is taken whole, and the sockets accept it (the kernel caps it at wmem_max/rmem_max). */
  @Test
  void theLargestSocketBufferIsTakenWholeAndTheDataSocketsUseIt() {
    assumeFalse(TestBackends.rdma(), "the RDMA executions move the data over RDMA: no data socket gets the option");
    withProperty("mori4j.tcp.socket-buffer", "2147483647", () -> {
      TcpBackendConfig tcp = TcpBackendConfig.defaults();
      assertEquals(Integer.MAX_VALUE, tcp.socketBufferBytes());
      try (EnginePair p = new EnginePair(1 << 20, tcp)) {
        EnginePair.fill(p.localBuf, 3);
        TransferStatus s = p.initiator.write(p.local, 0, p.remote, 0, 1 << 20, p.initiator.allocateTransferUid()).await();
        assertTrue(s.succeeded(), s.toString());
        assertEquals(-1, EnginePair.mismatch(p.localBuf, 0, p.remoteBuf, 0, 1 << 20));
      }
    });
  }

  /**
   * {@code gpu.runtime} is checked at start without opening anything: the three built-in modes in any case (this
   * machine has no GPU, and the engine still starts), a name registered before the start; once unregistered, the same
   * name is refused.
   */
  @Test
  void aGpuRuntimeIsCheckedAtStartByNameOnly() {
    String key = "mori4j.gpu.runtime";
    for (String mode : List.of("Cuda", "HIP", "auto"))
      withProperty(key, mode, () -> IoEngine.create("gpu-runtime-" + mode, IoEngineConfig.loopback()).close());
    String registered = "setting-refusal-sim";
    HostBackedGpuRuntime device = new HostBackedGpuRuntime(1, 0);
    GpuRuntimes.register(registered, device);
    try {
      withProperty(key, registered, () -> IoEngine.create("gpu-runtime-registered", IoEngineConfig.loopback()).close());
    } finally {
      GpuRuntimes.register(registered, null);
      device.shutdown();
    }
    withProperty(key, registered, () -> {
      IoEngineException e = assertRefused("gpu-runtime-forgotten", () -> IoEngine.create("gpu-runtime-forgotten", IoEngineConfig.loopback()).close(),
          key, registered, "MORI_IO_GPU_RUNTIME");
      assertTrue(e.getMessage().contains("must be auto, cuda or hip"), e.getMessage());
    });
  }

  /** A data port in range is bound by createBackend(TCP), not at start: one in use fails there as a transport error. */
  @Test
  void aTcpPortInUseFailsCreateBackendAsATransportError() throws IOException {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      withProperty("mori4j.tcp.port", String.valueOf(taken.getLocalPort()), () -> {
        try (IoEngine e = IoEngine.create("tcp-port-taken", IoEngineConfig.loopback())) {
          IoEngineException x = assertThrows(IoEngineException.class, () -> e.createBackend(BackendType.TCP, TcpBackendConfig.defaults()));
          assertEquals(StatusCode.ERR_TRANSPORT, x.code(), x.toString());
          assertTrue(x.getMessage().contains(String.valueOf(taken.getLocalPort())), x.getMessage());
        }
      });
    }
  }

  /** Runs {@code body} with the system property {@code key} = {@code value} (what {@code -D} does), put back after. */
  private static void withProperty(String key, String value, Runnable body) {
    String before = System.setProperty(key, value);
    ConfigFactory.invalidateCaches();
    try {
      body.run();
    } finally {
      if (before == null) System.clearProperty(key);
      else System.setProperty(key, before);
      ConfigFactory.invalidateCaches();
    }
  }

  @Test
  void anEmbeddedEngineRefusesTheApplicationsBadSettingsTheSameWay() {
    // one application configuration with several bad values: the first the start reads is named, whatever its section
    ActorSystem<Void> app = ActorSystem.create(Behaviors.empty(), "setting-refusal-app",
        ConfigFactory.parseString("pekko.loglevel = WARNING\nmori4j.metrics.percentiles = [0.5, 1.5]").withFallback(ConfigFactory.load()));
    ActorSystem<Void> tcp = ActorSystem.create(Behaviors.empty(), "setting-refusal-tcp",
        ConfigFactory.parseString("pekko.loglevel = WARNING\nmori4j.tcp.io-threads = 65").withFallback(ConfigFactory.load()));
    try {
      IoEngineException e = assertThrows(IoEngineException.class, () -> IoEngine.create(app, "embedded-refused", IoEngineConfig.loopback()).close());
      assertEquals(StatusCode.ERR_INVALID_ARGS, e.code(), e.toString());
      assertTrue(e.getMessage().startsWith("cannot start engine 'embedded-refused': mori4j.metrics.percentiles = '[0.5, 1.5]' must hold numbers in (0, 1) only"),
          e.getMessage());
      assertRefused("embedded-tcp", () -> IoEngine.create(tcp, "embedded-tcp", IoEngineConfig.loopback()).close(),
          "mori4j.tcp.io-threads", "65", "MORI_IO_TCP_IO_THREADS");
      // the key was never taken: the same key starts in a system whose settings are right
      ActorSystem<Void> good = ActorSystem.create(Behaviors.empty(), "setting-refusal-good",
          ConfigFactory.parseString("pekko.loglevel = WARNING").withFallback(ConfigFactory.load()));
      try {
        IoEngine.create(good, "embedded-tcp", IoEngineConfig.loopback()).close();
      } finally {
        good.terminate();
      }
    } finally {
      app.terminate();
      tcp.terminate();
    }
  }

  @Test
  void aBadKvSettingIsRefusedWhenTheCacheIsCreated() {
    String key = "mori4j.kv.first-chunk-layers";
    System.setProperty(key, "-2");
    ConfigFactory.invalidateCaches();
    try (Arena arena = Arena.ofShared();
         IoEngine engine = IoEngine.create("kv-refused", IoEngineConfig.loopback())) {
      KvCacheLayout layout = KvCacheLayout.perLayer(2, 2, 4, 256);
      List<MemorySegment> buffers = java.util.stream.IntStream.range(0, layout.buffers())
          .mapToObj(i -> arena.allocate(layout.bufferBytes(), 64)).toList();
      IoEngineException e = assertThrows(IoEngineException.class, () -> KvCache.create(engine, "kv-refused-cache", layout, buffers).close());
      assertEquals(StatusCode.ERR_INVALID_ARGS, e.code(), e.toString());
      assertTrue(e.getMessage().startsWith("mori4j.kv.first-chunk-layers (MORI4J_KV_FIRST_CHUNK_LAYERS) = '-2' must be at least 0"), e.getMessage());
      assertInstanceOf(SettingReads.Refused.class, e.getCause());
    } finally {
      System.clearProperty(key);
      ConfigFactory.invalidateCaches();
    }
  }

  /**
   * The environment variables refusals name are read from reference.conf's {@code key = ${?ENV}} lines
   * ({@link SettingReads#environmentVariables}); this reads the same lines as text, so a declaration the reader
   * missed (an override written another way) fails here.
   */
  @Test
  void everyEnvironmentOverrideInReferenceConfIsNamedInRefusals() throws IOException {
    Map<String, String> declared = declaredOverrides(Path.of("src/main/resources/reference.conf"));
    assertTrue(declared.size() > 60, "reference.conf's overrides: " + declared.size());
    Map<String, String> derived = SettingReads.environmentVariables().entrySet().stream()
        .filter(en -> en.getKey().startsWith("mori4j.") || declared.containsKey(en.getKey()))
        .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue, (a, b) -> a, TreeMap::new));
    assertEquals(declared, derived);
    assertEquals("mori4j.tcp.io-threads (MORI_IO_TCP_IO_THREADS)", SettingReads.name("mori4j.tcp.io-threads"));
    assertEquals("mori4j.rdma.send-queue-depth", SettingReads.name("mori4j.rdma.send-queue-depth"), "no override declared");
  }

  @Test
  void aPasswordIsNeverEchoed() {
    var tcp = SettingReads.section(ConfigFactory.parseString("mori4j.tcp.tls-key-store-password = hunter2"), "mori4j.tcp");
    String m = tcp.refused("tls-key-store-password", "is refused").getMessage();
    assertFalse(m.contains("hunter2"), m);
    assertTrue(m.startsWith("mori4j.tcp.tls-key-store-password (MORI4J_TCP_TLS_KEY_STORE_PASSWORD) = '(hidden)'"), m);
  }

  private static final Pattern SECTION = Pattern.compile("^\\s*([\\w-]+)\\s*\\{\\s*$");
  private static final Pattern OVERRIDE = Pattern.compile("^\\s*([\\w-]+)\\s*=\\s*\\$\\{\\?(\\w+)}\\s*$");

  /** Full key to variable, from the file's text: sections opened by {@code name {} and closed by {@code }}. */
  private static Map<String, String> declaredOverrides(Path file) throws IOException {
    Map<String, String> out = new TreeMap<>();
    Deque<String> path = new ArrayDeque<>();
    for (String line : Files.readAllLines(file)) {
      String code = line.replaceAll("#.*", "");
      Matcher m;
      if ((m = SECTION.matcher(code)).matches()) path.addLast(m.group(1));
      else if (code.trim().equals("}")) path.removeLast();
      else if ((m = OVERRIDE.matcher(code)).matches()) out.put(String.join(".", path) + (path.isEmpty() ? "" : ".") + m.group(1), m.group(2));
    }
    assertTrue(path.isEmpty(), "unbalanced sections in " + file + ": " + path);
    return out;
  }
}
