package org.mori4j.io.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngineProtocol;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.RegionConfirmer;
import org.mori4j.transport.TransferBackend;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's side of XGMI's control traffic. As owner, it answers {@link XgmiMessages.Confirm} from its own
 * registrations and remembers who asked, so that deregistering a region (or closing) first makes each of
 * those engines close its IPC mappings of it: freeing exported GPU memory while another process still maps it
 * is undefined behaviour, so deregistration returns only once they have answered (or a handshake timeout
 * passed). As initiator, it gives its XGMI backend the {@link RegionConfirmer} that asks owners, and hands
 * their revocations to the backend. All state belongs to the engine actor; {@link #confirmer} is called from
 * the backend's worker thread and only reads the published {@link Routes}.
 */
final class XgmiControl {
  private static final Logger log = LoggerFactory.getLogger(XgmiControl.class);

  private final String engineKey;
  private final ActorSystem<?> system;
  private final ActorRef<IoEngineProtocol.Command> self;
  private final TransferPath path;
  private final Duration timeout;
  /** Probes an owner whose confirmation is late, so that a killed one fails its askers fast (PeerLiveness). */
  private final PeerLiveness liveness;
  /** Region id to the engines that confirmed it (key to engine actor). */
  private final Map<Long, Map<String, ActorRef<IoEngineProtocol.Command>>> importers = new HashMap<>();
  /** Region id to the engines among them that confirmed it for XGMI, which map its memory. */
  private final Map<Long, java.util.Set<String>> mappers = new HashMap<>();
  /** Owners that confirmed a region to this engine (written by the backend's worker thread), told when this engine closes. */
  private final java.util.concurrent.ConcurrentHashMap<String, ActorRef<IoEngineProtocol.Command>> owners =
      new java.util.concurrent.ConcurrentHashMap<>();

  XgmiControl(String engineKey, ActorSystem<?> system, ActorRef<IoEngineProtocol.Command> self, TransferPath path, Duration timeout) {
    this.engineKey = engineKey;
    this.system = system;
    this.self = self;
    this.path = path;
    this.timeout = timeout;
    this.liveness = PeerLiveness.of(system);
  }

  /** The engine's probe of silent peers (one per engine: one setting read, one probe per peer at a time). */
  PeerLiveness liveness() {
    return liveness;
  }

  /** What a one-sided backend of {@code type} calls (worker thread) to confirm a region with its owner. */
  RegionConfirmer confirmer(BackendType type) {
    return (peerKey, regionId, accessKey, answer) -> {
      Routes routes = path.routes();
      Routes.Peer p = routes.peers().get(peerKey);
      String lostWhy = p == null ? routes.lost().get(peerKey) : null;
      if (lostWhy != null) {
        // lost (or it said it is closing) between the transfer's routing and this question: a loss, not a bad descriptor
        answer.refused(TransportError.PEER_LOST, "engine '" + peerKey + "' was lost: " + lostWhy);
        return;
      }
      if (p == null) {
        answer.refused(TransportError.NOT_FOUND, "engine '" + peerKey + "' is not registered with engine '" + engineKey + "'");
        return;
      }
      ActorRef<IoEngineProtocol.Command> owner = ActorRefResolver.get(system).resolveActorRef(p.desc().controlPath());
      RegionConfirmer.Answer once = once(answer);
      CompletableFuture<XgmiMessages.ConfirmReply> question = AskPattern.<IoEngineProtocol.Command, XgmiMessages.ConfirmReply>ask(owner,
              // the incarnation registered here: the descriptor's own was checked against it when the transfer was accepted
              r -> new XgmiMessages.Confirm(engineKey, regionId, accessKey, type, self, r, p.desc().incarnation()), timeout, system.scheduler())
          .toCompletableFuture();
      // a SIGKILLed owner never answers and nothing else says it died: probe it rather than wait out the timeout
      liveness.watch(owner.path().address(), question, why -> ownerGone(p.desc(), regionId, why, once));
      question.whenComplete((reply, err) -> {
        if (err != null) {
          // an owner that does not answer at all is gone from this engine's view (closed, or its process died), as
          // a TCP peer that stays silent past its timeout: the one-sided backends then lose it
          once.refused(TransportError.PEER_LOST, "engine '" + peerKey + "' did not answer the confirmation of memory id " + regionId + " within "
              + timeout.toMillis() + " ms (" + err.getMessage() + ")");
        } else if (reply.error() != 0) {
          once.refused(TransportError.fromWire(reply.error()), reply.reason());
        } else {
          owners.put(peerKey, owner);
          once.registered(reply.address(), reply.size(), reply.data());
        }
      });
    };
  }

  /**
   * The owner of a region being confirmed was found gone ({@link PeerLiveness}): the confirmation ends now with
   * PEER_LOST, and the engine declares the owner lost (incarnation-checked, so a successor registered meanwhile stays),
   * which fails what every backend and session holds for it.
   */
  private void ownerGone(EngineDesc owner, long regionId, String why, RegionConfirmer.Answer once) {
    String reason = why + " while engine '" + engineKey + "' waited for its confirmation of memory id " + regionId;
    once.refused(TransportError.PEER_LOST, "engine '" + owner.key() + "' was lost: " + reason);
    self.tell(new IoEngineProtocol.MarkPeerLost(owner.key(), owner.incarnation(), reason, system.ignoreRef()));
  }

  /** {@code answer} called at most once: a probe that found the owner gone and the ask's own ending may both come. */
  private static RegionConfirmer.Answer once(RegionConfirmer.Answer answer) {
    java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
    return new RegionConfirmer.Answer() {
      @Override
      public void registered(long address, long size, byte[] backendData) {
        if (done.compareAndSet(false, true)) answer.registered(address, size, backendData);
      }

      @Override
      public void refused(TransportError error, String reason) {
        if (done.compareAndSet(false, true)) answer.refused(error, reason);
      }
    };
  }

  /** Owner side (engine actor, of incarnation {@code incarnation}): answers from {@code locals} and remembers the asker. */
  void confirm(XgmiMessages.Confirm m, org.mori4j.transport.LongTable<Routes.Local> locals, boolean closed, long incarnation) {
    String where = "memory id " + m.regionId() + " of engine '" + engineKey + "'";
    if (closed) {
      // the owner going away is the peer's loss, not a bad descriptor
      m.replyTo().tell(refusal(TransportError.PEER_LOST, "engine '" + engineKey + "' is closed (asked about " + where + ")"));
      return;
    }
    if (m.ownerIncarnation() != 0 && m.ownerIncarnation() != incarnation) {
      // the asker holds a descriptor of the process this one replaced: nothing of it may be served from this memory
      m.replyTo().tell(refusal(TransportError.NOT_FOUND, where + " was asked of incarnation " + EngineDesc.incarnationText(m.ownerIncarnation())
          + ", but this engine is incarnation " + EngineDesc.incarnationText(incarnation) + " (it was restarted; use its new descriptors)"));
      return;
    }
    Routes.Local l = locals.get(m.regionId());
    if (l == null || !l.region().live() || l.desc().accessKey() != m.accessKey()) {
      m.replyTo().tell(refusal(TransportError.NOT_FOUND, where + " is not registered (deregistered, never registered, or another access key)"));
      return;
    }
    MemoryDesc d = l.desc();
    BackendType type = m.backend();
    byte[] data = d.backendData().get(type);
    boolean xgmiNeedsGpu = type == BackendType.XGMI && d.location() != MemoryLocationType.GPU;
    if (xgmiNeedsGpu || data == null) {
      m.replyTo().tell(refusal(TransportError.INVALID_ARGS, where + " has no " + type + " data (" + (xgmiNeedsGpu ? "host memory"
          : "registered before the " + type + " backend was created, or that backend cannot reach it") + ")"));
      return;
    }
    importers.computeIfAbsent(m.regionId(), k -> new HashMap<>()).put(m.fromKey(), m.from());
    if (type == BackendType.XGMI) mappers.computeIfAbsent(m.regionId(), k -> new java.util.HashSet<>()).add(m.fromKey());
    m.replyTo().tell(new XgmiMessages.ConfirmReply(d.address(), d.size(), data, 0, ""));
  }

  private static XgmiMessages.ConfirmReply refusal(TransportError error, String reason) {
    return new XgmiMessages.ConfirmReply(0, 0, new byte[0], error.wire(), reason);
  }

  /**
   * Owner side: tells every engine that confirmed {@code regionId} to drop it; completes when all answered
   * or the timeout passed (an importer that is gone cannot be waited for; it is named in the log).
   */
  CompletableFuture<Void> revokeImporters(long regionId) {
    return revokeImporters(regionId, false);
  }

  /**
   * With {@code closing}, only the engines that map the region by XGMI are waited for: freeing exported GPU memory
   * under a live mapping is undefined behaviour, while an RDMA importer's late work request meets a memory region
   * that no longer exists, which its NIC refuses; those are told without waiting (an importer closing at the same
   * moment would otherwise hold this engine's close for the whole timeout).
   */
  private CompletableFuture<Void> revokeImporters(long regionId, boolean closing) {
    Map<String, ActorRef<IoEngineProtocol.Command>> who = importers.remove(regionId);
    java.util.Set<String> mapping = mappers.remove(regionId);
    if (who == null || who.isEmpty()) return CompletableFuture.completedFuture(null);
    List<CompletableFuture<?>> answers = new ArrayList<>();
    who.forEach((key, ref) -> {
      if (closing && (mapping == null || !mapping.contains(key))) {
        ref.tell(new XgmiMessages.Revoke(engineKey, regionId, system.ignoreRef()));
        return;
      }
      CompletableFuture<Void> ended = new CompletableFuture<>();
      AskPattern.<IoEngineProtocol.Command, XgmiMessages.Revoked>ask(ref,
              r -> new XgmiMessages.Revoke(engineKey, regionId, r), timeout, system.scheduler())
          .whenComplete((ok, err) -> {
            if (ended.complete(null) && err != null)
              log.warn("engine '{}': engine '{}' did not confirm it dropped memory id {} (its mappings, its confirmed keys) within {} ms ({})",
                  engineKey, key, regionId, timeout.toMillis(), err.getMessage());
          });
      // an importer whose process is gone holds no mapping any more: do not hold the deregistration for its timeout
      liveness.watch(ref.path().address(), ended, why -> {
        if (ended.complete(null)) log.warn("engine '{}': not waiting for engine '{}' to drop memory id {}: {}", engineKey, key, regionId, why);
      });
      answers.add(ended);
    });
    return CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new));
  }

  /** The engines that confirmed any of this engine's regions (key to engine actor): told when this engine closes. */
  Map<String, ActorRef<IoEngineProtocol.Command>> importerRefs() {
    Map<String, ActorRef<IoEngineProtocol.Command>> all = new HashMap<>();
    importers.values().forEach(all::putAll);
    return all;
  }

  /** Owner side, on close: every region. */
  CompletableFuture<Void> revokeAllImporters() {
    List<CompletableFuture<Void>> all = new ArrayList<>();
    for (Long id : new ArrayList<>(importers.keySet())) all.add(revokeImporters(id, true));
    return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new));
  }

  /** On close, after the backends stopped (every mapping closed): owners need not wait for this engine any more. */
  void tellOwnersClosed() {
    owners.forEach((key, ref) -> ref.tell(new XgmiMessages.ImporterClosed(engineKey)));
    owners.clear();
  }

  /** An engine that was deregistered, lost or closed will not answer revocations: stop waiting for it. */
  void forgetImporter(String key) {
    importers.values().forEach(m -> m.remove(key));
    mappers.values().forEach(m -> m.remove(key));
  }

  /**
   * Importer side (engine actor): hands the revocation to every backend (XGMI closes its mappings, RDMA forgets the
   * confirmed keys), and answers once all of them are done.
   */
  void revoked(XgmiMessages.Revoke m, java.util.Collection<TransferBackend> backends) {
    Runnable answer = () -> m.replyTo().tell(new XgmiMessages.Revoked(engineKey, m.regionId()));
    if (backends.isEmpty()) {
      answer.run();
      return;
    }
    java.util.concurrent.atomic.AtomicInteger left = new java.util.concurrent.atomic.AtomicInteger(backends.size());
    for (TransferBackend b : backends) b.revoke(m.ownerKey(), m.regionId(), () -> {
      if (left.decrementAndGet() == 0) answer.run();
    });
  }
}
