package org.mori4j.io.kv;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.mori4j.io.IoEngine;

/**
 * One engine's KV endpoint: the actor that peers tell "layers landed" and ask for a cache's descriptor, and the
 * caches open on that engine by name. It lives in the engine's ActorSystem, so it is reachable wherever the
 * engine is, and stops when the engine's last cache closes. It also matches senders' announced writes with what
 * this engine's backend recorded ({@link KvInbound}), so a range is reported landed without waiting for the
 * sender's message; for XGMI peers on this host (whose targets are never told of writes) the same matching reads
 * the senders' posts on this engine's landing board ({@link KvBoards}).
 */
final class KvEndpoint {
  private static final Map<IoEngine, KvEndpoint> BY_ENGINE = new ConcurrentHashMap<>();
  private static final AtomicLong SEQ = new AtomicLong();

  final IoEngine engine;
  final ActorRef<KvProtocol.Command> ref;
  final String path;
  final Map<String, KvCache> caches = new ConcurrentHashMap<>();
  private final KvInbound inbound;
  private final AutoCloseable inboundSubscription;
  final KvBoards boards;
  /** Tests: drop the senders' {@link KvProtocol.LayersLanded} messages, so only the landing board can report. */
  volatile boolean ignoreSenderMessages;

  private KvEndpoint(IoEngine engine) {
    this.engine = engine;
    this.inbound = new KvInbound(engine, this::tellSelf, this::boardRangeLanded);
    // first: it refuses bad settings before anything else exists (its reader needs the actor only once ranges are announced)
    this.boards = new KvBoards(engine, inbound, "mori4j-kv-board-" + engine.key());
    String name = "mori4j-kv-" + URLEncoder.encode(engine.key(), StandardCharsets.UTF_8) + "-" + SEQ.incrementAndGet();
    try {
      this.ref = engine.actorSystem().systemActorOf(behavior(), name, Props.empty());
    } catch (RuntimeException e) {
      boards.close();
      throw e;
    }
    this.path = ActorRefResolver.get(engine.actorSystem()).toSerializationFormat(ref);
    this.inboundSubscription = engine.onInboundLanded(inbound);
  }

  /** The endpoint of {@code engine} while it has an open cache (tests). */
  static KvEndpoint of(IoEngine engine) {
    return BY_ENGINE.get(engine);
  }

  /**
   * A range whose writes the landing board reported, on the board reader's thread (or the endpoint's, when the
   * announcement came last): published at once, then settled on the endpoint's thread (whose own publication of it
   * then changes nothing).
   */
  private void boardRangeLanded(KvInbound.Expected e) {
    KvProtocol.LayersSent s = e.sent;
    KvHopTrace.mark(KvHopTrace.RECEIVED, s.requestId(), s.fromLayer(), s.toLayer());
    KvCache c = caches.get(s.cacheName());
    if (c != null) c.landings().landed(s.requestId(), s.migration(), s.fromLayer(), s.toLayer(), s.fromEngine());
    KvHopTrace.mark(KvHopTrace.PUBLISHED, s.requestId(), s.fromLayer(), s.toLayer());
    ref.tell(new KvProtocol.InboundLanded(e));
  }

  private void tellSelf(KvProtocol.Command c) {
    ref.tell(c);
  }

  /** Adds {@code cache} to its engine's endpoint (started on the first cache); refuses a name already open there. */
  static KvEndpoint register(KvCache cache) {
    synchronized (BY_ENGINE) {
      KvEndpoint e = BY_ENGINE.computeIfAbsent(cache.engine(), KvEndpoint::new);
      if (e.caches.putIfAbsent(cache.name(), cache) != null)
        throw new IllegalArgumentException("a KV cache named '" + cache.name() + "' is already open on engine '" + cache.engine().key() + "'");
      return e;
    }
  }

  void unregister(KvCache cache) {
    synchronized (BY_ENGINE) {
      caches.remove(cache.name(), cache);
      if (caches.isEmpty() && BY_ENGINE.remove(engine, this)) {
        try {
          inboundSubscription.close();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
        boards.close();
        ref.tell(new KvProtocol.Stop());
      }
    }
  }

  private Behavior<KvProtocol.Command> behavior() {
    return Behaviors.receive(KvProtocol.Command.class)
        .onMessage(KvProtocol.LayersLanded.class, m -> {
          KvHopTrace.mark(KvHopTrace.MESSAGE, m.requestId(), m.fromLayer(), m.toLayer());
          if (ignoreSenderMessages) return Behaviors.same();
          KvHopTrace.mark(KvHopTrace.RECEIVED, m.requestId(), m.fromLayer(), m.toLayer());
          KvCache c = caches.get(m.cacheName());
          if (c != null) c.landings().landed(m.requestId(), m.migration(), m.fromLayer(), m.toLayer(), m.fromEngine());
          KvHopTrace.mark(KvHopTrace.PUBLISHED, m.requestId(), m.fromLayer(), m.toLayer());
          inbound.senderReported(m.fromEngine(), m.requestId(), m.migration(), m.fromLayer(), m.toLayer());
          return Behaviors.same();
        })
        .onMessage(KvProtocol.LayersSent.class, m -> {
          if (caches.containsKey(m.cacheName())) inbound.expect(m);
          return Behaviors.same();
        })
        .onMessage(KvProtocol.InboundLanded.class, m -> {
          KvProtocol.LayersSent s = m.range().sent;
          inbound.settled(m.range());
          KvCache c = caches.get(s.cacheName());
          if (c != null) c.landings().landed(s.requestId(), s.migration(), s.fromLayer(), s.toLayer(), s.fromEngine());
          return Behaviors.same();
        })
        .onMessage(KvProtocol.InboundForgotten.class, m -> {
          inbound.forgottenOnEndpoint(m.engineKey());
          return Behaviors.same();
        })
        .onMessage(KvProtocol.RequestAborted.class, m -> {
          inbound.senderReported(m.fromEngine(), m.requestId(), m.migration(), -1, -1);
          KvCache c = caches.get(m.cacheName());
          if (c != null) c.landings().aborted(m.requestId(), m.migration(), m.fromEngine(), m.reason());
          return Behaviors.same();
        })
        .onMessage(KvProtocol.Describe.class, m -> {
          KvCache c = caches.get(m.cacheName());
          m.replyTo().tell(new KvProtocol.Description(m.cacheName(), c == null ? new byte[0] : c.desc().toBytes()));
          return Behaviors.same();
        })
        .onMessage(KvProtocol.Stop.class, m -> Behaviors.stopped())
        .build();
  }
}
