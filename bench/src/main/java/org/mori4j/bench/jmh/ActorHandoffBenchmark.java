package org.mori4j.bench.jmh;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.Semaphore;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Actor hand-off latency: a ball passed back and forth between two Pekko typed actors, on each dispatcher
 * kind the engine could put its actors on. The default fork-join pool parks idle workers and needs a wake-up
 * per hand-off; Pekko's {@code affinity-pool-executor} spins its workers on their own queues before idling;
 * a {@code PinnedDispatcher} gives each actor a thread of its own. The result (ns per round trip, two
 * hand-offs) is what one message between engine actors costs, and is the evidence behind the dispatcher
 * choice in engine-actors' {@code reference.conf}. The benchmark thread starts a rally of {@value #RALLY}
 * round trips and waits (parked) for its end, so its own wake-up is amortised away.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class ActorHandoffBenchmark {
  static final int RALLY = 1000;

  @Param({"fork-join", "affinity-pool", "pinned"})
  public String dispatcher;

  private ActorSystem<Command> system;
  private final Semaphore finished = new Semaphore(0);

  /** Messages of the two players. */
  sealed interface Command permits Serve, Ball {}

  /** Starts a rally of {@code left} round trips from the server's side. */
  record Serve(int left) implements Command {}

  /** The ball, carrying who to return it to and how many round trips are left. */
  record Ball(ActorRef<Command> replyTo, int left) implements Command {}

  static Config config(String kind) {
    String executor = switch (kind) {
      case "fork-join" -> """
          type = Dispatcher
          executor = "fork-join-executor"
          fork-join-executor { parallelism-min = 2, parallelism-max = 2 }
          throughput = 1
          """;
      case "affinity-pool" -> """
          type = Dispatcher
          executor = "affinity-pool-executor"
          affinity-pool-executor { parallelism-min = 2, parallelism-max = 2 }
          throughput = 1
          """;
      case "pinned" -> """
          type = PinnedDispatcher
          executor = "thread-pool-executor"
          """;
      default -> throw new IllegalArgumentException("unknown dispatcher kind " + kind);
    };
    return ConfigFactory.parseString("bench-dispatcher {\n" + executor + "}\npekko.loglevel = WARNING\n")
        .withFallback(ConfigFactory.load());
  }

  @Setup(Level.Trial)
  public void start() {
    system = ActorSystem.create(Behaviors.setup(ctx -> {
      DispatcherSelector sel = DispatcherSelector.fromConfig("bench-dispatcher");
      ActorRef<Command> receiver = ctx.spawn(player(null), "receiver", sel);
      ActorRef<Command> server = ctx.spawn(player(receiver), "server", sel);
      return Behaviors.receive(Command.class).onMessage(Serve.class, s -> {
        server.tell(s);
        return Behaviors.same();
      }).build();
    }), "handoff-" + dispatcher, config(dispatcher));
  }

  /** The server (with a partner) starts rallies and counts them; the receiver only returns the ball. */
  private Behavior<Command> player(ActorRef<Command> partner) {
    return Behaviors.setup(ctx -> Behaviors.receive(Command.class)
        .onMessage(Serve.class, s -> {
          partner.tell(new Ball(ctx.getSelf(), s.left()));
          return Behaviors.same();
        })
        .onMessage(Ball.class, b -> {
          if (partner == null) {
            b.replyTo().tell(new Ball(ctx.getSelf(), b.left()));
          } else if (b.left() > 1) {
            partner.tell(new Ball(ctx.getSelf(), b.left() - 1));
          } else {
            finished.release();
          }
          return Behaviors.same();
        }).build());
  }

  @TearDown(Level.Trial)
  public void stop() throws Exception {
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** One rally; JMH divides by {@value #RALLY}, so the score is ns per round trip. */
  @Benchmark
  @OperationsPerInvocation(RALLY)
  public void roundTrip() throws InterruptedException {
    system.tell(new Serve(RALLY));
    // park rather than spin: on a 2-core machine a spinning benchmark thread would take a core from the actors
    finished.acquire();
  }
}
