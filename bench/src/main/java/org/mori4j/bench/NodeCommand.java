package org.mori4j.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.mori4j.cluster.ClusterSettings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code mori4j node}: a member of a mori4j cluster with an engine and a TCP backend. It joins the seeds (or
 * founds a cluster without any), registers every other engine of the cluster through {@code ClusterEngine},
 * publishes a host buffer as {@value ServeCommand#BUFFER_NAME} for {@code cluster-bench}, prints one
 * {@link ReadyLine} on stdout once its member is Up ({@code port} is the cluster port, which is also what
 * other nodes pass as {@code --seed}; {@code nio=0}: no NIO baseline server), then a line for each engine
 * that is registered or dropped, and runs until SIGTERM or Ctrl-C (or stdin's end with
 * {@code --stop-on-stdin-eof}, for a spawning parent). Stopping leaves the cluster and closes the engine
 * before the buffer is freed. Exit codes: 0 stopped on request, 1 could not join or was removed from the
 * cluster, 2 a usage error.
 */
@Command(name = "node", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Run a cluster member with an engine (TCP backend) that registers every engine of the cluster; until SIGTERM/Ctrl-C.")
public final class NodeCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin
  ClusterOptions cluster = new ClusterOptions();

  @Option(names = "--engine-key", paramLabel = "KEY", description = "Engine key, unique in the cluster (default: node-<host>-<port>).")
  String engineKey;

  @Option(names = "--data-host", paramLabel = "HOST", description = "Host the TCP backend's data connections bind (default: --host).")
  String dataHost;

  @Option(names = "--buffer-size", defaultValue = "64M", converter = SizeConverter.class,
      description = "Host buffer published as '" + ServeCommand.BUFFER_NAME + "' for cluster-bench; 0 publishes none (default: ${DEFAULT-VALUE}).")
  long bufferSize;

  @Option(names = "--join-timeout", defaultValue = "60", paramLabel = "SECONDS",
      description = "Give up when the member is not Up after this long (default: ${DEFAULT-VALUE}).")
  int joinTimeout;

  @Option(names = "--stop-on-stdin-eof", description = "Also stop when stdin ends (a spawning process closes it).")
  boolean stopOnStdinEof;

  @Mixin
  TcpOptions tcp = new TcpOptions();

  /** How often the registered engines are compared with the last printed set. */
  private static final long WATCH_MS = 200;

  ClusterSettings validate() {
    if (bufferSize < 0) throw usage("--buffer-size must not be negative: " + bufferSize);
    if (joinTimeout < 1) throw usage("--join-timeout must be at least 1: " + joinTimeout);
    if (engineKey != null && engineKey.isBlank()) throw usage("--engine-key must not be blank");
    if (dataHost != null && (dataHost.isBlank() || dataHost.chars().anyMatch(Character::isWhitespace)))
      throw usage("--data-host '" + dataHost + "' is not a host name or IP address");
    try {
      tcp.config();
    } catch (IllegalArgumentException e) {
      throw usage(e.getMessage());
    }
    return cluster.settings(null, this::usage);
  }

  private ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }

  @Override
  public Integer call() throws Exception {
    ClusterSettings settings = validate();
    PrintStream out = System.out;
    ClusterMember member = ClusterMember.start(settings, engineKey, "node", dataHost, tcp.config(), bufferSize);
    AtomicBoolean requested = new AtomicBoolean();
    CountDownLatch stopped = new CountDownLatch(1);
    Runnable stop = () -> {
      if (!requested.compareAndSet(false, true)) return;
      try {
        System.err.println("mori4j node: stopping: leaving the cluster, closing the engine");
        member.close();
      } finally {
        stopped.countDown();
      }
    };
    Thread hook = new Thread(() -> {
      stop.run();
      awaitQuietly(stopped);
    }, "mori4j-node-stop");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      if (stopOnStdinEof) Thread.ofPlatform().daemon().name("node-stdin").start(() -> {
        waitForStdinEof();
        stop.run();
      });
      if (!member.awaitUp(Duration.ofSeconds(joinTimeout))) {
        if (requested.get()) return 0;
        System.err.printf("mori4j node: not Up after %d s; seeds %s (running? same --system-name, same --tls and trusted certificates?)%n",
            joinTimeout, settings.seedNodes());
        return 1;
      }
      var self = member.engine().engineDesc();
      out.println(new ReadyLine(self.host(), self.port(), 0).format());
      out.flush();
      System.err.printf("mori4j node: member %s is Up (%s); engine '%s', TCP data on %s%s; other nodes join with --seed %s%n",
          member.system().address(), settings.tls().enabled() ? "TLS" : "plain tcp", self.key(),
          dataHost != null ? dataHost : settings.host(),
          bufferSize > 0 ? ", " + HumanSize.format(bufferSize) + " buffer published as '" + ServeCommand.BUFFER_NAME + "'" : "",
          member.seedAddress());
      Set<String> shown = new TreeSet<>();
      while (!stopped.await(WATCH_MS, TimeUnit.MILLISECONDS)) {
        if (member.terminated()) {
          if (requested.get()) break;
          System.err.println("mori4j node: this member was removed from the cluster (downed or partitioned away); stopping");
          return 1;
        }
        Set<String> now;
        try {
          now = member.registeredEngines();
        } catch (Exception e) {
          continue; // a stopping system cannot answer: the next turn of the loop sees it terminated
        }
        for (String k : now) if (!shown.contains(k)) out.println("peer registered: " + k);
        for (String k : shown) if (!now.contains(k)) out.println("peer gone: " + k);
        out.flush();
        shown.clear();
        shown.addAll(now);
      }
      return 0;
    } finally {
      stop.run();
      awaitQuietly(stopped);
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException ignored) {
        // the JVM is shutting down and runs the hook itself
      }
    }
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(90, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
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
