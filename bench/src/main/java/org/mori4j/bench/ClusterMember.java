package org.mori4j.bench;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.mori4j.cluster.ClusterEngine;
import org.mori4j.cluster.ClusterSettings;
import org.mori4j.cluster.MemberStop;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.TcpBackendConfig;

/**
 * One member of a mori4j cluster as {@code node} and {@code cluster-bench} run it: a clustered ActorSystem
 * from {@link ClusterSettings}, an engine embedded in it with a TCP backend, optionally a host buffer
 * published as {@value ServeCommand#BUFFER_NAME} (what {@code cluster-bench} measures against), and
 * {@link ClusterEngine}, which registers every other engine of the cluster with this one. The buffer is
 * published before the engine is announced, so a peer that sees the engine can look the buffer up at once.
 */
public final class ClusterMember implements AutoCloseable {
  private static final Duration ASK = Duration.ofSeconds(10);

  private final ActorSystem<Void> system;
  private final IoEngine engine;
  private final BenchMemory published;
  private final ActorRef<ClusterEngine.Command> announcer;
  private final long startedNanos;
  private final CompletionStage<Done> stopped;

  private ClusterMember(ActorSystem<Void> system, IoEngine engine, BenchMemory published, ActorRef<ClusterEngine.Command> announcer,
                        long startedNanos) {
    this.system = system;
    this.engine = engine;
    this.published = published;
    this.announcer = announcer;
    this.startedNanos = startedNanos;
    this.stopped = MemberStop.whenStopped(system);
  }

  /**
   * Starts the member. {@code engineKey} null: {@code <keyPrefix>-<host>-<port>} of the member's address,
   * unique in the cluster; {@code dataHost} null: the canonical host; {@code publishBytes} 0: no buffer.
   */
  public static ClusterMember start(ClusterSettings settings, String engineKey, String keyPrefix, String dataHost, TcpBackendConfig tcp,
                             long publishBytes) {
    long t0 = System.nanoTime();
    ActorSystem<Void> sys = settings.startSystem();
    IoEngine engine = null;
    BenchMemory buffer = null;
    try {
      String key = engineKey != null ? engineKey
          : keyPrefix + "-" + sys.address().getHost().orElse(settings.host()) + "-" + sys.address().getPort().orElse(0);
      engine = IoEngine.create(sys, key, new IoEngineConfig(dataHost != null ? dataHost : settings.host(), 0));
      engine.createBackend(BackendType.TCP, tcp);
      if (publishBytes > 0) {
        buffer = BenchMemory.host(engine, publishBytes);
        engine.publishMemory(ServeCommand.BUFFER_NAME, buffer.desc());
      }
      return new ClusterMember(sys, engine, buffer, ClusterEngine.start(engine), t0);
    } catch (RuntimeException | Error e) {
      stop(sys, engine, buffer);
      throw e;
    }
  }

  public IoEngine engine() {
    return engine;
  }

  public ActorSystem<Void> system() {
    return system;
  }

  BenchMemory published() {
    return published;
  }

  /** Nanoseconds since {@link #start} began (before the ActorSystem existed). */
  long elapsedNanos() {
    return System.nanoTime() - startedNanos;
  }

  /** {@code host:port} of this member: what another member passes as {@code --seed}. */
  public String seedAddress() {
    var a = system.address();
    String h = a.getHost().orElseThrow();
    return (h.indexOf(':') >= 0 ? "[" + h + "]" : h) + ":" + a.getPort().orElseThrow();
  }

  /** Waits until this member is Up; false when it is not within {@code timeout} (seeds unreachable, TLS refused). */
  public boolean awaitUp(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (Cluster.get(system).selfMember().status() != MemberStatus.up()) {
      if (System.nanoTime() > deadline || system.getWhenTerminated().toCompletableFuture().isDone()) return false;
      Thread.sleep(50);
    }
    return true;
  }

  /** The keys of the engines {@link ClusterEngine} has registered with this member's engine. */
  public Set<String> registeredEngines() throws Exception {
    return AskPattern.<ClusterEngine.Command, Set<String>>ask(announcer, ClusterEngine.GetRegisteredEngines::new, ASK, system.scheduler())
        .toCompletableFuture().get(ASK.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * The descriptor of the cluster's engine {@code key}, asked from the engines the Receptionist lists (the
   * same {@link ClusterEngine.DescribeEngine} exchange ClusterEngine uses); empty when none has that key.
   */
  public Optional<EngineDesc> describe(String key) throws Exception {
    Receptionist.Listing listing = AskPattern.<Receptionist.Command, Receptionist.Listing>ask(system.receptionist(),
        r -> Receptionist.find(ClusterEngine.SERVICE_KEY, r), ASK, system.scheduler()).toCompletableFuture().get(ASK.toMillis(), TimeUnit.MILLISECONDS);
    for (ActorRef<ClusterEngine.Command> ref : listing.getServiceInstances(ClusterEngine.SERVICE_KEY)) {
      if (ref.equals(announcer)) continue;
      ClusterEngine.EngineDescribed d = AskPattern.<ClusterEngine.Command, ClusterEngine.EngineDescribed>ask(ref,
          ClusterEngine.DescribeEngine::new, ASK, system.scheduler()).toCompletableFuture().get(ASK.toMillis(), TimeUnit.MILLISECONDS);
      EngineDesc desc = EngineDesc.fromBytes(d.descriptor());
      if (desc.key().equals(key)) return Optional.of(desc);
    }
    return Optional.empty();
  }

  /**
   * True once the ActorSystem has terminated (this member was downed or removed, or {@link #close()} ran), or
   * its shutdown has run every phase and termination hangs ({@link MemberStop}).
   */
  public boolean terminated() {
    return stopped.toCompletableFuture().isDone();
  }

  /**
   * Leaves the cluster and stops: terminating the system runs its coordinated shutdown (the member leaves,
   * ClusterEngine's task closes the engine); the published buffer is freed only after the engine is closed.
   */
  @Override
  public void close() {
    stop(system, engine, published);
  }

  private static void stop(ActorSystem<Void> sys, IoEngine engine, BenchMemory buffer) {
    try {
      sys.terminate();
      sys.getWhenTerminated().toCompletableFuture().get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      // not terminated in time: close the engine anyway below, so the buffer is never freed under it
    } finally {
      try {
        if (engine != null) engine.close(); // idempotent; covers a system stopped without the coordinated-shutdown task
      } finally {
        if (buffer != null) buffer.close();
      }
    }
  }
}
