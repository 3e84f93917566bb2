package org.mori4j.examples;

import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.IoEngineProtocol;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.TransferStatus;

/**
 * The actor-message API: a transfer requested with {@code ask} on the engine's actor, the way an
 * application actor (or any code that lives with Pekko) talks to the engine. The reply is the final status.
 */
public final class ActorApiExample {
  private ActorApiExample() {}

  public static void main(String[] args) throws Exception {
    try (Arena arena = Arena.ofShared();
         IoEngine initiator = IoEngine.create("actor-initiator", IoEngineConfig.loopback());
         IoEngine target = IoEngine.create("actor-target", IoEngineConfig.loopback())) {
      initiator.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      target.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      initiator.registerRemoteEngine(target.engineDesc());
      MemoryDesc local = initiator.registerMemory(arena.allocate(4096));
      MemoryDesc remote = target.registerMemory(arena.allocate(4096));

      CompletionStage<TransferStatus> reply = AskPattern.ask(initiator.actorRef(),
          replyTo -> new IoEngineProtocol.Write(local, 0, remote, 0, 4096, 1, replyTo),
          Duration.ofSeconds(10), initiator.actorSystem().scheduler());
      TransferStatus st = reply.toCompletableFuture().get();
      System.out.println("write through the actor API: " + st.code());
      if (!st.succeeded()) throw new IllegalStateException("example failed: " + st);
    }
  }
}
