package org.mori4j.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.mori4j.bench.baseline.NioBaselineServer;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.natives.gpu.GpuRuntime;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code mori4j serve}: a standalone target for {@code mori4j bench --peer}. It starts an engine with the TCP
 * backend, registers a buffer — host memory, or with {@code --mem-type gpu} device memory of
 * {@code --gpu-device} — and publishes it as {@value #BUFFER_NAME} (with {@code --cpu-buffer} also a host
 * buffer of the same size as {@value #CPU_BUFFER_NAME}, so that one target serves both halves of
 * {@code bench --compare-cpu}), starts the plain-NIO baseline server
 * on the same host, prints exactly one {@link ReadyLine} on stdout, and runs until stdin reaches EOF (the
 * spawning bench closes it) or the process gets SIGTERM; either way the engine is closed before exit. With
 * {@code --backend rdma} the engine also has an RDMA backend (created before the buffer is registered, so the
 * buffer's descriptor carries its RDMA registration) on the provider of {@code --rdma-provider} or of
 * {@code -Dmori4j.rdma.provider} (what {@code bench --backend rdma} gives its child); the TCP backend stays, so
 * one target serves both the RDMA rows and the TCP rows of {@code --compare-tcp}.
 */
@Command(name = "serve", description = "Run a target engine that mori4j bench --peer can use.", mixinStandardHelpOptions = true)
public final class ServeCommand implements Callable<Integer> {
  /** The name the target buffer is published under. */
  public static final String BUFFER_NAME = "bench-buffer";

  /** The name of the extra host buffer of {@code --cpu-buffer}. */
  public static final String CPU_BUFFER_NAME = "bench-buffer-cpu";

  @Option(names = "--host", defaultValue = "127.0.0.1", description = "Host the engine and the NIO baseline bind (default: ${DEFAULT-VALUE}).")
  String host;

  @Option(names = "--port", defaultValue = "0", description = "Control-plane port; 0 picks a free one (default: ${DEFAULT-VALUE}).")
  int port;

  @Option(names = "--key", description = "Engine key (default: target-<pid>).")
  String key;

  @Option(names = "--buffer-size", defaultValue = "64M", converter = SizeConverter.class,
      description = "Bytes of the published target buffer (default: ${DEFAULT-VALUE}).")
  long bufferSize;

  @Option(names = "--mem-type", defaultValue = "cpu", description = "Memory of the published buffer: cpu or gpu (default: ${DEFAULT-VALUE}).")
  String memType;

  @Option(names = "--gpu-device", defaultValue = "0", description = "With --mem-type gpu: the device the buffer is on (default: ${DEFAULT-VALUE}).")
  int gpuDevice;

  @Option(names = "--backend", defaultValue = "tcp", description = "tcp; xgmi: also the XGMI backend, for bench --backend xgmi on this host; "
      + "rdma: also the RDMA backend, for bench --backend rdma (default: ${DEFAULT-VALUE}).")
  String backend;

  @Mixin
  RdmaFlags rdma = new RdmaFlags();

  @Option(names = "--cpu-buffer", description = "Also publish a host buffer of the same size as '" + CPU_BUFFER_NAME + "' (for bench --compare-cpu).")
  boolean cpuBuffer;

  @Spec CommandSpec spec;

  @Option(names = "--no-stdin-watch", description = "Keep running when stdin is closed (for nohup/background use); stop with SIGTERM.")
  boolean noStdinWatch;

  @Mixin
  TcpOptions tcp = new TcpOptions();

  @Override
  public Integer call() throws Exception {
    PrintStream out = System.out;
    String mem = BenchGpu.memType(memType);
    if (mem == null) throw new ParameterException(spec.commandLine(), "unknown --mem-type '" + memType + "' (expected cpu or gpu)");
    String backendName = backend.toLowerCase(java.util.Locale.ROOT);
    if (!backendName.equals("tcp") && !backendName.equals("xgmi") && !backendName.equals("rdma"))
      throw new ParameterException(spec.commandLine(), "unknown --backend '" + backend + "' (expected tcp, xgmi or rdma)");
    if (!backendName.equals("rdma") && rdma.anyGiven())
      throw new ParameterException(spec.commandLine(), rdma.firstGiven() + " needs --backend rdma");
    RdmaFlags.Provider rdmaProvider = backendName.equals("rdma")
        ? rdma.resolve(m -> new ParameterException(spec.commandLine(), m), RdmaFlags::engineChoice) : null;
    org.mori4j.io.RdmaBackendConfig rdmaConfig = rdmaProvider != null ? rdma.config(m -> new ParameterException(spec.commandLine(), m)) : null;
    if (backendName.equals("xgmi") && !mem.equals("gpu")) throw new ParameterException(spec.commandLine(), "--backend xgmi serves GPU memory: add --mem-type gpu");
    GpuRuntime gpu = null;
    if (mem.equals("gpu")) {
      gpu = BenchGpu.runtime();
      String problem = BenchGpu.problem(gpu, "--mem-type gpu", "--gpu-device", gpuDevice);
      if (problem != null) throw new ParameterException(spec.commandLine(), problem);
    }
    String engineKey = key != null ? key : "target-" + ProcessHandle.current().pid();
    List<BenchMemory> buffers = new CopyOnWriteArrayList<>();
    IoEngineConfig engineConfig = new IoEngineConfig(host, port);
    // the engine reads its RDMA provider from its configuration when it is created
    IoEngine engine = rdmaProvider != null ? RdmaFlags.withProvider(rdmaProvider, () -> IoEngine.create(engineKey, engineConfig))
        : IoEngine.create(engineKey, engineConfig);
    AtomicBoolean closed = new AtomicBoolean();
    CountDownLatch stopped = new CountDownLatch(1);
    NioBaselineServer[] nioRef = new NioBaselineServer[1];
    Runnable shutdown = () -> {
      if (!closed.compareAndSet(false, true)) return;
      if (nioRef[0] != null) nioRef[0].close();
      // the engine first: it may still touch the buffers until it is closed
      try {
        engine.close();
      } finally {
        for (BenchMemory b : buffers) b.close();
        stopped.countDown();
      }
    };
    Thread hook = new Thread(shutdown, "mori4j-serve-stop");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      // XGMI first: the buffer's descriptor then carries its IPC handle
      if (backendName.equals("xgmi")) engine.createBackend(BackendType.XGMI, org.mori4j.io.XgmiBackendConfig.defaults());
      // RDMA before the buffer is registered, for the same reason: its descriptor then carries the memory region's keys
      if (rdmaConfig != null) engine.createBackend(BackendType.RDMA, rdmaConfig);
      engine.createBackend(BackendType.TCP, tcp.config());
      BenchMemory buffer = gpu != null ? BenchMemory.gpu(engine, gpu, gpuDevice, bufferSize) : BenchMemory.host(engine, bufferSize);
      buffers.add(buffer);
      engine.publishMemory(BUFFER_NAME, buffer.desc());
      if (cpuBuffer) {
        BenchMemory extra = BenchMemory.host(engine, bufferSize);
        buffers.add(extra);
        engine.publishMemory(CPU_BUFFER_NAME, extra.desc());
      }
      NioBaselineServer nio = NioBaselineServer.start(host, bufferSize);
      nioRef[0] = nio;
      EngineDesc self = engine.engineDesc();
      out.println(new ReadyLine(self.host(), self.port(), nio.port()).format());
      out.flush();
      System.err.printf("mori4j serve: engine %s at %s:%d%s, %s %s buffer published as '%s'%s, NIO baseline on port %d%n",
          engineKey, self.host(), self.port(), rdmaProvider != null ? ", backends " + rdmaProvider.label() + " and tcp" : "",
          HumanSize.format(bufferSize), buffer.describe(), BUFFER_NAME,
          cpuBuffer ? " and a cpu one as '" + CPU_BUFFER_NAME + "'" : "", nio.port());
      if (noStdinWatch) {
        stopped.await(); // until SIGTERM runs the hook
      } else {
        waitForStdinEof();
      }
      return 0;
    } finally {
      shutdown.run();
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException ignored) {
        // already shutting down
      }
    }
  }

  private static void waitForStdinEof() {
    byte[] sink = new byte[256];
    try {
      while (System.in.read(sink) >= 0) {
        // input is ignored; only its end matters
      }
    } catch (IOException ignored) {
      // a broken stdin means the parent is gone: stop as on EOF
    }
  }
}
