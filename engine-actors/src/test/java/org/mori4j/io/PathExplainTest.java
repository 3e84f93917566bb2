package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.typesafe.config.ConfigFactory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.pattern.StatusReply;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.mori4j.io.PathExplanation.Reason;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.verbs.RdmaDevices;
import org.mori4j.transport.xgmi.HostBackedGpuRuntime;
import org.mori4j.transport.xgmi.XgmiHost;
import org.slf4j.LoggerFactory;

/**
 * {@link IoEngine#explain}: the backend each kind of pair takes (TCP direct, TCP through staging, RDMA, XGMI)
 * and every refusal reason the engine can give, on engines that really have (or failed to get) the backends:
 * XGMI on transport's in-memory test device (two "GPUs" without peer access), RDMA on the software provider,
 * and an engine with the defaults of this machine (no GPU runtime, no RDMA device: those parts are skipped on a
 * machine that has them). The IPC-handle refusal needs a second process and is checked in
 * {@link XgmiTransferOnTestDeviceTest}. Also: the WARN for a slower path is logged once per pair, and the actor
 * message gives the same answer as the method.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PathExplainTest {
  private static final String MODE = "path-explain-device";
  private static final long SIZE = 64 * 1024;
  private Path dir;
  private HostBackedGpuRuntime device;
  private ActorSystem<Void> gpuSystem;
  private ActorSystem<Void> plainSystem;
  private final List<IoEngine> engines = new ArrayList<>();
  private final List<DeviceBuffer> buffers = new ArrayList<>();
  private final Arena arena = Arena.ofShared();
  private final String pid = String.valueOf(ProcessHandle.current().pid());

  @BeforeAll
  void start() {
    dir = HostBackedGpuRuntime.newDirectory();
    device = new HostBackedGpuRuntime(2, 5, false, dir); // two devices without peer access
    GpuRuntimes.register(MODE, device);
    gpuSystem = ActorSystem.create(Behaviors.empty(), "explain-gpu", ConfigFactory.parseString(
        "mori4j.gpu.runtime = " + MODE + "\nmori4j.rdma.provider = software").withFallback(ConfigFactory.load()));
    plainSystem = ActorSystem.create(Behaviors.empty(), "explain-plain", ConfigFactory.parseString(
        "mori4j.gpu.runtime = auto\nmori4j.rdma.provider = auto").withFallback(ConfigFactory.load()));
  }

  @AfterAll
  void stop() {
    for (IoEngine e : engines) e.close();
    for (DeviceBuffer b : buffers) b.close();
    arena.close();
    gpuSystem.terminate();
    plainSystem.terminate();
    GpuRuntimes.register(MODE, null);
    device.shutdown();
  }

  private IoEngine engine(ActorSystem<Void> system, String name, BackendType... types) {
    IoEngine e = IoEngine.create(system, "explain-" + name + "-" + pid, IoEngineConfig.loopback());
    engines.add(e);
    for (BackendType t : types) {
      e.createBackend(t, switch (t) {
        case TCP -> TcpBackendConfig.defaults();
        case RDMA -> RdmaBackendConfig.defaults();
        case XGMI -> XgmiBackendConfig.defaults();
      });
    }
    return e;
  }

  private MemoryDesc host(IoEngine e) {
    return e.registerMemory(arena.allocate(SIZE, 4096));
  }

  private MemoryDesc gpu(IoEngine e, int dev) {
    DeviceBuffer b = device.allocDevice(dev, SIZE);
    buffers.add(b);
    return e.registerMemory(b.address(), SIZE, dev, MemoryLocationType.GPU);
  }

  private static void ok(TransferStatus s) {
    assertTrue(s.await(Duration.ofSeconds(10)), "transfer did not finish");
    assertEquals(StatusCode.SUCCESS, s.code(), s.message());
  }

  private static void refused(PathExplanation e, BackendType t, Reason reason, boolean degraded) {
    PathExplanation.Refusal r = e.refusal(t);
    assertNotNull(r, t + " is not listed: " + e);
    assertEquals(reason, r.reason(), e.toString());
    assertEquals(degraded, r.degraded(), e.toString());
    assertFalse(r.message().isBlank(), e.toString());
  }

  @Test
  void hostMemoryWithoutGpuRuntimeOrRdmaDeviceGoesOverTcpAndSaysWhy() {
    Assumptions.assumeFalse(GpuRuntimes.select("auto").available(), "this machine has a GPU runtime");
    Assumptions.assumeTrue(RdmaDevices.inventory().isEmpty(), "this machine has RDMA devices");
    IoEngine a = engine(plainSystem, "plain-a", BackendType.TCP);
    IoEngine b = engine(plainSystem, "plain-b", BackendType.TCP);
    assertThrows(IoEngineException.class, () -> a.createBackend(BackendType.XGMI, XgmiBackendConfig.defaults()));
    assertThrows(IoEngineException.class, () -> a.createBackend(BackendType.RDMA, RdmaBackendConfig.defaults()));
    MemoryDesc la = host(a);
    MemoryDesc lb = host(b);
    a.registerRemoteEngine(b.engineDesc());
    b.registerRemoteEngine(a.engineDesc());

    PathExplanation e = a.explain(la, lb);
    System.out.println(e);
    assertEquals(BackendType.TCP, e.chosen());
    assertFalse(e.staged());
    assertTrue(e.via().startsWith("TCP, "), e.via());
    refused(e, BackendType.XGMI, Reason.NO_GPU_RUNTIME, false);
    refused(e, BackendType.RDMA, Reason.RDMA_ABSENT, false);
    assertFalse(e.slower(), e.toString());
    assertEquals(2, e.refused().size());

    // b never asked for the others
    PathExplanation back = b.explain(lb, la);
    refused(back, BackendType.XGMI, Reason.BACKEND_NOT_CREATED, false);
    refused(back, BackendType.RDMA, Reason.BACKEND_NOT_CREATED, false);

    // the actor message answers the same
    StatusReply<PathExplanation> reply = AskPattern.<IoEngineProtocol.Command, StatusReply<PathExplanation>>ask(a.actorRef(),
        r -> new IoEngineProtocol.ExplainPath(la, lb, r), Duration.ofSeconds(5), plainSystem.scheduler()).toCompletableFuture().join();
    assertTrue(reply.isSuccess());
    assertEquals(e, reply.getValue());

    // what a transfer would refuse, explain refuses with the same code
    IoEngineException x = assertThrows(IoEngineException.class, () -> a.explain(lb, la));
    assertEquals(StatusCode.ERR_INVALID_ARGS, x.code(), x.getMessage());
    a.deregisterMemory(la);
    x = assertThrows(IoEngineException.class, () -> a.explain(la, lb));
    assertEquals(StatusCode.ERR_NOT_FOUND, x.code(), x.getMessage());
  }

  @Test
  void gpuPairsTakeXgmiOrStageThroughTcpWhenPeerAccessIsRefusedAndWarnOnce() {
    IoEngine a = engine(gpuSystem, "gpu-a", BackendType.XGMI, BackendType.RDMA, BackendType.TCP);
    IoEngine b = engine(gpuSystem, "gpu-b", BackendType.XGMI, BackendType.TCP);
    MemoryDesc a0 = gpu(a, 0);
    MemoryDesc b0 = gpu(b, 0);
    MemoryDesc b1 = gpu(b, 1);
    MemoryDesc ah = host(a);
    MemoryDesc bh = host(b);
    a.registerRemoteEngine(b.engineDesc());
    b.registerRemoteEngine(a.engineDesc());

    PathExplanation same = a.explain(a0, b0);
    System.out.println(same);
    assertEquals(BackendType.XGMI, same.chosen());
    assertFalse(same.staged());
    assertTrue(same.via().contains("same process"), same.via());
    refused(same, BackendType.RDMA, Reason.NOT_ON_REMOTE, false);
    refused(same, BackendType.TCP, Reason.LOWER_PREFERENCE, false);
    assertFalse(same.slower());

    PathExplanation cross = a.explain(a0, b1);
    System.out.println(cross);
    assertEquals(BackendType.TCP, cross.chosen());
    assertTrue(cross.staged(), "GPU memory over TCP is staged");
    refused(cross, BackendType.XGMI, Reason.PEER_ACCESS_REFUSED, true);
    assertTrue(cross.slower(), cross.toString());
    assertTrue(cross.toString().contains("SLOWER"), cross.toString());

    // a view of b's GPU region (range cache: XGMI data derived from the region's, no driver calls) takes XGMI too,
    // and a write into it lands at the view's offset in the allocation
    MemoryDesc b0view = b.registerMemory(b0.address() + 8192, 16384, 0, MemoryLocationType.GPU);
    assertEquals(1, b.registrationStats().viewsFromCache(), b.registrationStats().toString());
    assertEquals(BackendType.XGMI, a.explain(a0, b0view).chosen());
    MemorySegment pattern = arena.allocate(4096, 4096);
    for (int i = 0; i < 4096; i++) pattern.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 3));
    device.copyHostToDevice(a0.address(), pattern, 4096);
    ok(a.write(a0, 0, b0view, 4096, 4096, a.allocateTransferUid()));
    MemorySegment landed = arena.allocate(4096, 4096);
    device.copyDeviceToHost(landed, b0.address() + 8192 + 4096, 4096);
    assertEquals(-1, landed.mismatch(pattern), "the XGMI write into the view landed at its offset");

    PathExplanation hosts = a.explain(ah, bh);
    assertEquals(BackendType.TCP, hosts.chosen());
    refused(hosts, BackendType.XGMI, Reason.MEMORY_KIND, false);
    refused(hosts, BackendType.RDMA, Reason.NOT_ON_REMOTE, false);

    Logger logger = (Logger) LoggerFactory.getLogger("org.mori4j.io.internal.PathExplainer");
    ListAppender<ILoggingEvent> seen = new ListAppender<>();
    seen.start();
    logger.addAppender(seen);
    try {
      for (int i = 0; i < 3; i++) ok(a.write(a0, 0, b1, 0, 4096, a.allocateTransferUid()));
      ok(a.batchWrite(List.of(a0), List.of(new long[] {0, 8192}), List.of(b1), List.of(new long[] {0, 8192}),
          List.of(new long[] {4096, 4096}), new long[] {a.allocateTransferUid()}).get(0));
      ok(a.write(a0, 0, b0, 0, 4096, a.allocateTransferUid()));
      ok(a.write(ah, 0, bh, 0, 4096, a.allocateTransferUid()));
      List<ILoggingEvent> warns = seen.list.stream().filter(ev -> ev.getLevel() == Level.WARN).toList();
      assertEquals(1, warns.size(), "one WARN for the slower pair, none for the others: " + warns);
      String msg = warns.get(0).getFormattedMessage();
      assertTrue(msg.contains(b.key()) && msg.contains("PEER_ACCESS_REFUSED") && msg.contains("slower"), msg);
    } finally {
      logger.detachAppender(seen);
    }
  }

  @Test
  void xgmiRefusesAnEngineOnAnotherHost() {
    IoEngine a = engine(gpuSystem, "host-a", BackendType.XGMI, BackendType.TCP);
    IoEngine b = engine(gpuSystem, "host-b", BackendType.XGMI, BackendType.TCP);
    MemoryDesc a0 = gpu(a, 0);
    MemoryDesc b0 = gpu(b, 0);
    EngineDesc real = b.engineDesc();
    // b as an engine of another machine would describe itself: another boot id and host name
    Map<BackendType, byte[]> data = new EnumMap<>(real.backendData());
    data.put(BackendType.XGMI, new XgmiHost("another-boot-id", "elsewhere", "pid:[1]", 1, 1).encode());
    a.registerRemoteEngine(new EngineDesc(real.key(), real.nodeId(), real.host(), real.port(), real.pid(), real.controlPath(),
        real.backends(), data, real.incarnation()));
    PathExplanation e = a.explain(a0, b0);
    System.out.println(e);
    assertEquals(BackendType.TCP, e.chosen());
    refused(e, BackendType.XGMI, Reason.OTHER_HOST, false);
    assertFalse(e.slower(), "another host is not a degradation: " + e);
  }

  @Test
  void rdmaCarriesHostMemoryAndSaysWhenItCannot() {
    IoEngine a = engine(gpuSystem, "rdma-a", BackendType.RDMA, BackendType.TCP);
    IoEngine b = engine(gpuSystem, "rdma-b", BackendType.TCP);
    MemoryDesc early = host(b); // registered before b had RDMA: no RDMA keys in its descriptor
    b.createBackend(BackendType.RDMA, RdmaBackendConfig.defaults());
    MemoryDesc later = host(b);
    IoEngine c = engine(gpuSystem, "rdma-c", BackendType.RDMA, BackendType.TCP);
    MemoryDesc ch = host(c);
    EngineDesc withRdma = c.engineDesc();
    c.removeBackend(BackendType.RDMA); // its descriptor still offers RDMA: the handshake is refused
    MemoryDesc ah = host(a);
    a.registerRemoteEngine(b.engineDesc());
    a.registerRemoteEngine(withRdma);

    PathExplanation rdma = a.explain(ah, later);
    System.out.println(rdma);
    assertEquals(BackendType.RDMA, rdma.chosen());
    assertFalse(rdma.staged());
    assertTrue(rdma.via().contains("device") && rdma.via().contains("queue pair"), rdma.via());
    refused(rdma, BackendType.TCP, Reason.LOWER_PREFERENCE, false);
    refused(rdma, BackendType.XGMI, Reason.BACKEND_NOT_CREATED, false);

    PathExplanation noKeys = a.explain(ah, early);
    assertEquals(BackendType.TCP, noKeys.chosen());
    refused(noKeys, BackendType.RDMA, Reason.NOT_REGISTERED, true);
    assertTrue(noKeys.slower());

    PathExplanation failed = a.explain(ah, ch);
    System.out.println(failed);
    assertEquals(BackendType.TCP, failed.chosen());
    refused(failed, BackendType.RDMA, Reason.CONNECT_FAILED, true);
    assertTrue(failed.refusal(BackendType.RDMA).message().contains("refused"), failed.toString());
    assertTrue(failed.slower());
    ok(a.write(ah, 0, ch, 0, 4096, a.allocateTransferUid()));
    assertNull(failed.refusal(BackendType.TCP), "the chosen backend is not among the refused");
  }
}
