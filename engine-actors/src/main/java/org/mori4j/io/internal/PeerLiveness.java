package org.mori4j.io.internal;

import com.typesafe.config.Config;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorSystem;

/**
 * Tells an engine whose process is gone from one that is only slow, for a question to it that would otherwise wait
 * out its whole timeout: the region confirmation that RDMA and XGMI ask of a region's owner before their first
 * transfer to it, and the revocation an owner asks of each engine that confirmed a region it deregisters. A SIGKILLed
 * peer leaves nothing behind that says so to an engine that only asked it something: no closing notice, no posted
 * work whose queue pair could fail, no data connection to break, and remote death watch outside Pekko Cluster would
 * wait out its own heartbeat pause and then quarantine the address. So while such a
 * question is unanswered, every {@code mori4j.engine.peer-liveness-probe} this opens (and at once closes) a TCP
 * connection to the peer's control address, the port its Pekko remoting listens on. A refused connection means
 * no process listens there any more (the peer's host answered for it): the peer is gone. A connection that is
 * accepted means the peer's process is there, however busy or paused (its kernel accepts for it), and the
 * question is waited for as before; no answer at all (a host that is down, a partition) proves nothing either way,
 * and the question ends at its own timeout. Off where remoting does not listen on TCP (Artery over Aeron UDP) and for
 * peers in this ActorSystem (no address to connect to).
 */
final class PeerLiveness {
  /** What one probe found out about a peer. */
  enum Verdict {
    /** Its control port accepted a connection: the process is there. */
    ALIVE,
    /** Its control port refused the connection: nothing listens there any more. */
    GONE,
    /** Neither within the probe's time (host down, network loss, unresolvable name): nothing is concluded. */
    UNKNOWN
  }

  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(PeerLiveness.class);

  /** {@code mori4j.engine.peer-liveness-probe}; null: off. */
  private final Duration every;
  private final ActorSystem<?> system;
  /** One probe per control address at a time; questions asked of the same peer at once share it. */
  private final ConcurrentHashMap<String, CompletableFuture<Verdict>> running = new ConcurrentHashMap<>();

  PeerLiveness(ActorSystem<?> system, Duration every) {
    this.system = system;
    this.every = every;
  }

  /** Reads the setting from {@code system}'s configuration; off where its remoting does not use TCP. */
  static PeerLiveness of(ActorSystem<?> system) {
    Config c = system.settings().config();
    Duration every = probeInterval(c);
    if (every != null && !remotingOverTcp(c)) {
      log.info(
          "mori4j.engine.peer-liveness-probe is off: this ActorSystem's remoting does not listen on TCP ({}); a dead peer is noticed at the question's timeout",
          c.hasPath("pekko.remote.artery.transport") ? c.getString("pekko.remote.artery.transport") : "no transport");
      every = null;
    }
    return new PeerLiveness(system, every);
  }

  /** {@code mori4j.engine.peer-liveness-probe}: a positive duration, or {@code off} (null). */
  static Duration probeInterval(Config root) {
    return EngineSettings.positiveOrOff(root, "mori4j.engine.peer-liveness-probe");
  }

  /** Artery over TCP or TLS (the default), or classic remoting (TCP): a peer's control address is a TCP listener. */
  private static boolean remotingOverTcp(Config c) {
    if (!c.hasPath("pekko.remote.artery.enabled") || !c.getBoolean("pekko.remote.artery.enabled")) return true;
    String t = c.hasPath("pekko.remote.artery.transport") ? c.getString("pekko.remote.artery.transport").toLowerCase(Locale.ROOT) : "";
    return t.equals("tcp") || t.equals("tls-tcp");
  }

  /**
   * Probes the peer at {@code peer} (its engine actor's address) every probe interval until {@code question}
   * completes; the first probe that finds it gone calls {@code gone} (once) with what was seen, and probing stops.
   * Nothing happens when probing is off or the peer lives in this ActorSystem. Bounded by the question: its ask
   * timeout completes it.
   */
  void watch(Address peer, CompletableFuture<?> question, Consumer<String> gone) {
    if (every == null || peer.getHost().isEmpty() || peer.getPort().isEmpty()) return;
    String host = peer.getHost().get();
    int port = peer.getPort().get();
    AtomicBoolean told = new AtomicBoolean();
    schedule(host, port, question, why -> {
      if (told.compareAndSet(false, true)) gone.accept(why);
    });
  }

  private void schedule(String host, int port, CompletableFuture<?> question, Consumer<String> gone) {
    org.apache.pekko.actor.Cancellable timer;
    try {
      timer = system.scheduler().scheduleOnce(every, () -> {
        if (question.isDone()) return;
        probe(host, port).thenAccept(v -> {
          if (question.isDone()) return;
          if (v == Verdict.GONE) gone.accept("its control address " + host + ":" + port + " refused a connection (no process listens there)");
          else schedule(host, port, question, gone);
        });
      }, system.executionContext());
    } catch (IllegalStateException shuttingDown) {
      return; // this ActorSystem is terminating: the question ends with it
    }
    // most questions are answered in milliseconds: their timer goes at once rather than lingering for the interval
    question.whenComplete((r, e) -> timer.cancel());
  }

  /**
   * One probe of the control address {@code host}:{@code port}, connecting on a virtual thread for at most the
   * probe interval (the next probe asks again); a probe already running for the address is shared.
   */
  private CompletableFuture<Verdict> probe(String host, int port) {
    String at = host + ":" + port;
    int limitMs = (int) Math.max(1, Math.min(Integer.MAX_VALUE, every.toMillis()));
    CompletableFuture<Verdict> mine = new CompletableFuture<>();
    CompletableFuture<Verdict> other = running.putIfAbsent(at, mine);
    if (other != null) return other;
    // the name is resolved here too, on the probe's own thread: a slow DNS answer must not hold a dispatcher thread
    Thread.ofVirtual().name("mori4j-peer-probe").start(() -> {
      Verdict v = Verdict.UNKNOWN;
      try {
        v = connect(new InetSocketAddress(host, port), limitMs);
      } finally {
        running.remove(at, mine);
        mine.complete(v);
      }
    });
    return mine;
  }

  /**
   * ECONNREFUSED is the only answer taken as proof of death: within a limit of seconds the kernel gives a TCP connect
   * no other error that is reported as ConnectException (its own timeout, ETIMEDOUT, takes minutes), while an
   * unreachable host or network is a NoRouteToHost or plain SocketException and proves nothing.
   */
  static Verdict connect(InetSocketAddress to, int limitMs) {
    if (to.isUnresolved()) return Verdict.UNKNOWN;
    try (Socket s = new Socket()) {
      s.connect(to, limitMs);
      return Verdict.ALIVE;
    } catch (ConnectException e) {
      return Verdict.GONE;
    } catch (IOException | RuntimeException e) {
      return Verdict.UNKNOWN;
    }
  }
}
