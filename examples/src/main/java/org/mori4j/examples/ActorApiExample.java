package org.mori4j.examples;

import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.IoEngineProtocol;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.TransferStatus;

/**
 * The actor-message API from an application actor: two engines embedded in the application's own
 * ActorSystem, and an actor that moves a block by {@code ask}ing the engine actor for a write and reacting
 * to the final status it gets back.
 */
public final class ActorApiExample {
  private ActorApiExample() {}

  /** The application actor's protocol. */
  sealed interface Msg {}

  record MoveBlock(MemoryDesc local, MemoryDesc remote, long size, CompletableFuture<TransferStatus> done) implements Msg {}

  record BlockMoved(TransferStatus status, Throwable failure, CompletableFuture<TransferStatus> done) implements Msg {}

  static Behavior<Msg> blockMover(ActorRef<IoEngineProtocol.Command> engine) {
    return Behaviors.setup(ctx -> Behaviors.receive(Msg.class)
        .onMessage(MoveBlock.class, m -> {
          ctx.ask(TransferStatus.class, engine, Duration.ofSeconds(10),
              replyTo -> new IoEngineProtocol.Write(m.local(), 0, m.remote(), 0, m.size(), 1, replyTo),
              (status, failure) -> new BlockMoved(status, failure, m.done()));
          return Behaviors.same();
        })
        .onMessage(BlockMoved.class, m -> {
          if (m.failure() != null) m.done().completeExceptionally(m.failure());
          else m.done().complete(m.status());
          return Behaviors.same();
        })
        .build());
  }

  public static void main(String[] args) throws Exception {
    ActorSystem<Void> app = ActorSystem.create(Behaviors.empty(), "application");
    try (Arena arena = Arena.ofShared();
         IoEngine initiator = IoEngine.create(app, "actor-initiator", IoEngineConfig.loopback());
         IoEngine target = IoEngine.create(app, "actor-target", IoEngineConfig.loopback())) {
      initiator.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      target.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      initiator.registerRemoteEngine(target.engineDesc());
      MemoryDesc local = initiator.registerMemory(arena.allocate(4096));
      MemoryDesc remote = target.registerMemory(arena.allocate(4096));

      ActorRef<Msg> mover = app.systemActorOf(blockMover(initiator.actorRef()), "block-mover",
          org.apache.pekko.actor.typed.Props.empty());
      CompletableFuture<TransferStatus> done = new CompletableFuture<>();
      mover.tell(new MoveBlock(local, remote, 4096, done));
      TransferStatus st = done.get(10, TimeUnit.SECONDS);
      System.out.println("write through the actor API: " + st.code());
      if (!st.succeeded()) throw new IllegalStateException("example failed: " + st);
    } finally {
      app.terminate();
      app.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }
}
