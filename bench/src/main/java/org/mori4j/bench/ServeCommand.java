package org.mori4j.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.mori4j.bench.baseline.NioBaselineServer;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryDesc;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code mori4j serve}: a standalone target for {@code mori4j bench --peer}. It starts an engine with the TCP
 * backend, registers a buffer and publishes it as {@value #BUFFER_NAME}, starts the plain-NIO baseline server
 * on the same host, prints exactly one {@link ReadyLine} on stdout, and runs until stdin reaches EOF (the
 * spawning bench closes it) or the process gets SIGTERM; either way the engine is closed before exit.
 */
@Command(name = "serve", description = "Run a target engine that mori4j bench --peer can use.", mixinStandardHelpOptions = true)
public final class ServeCommand implements Callable<Integer> {
  /** The name the target buffer is published under. */
  public static final String BUFFER_NAME = "bench-buffer";

  @Option(names = "--host", defaultValue = "127.0.0.1", description = "Host the engine and the NIO baseline bind (default: ${DEFAULT-VALUE}).")
  String host;

  @Option(names = "--port", defaultValue = "0", description = "Control-plane port; 0 picks a free one (default: ${DEFAULT-VALUE}).")
  int port;

  @Option(names = "--key", description = "Engine key (default: target-<pid>).")
  String key;

  @Option(names = "--buffer-size", defaultValue = "64M", converter = SizeConverter.class,
      description = "Bytes of the published target buffer (default: ${DEFAULT-VALUE}).")
  long bufferSize;

  @Option(names = "--no-stdin-watch", description = "Keep running when stdin is closed (for nohup/background use); stop with SIGTERM.")
  boolean noStdinWatch;

  @Mixin
  TcpOptions tcp = new TcpOptions();

  @Override
  public Integer call() throws Exception {
    PrintStream out = System.out;
    String engineKey = key != null ? key : "target-" + ProcessHandle.current().pid();
    Arena arena = Arena.ofShared();
    IoEngine engine = IoEngine.create(engineKey, new IoEngineConfig(host, port));
    AtomicBoolean closed = new AtomicBoolean();
    CountDownLatch stopped = new CountDownLatch(1);
    NioBaselineServer[] nioRef = new NioBaselineServer[1];
    Runnable shutdown = () -> {
      if (!closed.compareAndSet(false, true)) return;
      if (nioRef[0] != null) nioRef[0].close();
      // the engine first: it may still touch the buffer until it is closed
      engine.close();
      arena.close();
      stopped.countDown();
    };
    Thread hook = new Thread(shutdown, "mori4j-serve-stop");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      engine.createBackend(BackendType.TCP, tcp.config());
      MemorySegment buffer = arena.allocate(bufferSize, 4096);
      MemoryDesc desc = engine.registerMemory(buffer);
      engine.publishMemory(BUFFER_NAME, desc);
      NioBaselineServer nio = NioBaselineServer.start(host, bufferSize);
      nioRef[0] = nio;
      EngineDesc self = engine.engineDesc();
      out.println(new ReadyLine(self.host(), self.port(), nio.port()).format());
      out.flush();
      System.err.printf("mori4j serve: engine %s at %s:%d, %s buffer published as '%s', NIO baseline on port %d%n",
          engineKey, self.host(), self.port(), HumanSize.format(bufferSize), BUFFER_NAME, nio.port());
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
