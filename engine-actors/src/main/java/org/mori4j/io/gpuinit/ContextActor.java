package org.mori4j.io.gpuinit;

import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Terminated;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * The actor peers talk to for one {@link RdmaDeviceContext}: it answers rkey lookups and connection probes itself
 * (from the context's concurrent key tables) and hands everything that touches endpoint state (SENDs, notices,
 * atomics, answers to this context's own requests) to the proxy's queue. It watches the peer contexts that
 * endpoints connect to: a peer's termination (seen where remote deathwatch works, under Pekko Cluster) or its
 * {@link GpuInitProtocol.Closing} notice fails that peer's work with RETRY_EXC_ERR.
 */
final class ContextActor {
  private ContextActor() {}

  static Behavior<GpuInitProtocol.Command> create(RdmaDeviceContext ctx) {
    return Behaviors.setup(actor -> Behaviors.receive(GpuInitProtocol.Command.class)
        .onMessage(GpuInitProtocol.LookupRkey.class, m -> {
          Region r = ctx.rkeys.get(m.rkey());
          m.replyTo().tell(r == null
              ? new GpuInitProtocol.RkeyAnswer(m.corr(), m.rkey(), false, 0, 0, 0, new byte[0])
              : new GpuInitProtocol.RkeyAnswer(m.corr(), m.rkey(), true, r.address(), r.size(), r.access(), r.desc().toBytes()));
          return Behaviors.same();
        })
        .onMessage(GpuInitProtocol.Probe.class, m -> {
          RdmaEndpoint ep = ctx.endpoints.get(m.qpn());
          if (ep != null) ctx.peerContexts.add(m.from());
          m.replyTo().tell(ep == null || ep.isClosed()
              ? new GpuInitProtocol.ProbeAnswer(m.qpn(), false, new byte[0], "no endpoint qpn " + m.qpn() + " in context " + ctx.name)
              : new GpuInitProtocol.ProbeAnswer(m.qpn(), true, ep.internal.desc().toBytes(), ""));
          return Behaviors.same();
        })
        .onMessage(GpuInitProtocol.Watch.class, m -> {
          actor.watch(m.peer());
          return Behaviors.same();
        })
        .onMessage(GpuInitProtocol.Ping.class, m -> {
          m.replyTo().tell(new GpuInitProtocol.Pong(m.corr()));
          return Behaviors.same();
        })
        .onMessage(GpuInitProtocol.Closing.class, m -> {
          ctx.proxy.submit(new Proxy.PeerGone(m.from(), "its context closed (or its engine stopped)"));
          return Behaviors.same();
        })
        .onMessage(GpuInitProtocol.Stop.class, m -> Behaviors.stopped())
        .onMessage(GpuInitProtocol.Wire.class, m -> {
          ctx.proxy.submit(m);
          return Behaviors.same();
        })
        .onSignal(Terminated.class, t -> {
          ctx.proxy.submit(new Proxy.PeerGone(t.getRef(), "its context actor terminated (engine closed or process gone)"));
          return Behaviors.same();
        })
        .build());
  }
}
