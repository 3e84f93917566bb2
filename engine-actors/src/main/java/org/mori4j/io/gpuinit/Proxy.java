package org.mori4j.io.gpuinit;

import static org.mori4j.io.gpuinit.GpuQueueLayout.*;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.TransferStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The host proxy of one {@link RdmaDeviceContext}: the part a NIC replaces (emulation). A Pekko actor on its own
 * pinned thread ({@code mori4j.dispatchers.gpu-proxy}) that polls the doorbells of the context's connected
 * endpoints, runs their work requests through the engine and writes completions, and executes what peers ask of
 * this context (SENDs and write-with-immediate notices into receive queues, atomics). Everything reaches it through
 * one queue ({@link #submit}), so the endpoint state has one writer and never needs a lock. It never blocks on a
 * transfer: before it parks, the oldest engine transfer of each endpoint is set to wake it ({@link #wake}), and it
 * reads the statuses in WQE order. Duty cycle:
 * after activity it spins for {@code proxy-spin}, then parks {@code proxy-park} at a time until woken, doubling the
 * park while nothing at all is in flight up to {@code proxy-park-max}; each Poll
 * message runs at most {@code proxy-max-run} so that the actor's mailbox (a stop) gets its turn.
 */
final class Proxy {
  private static final Logger LOG = LoggerFactory.getLogger(Proxy.class);

  enum Poll { INSTANCE }

  record AddEndpoint(EndpointRunner runner) {}

  record RemoveEndpoint(EndpointRunner runner, CompletableFuture<Void> done) {}

  record Connect(EndpointRunner runner, Peer peer, CompletableFuture<Void> done) {}

  record PeerGone(org.apache.pekko.actor.typed.ActorRef<?> peer, String reason) {}

  record Shutdown(CompletableFuture<Void> done) {}

  /** Prepare the GPU resources for a GPU region of {@code device} (and its atomics when {@code atomics}). */
  record PrepareGpu(int device, boolean atomics, CompletableFuture<Void> done) {}

  private record Lookup(String path, int rkey) {}

  private final RdmaDeviceContext ctx;
  private final ConcurrentLinkedQueue<Object> inbox = new ConcurrentLinkedQueue<>();
  private final List<EndpointRunner> runners = new ArrayList<>();
  private final Map<Integer, EndpointRunner> byQpn = new HashMap<>();
  private final Map<Long, Lookup> lookups = new HashMap<>();
  private final Map<Long, Peer> pings = new HashMap<>();
  /** Liveness probes sent (tests check that a slow live peer was probed and not declared lost). */
  volatile long pingsSent;
  private final TargetAtomics atomics;
  private long corr;
  private volatile Thread thread;
  private volatile boolean stopped;
  /** Engine completions call this: one shared instance, no allocation per work request. */
  final BiConsumer<TransferStatus, Throwable> wake = (s, t) -> unpark();

  Proxy(RdmaDeviceContext ctx) {
    this.ctx = ctx;
    this.atomics = new TargetAtomics(ctx);
  }

  /** Hands {@code message} to the proxy thread from any thread. */
  void submit(Object message) {
    inbox.add(message);
    unpark();
  }

  private void unpark() {
    Thread t = thread;
    if (t != null) LockSupport.unpark(t);
  }

  Behavior<Poll> behavior() {
    return Behaviors.setup(actor -> {
      actor.getSelf().tell(Poll.INSTANCE);
      return Behaviors.receive(Poll.class).onMessage(Poll.class, p -> {
        thread = Thread.currentThread();
        GpuInitSettings s = ctx.settings;
        long start = System.nanoTime();
        long lastWork = start;
        long park = s.parkNanos();
        while (true) {
          long now = System.nanoTime();
          int work;
          try {
            work = round(now);
          } catch (RuntimeException e) {
            LOG.error("GPU-initiated host proxy of context {}: round failed", ctx.name, e);
            work = 0;
          }
          if (stopped) return Behaviors.stopped();
          now = System.nanoTime();
          if (work > 0) {
            lastWork = now;
            park = s.parkNanos();
          } else if (now - lastWork < s.spinNanos()) {
            Thread.onSpinWait();
          } else {
            for (int i = 0; i < runners.size(); i++) runners.get(i).hookHead();
            LockSupport.parkNanos(park);
            // the longer nothing happens, the longer the park (up to proxy-park-max), unless work is in flight
            park = busy() ? s.parkNanos() : Math.min(s.parkMaxNanos(), park * 2);
          }
          if (System.nanoTime() - start > s.maxRunNanos()) break;
        }
        actor.getSelf().tell(Poll.INSTANCE);
        return Behaviors.same();
      }).build();
    });
  }

  private boolean busy() {
    for (EndpointRunner r : runners) if (r.busy()) return true;
    return atomics.busy();
  }

  private int round(long now) {
    int work = drain(now);
    for (int i = 0; i < runners.size(); i++) work += runners.get(i).poll(now);
    work += atomics.poll();
    return work;
  }

  private int drain(long now) {
    int n = 0;
    Object m;
    while ((m = inbox.poll()) != null) {
      n++;
      switch (m) {
        case GpuInitProtocol.PeerOpResult r -> {
          EndpointRunner ep = byQpn.get(r.srcQpn());
          if (ep != null) ep.onResult(r);
        }
        case GpuInitProtocol.PeerOp op -> inbound(op, now);
        case GpuInitProtocol.RkeyAnswer a -> answered(a);
        case GpuInitProtocol.Pong pong -> {
          Peer p = pings.remove(pong.corr());
          if (p != null && p.pingCorr == pong.corr()) {
            p.pingCorr = 0;
            p.lastPong = now;
          }
        }
        case AddEndpoint a -> {
          runners.add(a.runner());
          byQpn.put(a.runner().ep.qpn(), a.runner());
        }
        case Connect c -> {
          c.runner().connect(c.peer());
          c.done().complete(null);
        }
        case RemoveEndpoint r -> {
          r.runner().abandon();
          runners.remove(r.runner());
          byQpn.remove(r.runner().ep.qpn());
          r.done().complete(null);
        }
        case PeerGone g -> peerLost(g.peer(), g.reason());
        case PrepareGpu g -> {
          try {
            ctx.memory.prepare(g.device());
            if (g.atomics()) atomics.prepare(g.device());
            g.done().complete(null);
          } catch (RuntimeException e) {
            g.done().completeExceptionally(e);
          }
        }
        case Shutdown s -> {
          for (EndpointRunner r : runners) r.abandon();
          runners.clear();
          byQpn.clear();
          atomics.close();
          stopped = true;
          s.done().complete(null);
          return n;
        }
        default -> LOG.warn("GPU-initiated host proxy: unexpected message {}", m.getClass().getName());
      }
    }
    return n;
  }

  void peerLost(org.apache.pekko.actor.typed.ActorRef<?> peer, String reason) {
    for (EndpointRunner r : runners) {
      if (r.peer != null && r.peer.ref.equals(peer) && !r.peer.dead) {
        LOG.warn("GPU-initiated endpoint qpn {} (host proxy): peer {} lost ({}); its work requests complete with RETRY_EXC_ERR",
            r.ep.qpn(), r.peer, reason);
        r.peerLost(reason);
      }
    }
  }

  private void inbound(GpuInitProtocol.PeerOp op, long now) {
    if (op.op() == OP_ATOMIC_CMP_AND_SWP || op.op() == OP_ATOMIC_FETCH_AND_ADD) {
      atomics.execute(op);
      return;
    }
    EndpointRunner ep = byQpn.get(op.dstQpn());
    if (ep == null) {
      op.replyTo().tell(new GpuInitProtocol.PeerOpResult(op.srcQpn(), op.wqeIndex(), WC_REM_INV_REQ_ERR, 0,
          "no endpoint qpn " + op.dstQpn() + " in context " + ctx.name));
      return;
    }
    ep.receives.arrive(op, now);
  }

  /** The peer's region for {@code rkey}: known, {@link Peer#NOT_FOUND}, or {@link Peer#PENDING} while a lookup runs. */
  Region remoteRegion(EndpointRunner ep, int rkey) {
    Peer p = ep.peer;
    Region r = p.keys.get(rkey);
    if (r != null) return r;
    p.keys.put(rkey, Peer.PENDING);
    p.lookupSince.put(rkey, System.nanoTime());
    long c = ++corr;
    lookups.put(c, new Lookup(p.path, rkey));
    p.ref.tell(new GpuInitProtocol.LookupRkey(rkey, c, ctx.self));
    return Peer.PENDING;
  }

  /**
   * The oldest work request of {@code ep} has waited on its peer (an engine transfer or a peer operation) for
   * {@code liveness-probe-after}: ask the peer's context whether it is alive, and declare the peer lost when no answer
   * comes within {@code liveness-probe-timeout}. A dead process is otherwise noticed only by the engine's own timeout,
   * which may be longer than the device's wait; a live but slow peer answers and the work request keeps waiting.
   */
  void checkLiveness(EndpointRunner ep, WqeRecord r, long now) {
    Peer p = ep.peer;
    GpuInitSettings s = ctx.settings;
    if (p.pingCorr != 0) {
      if (now - p.pingSentAt > s.probeTimeoutNanos())
        peerLost(p.ref, "its context did not answer a liveness probe within " + s.probeTimeoutNanos() / 1_000_000 + " ms");
      return;
    }
    if (now - r.startedAt < s.probeAfterNanos() || now - p.lastPong < s.probeAfterNanos()) return;
    long c = ++corr;
    p.pingCorr = c;
    p.pingSentAt = now;
    pings.put(c, p);
    pingsSent++;
    p.ref.tell(new GpuInitProtocol.Ping(c, ctx.self));
  }

  /** A lookup of {@code rkey} has gone unanswered for {@code peer-timeout}. */
  boolean lookupOverdue(EndpointRunner ep, int rkey, long now) {
    Long since = ep.peer.lookupSince.get(rkey);
    return since != null && now - since > ctx.settings.peerTimeoutNanos();
  }

  private void answered(GpuInitProtocol.RkeyAnswer a) {
    Lookup l = lookups.remove(a.corr());
    if (l == null) return;
    Region r = Peer.NOT_FOUND;
    if (a.found()) {
      try {
        MemoryDesc d = MemoryDesc.fromBytes(a.desc());
        r = new Region(a.address(), a.size(), 0, a.rkey(), a.access(), d, d.location(), d.deviceId(), null, false);
      } catch (IllegalArgumentException e) {
        LOG.warn("GPU-initiated host proxy: peer {} answered rkey {} with a malformed descriptor: {}", l.path(), a.rkey(), e.getMessage());
      }
    }
    for (EndpointRunner ep : runners) {
      if (ep.peer != null && ep.peer.path.equals(l.path())) {
        ep.peer.keys.put(l.rkey(), r);
        ep.peer.lookupSince.remove(l.rkey());
      }
    }
  }

  /** Messages crossing the network carry at most 4 KiB of text. */
  static String clip(String s) {
    if (s == null) return "";
    return s.length() > 1000 ? s.substring(0, 1000) + "..." : s;
  }
}
