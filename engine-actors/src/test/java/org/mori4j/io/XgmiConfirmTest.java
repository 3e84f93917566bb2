package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.junit.jupiter.api.Test;
import org.mori4j.io.internal.XgmiMessages;
import org.mori4j.transport.TransportError;

/**
 * The owner's side of XGMI's region confirmation, asked the way a peer's XGMI backend asks (an engine
 * message to the engine actor): only a registered region with its access key and XGMI data is confirmed;
 * everything else is refused with the reason (also a confirmation meant for another incarnation of the owner), and
 * nothing is confirmed after deregistration. The GPU side
 * (a confirmed region really copied, revocation before deregistration returns) is XgmiTransferGpuTest's.
 */
class XgmiConfirmTest {
  private static XgmiMessages.ConfirmReply ask(IoEngine owner, long id, long key) throws Exception {
    return AskPattern.<IoEngineProtocol.Command, XgmiMessages.ConfirmReply>ask(owner.actorRef(),
            r -> new XgmiMessages.Confirm("asker", id, key, BackendType.XGMI, owner.actorRef(), r), Duration.ofSeconds(10), owner.actorSystem().scheduler())
        .toCompletableFuture().get(15, TimeUnit.SECONDS);
  }

  @Test
  void onlyRegisteredGpuMemoryWithItsKeyIsConfirmed() throws Exception {
    try (EnginePair p = new EnginePair(4096)) {
      MemoryDesc host = p.target.registerMemory(p.arena.allocate(8192));
      XgmiMessages.ConfirmReply unknown = ask(p.target, 424242, 1);
      assertEquals(TransportError.NOT_FOUND.wire(), unknown.error());
      assertTrue(unknown.reason().contains("memory id 424242") && unknown.reason().contains(p.target.key()), unknown.reason());

      XgmiMessages.ConfirmReply wrongKey = ask(p.target, host.id(), host.accessKey() + 1);
      assertEquals(TransportError.NOT_FOUND.wire(), wrongKey.error(), "a forged access key learns nothing");
      assertEquals(0, wrongKey.size());

      XgmiMessages.ConfirmReply cpu = ask(p.target, host.id(), host.accessKey());
      assertEquals(TransportError.INVALID_ARGS.wire(), cpu.error());
      assertTrue(cpu.reason().contains("no XGMI data") && cpu.reason().contains("host memory"), cpu.reason());

      // a confirmation meant for another incarnation of the owner (it was restarted) is refused before the region is looked at
      long stale = host.ownerIncarnation() + 1;
      XgmiMessages.ConfirmReply otherIncarnation = AskPattern.<IoEngineProtocol.Command, XgmiMessages.ConfirmReply>ask(p.target.actorRef(),
              r -> new XgmiMessages.Confirm("asker", host.id(), host.accessKey(), BackendType.RDMA, p.target.actorRef(), r, stale),
              Duration.ofSeconds(10), p.target.actorSystem().scheduler())
          .toCompletableFuture().get(15, TimeUnit.SECONDS);
      assertEquals(TransportError.NOT_FOUND.wire(), otherIncarnation.error());
      assertTrue(otherIncarnation.reason().contains(EngineDesc.incarnationText(stale))
          && otherIncarnation.reason().contains(EngineDesc.incarnationText(host.ownerIncarnation())), otherIncarnation.reason());
      assertEquals(0, otherIncarnation.size());

      p.target.deregisterMemory(host);
      XgmiMessages.ConfirmReply gone = ask(p.target, host.id(), host.accessKey());
      assertEquals(TransportError.NOT_FOUND.wire(), gone.error(), "nothing is confirmed after deregistration");
    }
  }
}
