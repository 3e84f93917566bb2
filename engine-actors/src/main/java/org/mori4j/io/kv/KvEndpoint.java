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
 * engine is, and stops when the engine's last cache closes.
 */
final class KvEndpoint {
  private static final Map<IoEngine, KvEndpoint> BY_ENGINE = new ConcurrentHashMap<>();
  private static final AtomicLong SEQ = new AtomicLong();

  final IoEngine engine;
  final ActorRef<KvProtocol.Command> ref;
  final String path;
  final Map<String, KvCache> caches = new ConcurrentHashMap<>();

  private KvEndpoint(IoEngine engine) {
    this.engine = engine;
    String name = "mori4j-kv-" + URLEncoder.encode(engine.key(), StandardCharsets.UTF_8) + "-" + SEQ.incrementAndGet();
    this.ref = engine.actorSystem().systemActorOf(behavior(), name, Props.empty());
    this.path = ActorRefResolver.get(engine.actorSystem()).toSerializationFormat(ref);
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
      if (caches.isEmpty() && BY_ENGINE.remove(engine, this)) ref.tell(new KvProtocol.Stop());
    }
  }

  private Behavior<KvProtocol.Command> behavior() {
    return Behaviors.receive(KvProtocol.Command.class)
        .onMessage(KvProtocol.LayersLanded.class, m -> {
          KvCache c = caches.get(m.cacheName());
          if (c != null) c.landings().landed(m.requestId(), m.fromLayer(), m.toLayer(), m.fromEngine());
          return Behaviors.same();
        })
        .onMessage(KvProtocol.RequestAborted.class, m -> {
          KvCache c = caches.get(m.cacheName());
          if (c != null) c.landings().aborted(m.requestId(), m.fromEngine(), m.reason());
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
