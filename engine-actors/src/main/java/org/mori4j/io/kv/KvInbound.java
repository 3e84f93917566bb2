package org.mori4j.io.kv;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.mori4j.io.IoEngine;
import org.mori4j.io.TransferStatus;

/**
 * The receiving engine's short cut for "layers landed": the sender announces the uids of a layer range's writes
 * ({@link KvProtocol.LayersSent}, before the data), and this engine's own backend tells it when each of those
 * writes has landed ({@link IoEngine#onInboundLanded}); once all have, the range is reported landed. That saves the
 * acknowledgement's trip back to the sender and the sender's {@link KvProtocol.LayersLanded} hop over remoting,
 * which stays as the fallback (XGMI targets are never told of writes; a record dropped by a full notification
 * table never arrives): whichever comes first reports the range, {@link KvLandings} ignores the second.
 *
 * <p>Each write is claimed by popping it ({@link IoEngine#popInboundTransferStatus}), which happens exactly once
 * whichever of the announcement (writes that landed before it) or the backend's news (writes that land after it)
 * gets there first: the uid is registered before the announcement pops, and the backend tells only after it
 * recorded. Announcements are kept per request on the endpoint's thread ({@link #expect}, {@link #settled},
 * {@link #aborted}); at most {@link #MAX_RANGES} ranges are waited for, the oldest dropped first (the fallback
 * still reports them). When an initiator restarts as a new incarnation (its uids start again) its announcements
 * are dropped before any of its new writes can be matched against them.
 *
 * <p>XGMI targets are never told of writes, so for senders on this host this engine's {@link KvLandingBoard} stands
 * in for the backend's record: a sender that announced its writes as board writes ({@link KvProtocol.LayersSent#board})
 * posts each write's uid there when it completed, and the board's reader hands it to {@link #boardEntry}. An entry
 * counts only for a write announced by the sender its id names (a hash of the engine key) in the incarnation the entry
 * names ({@link KvProtocol.LayersSent#fromIncarnation}: a restarted sender's old entries never match its new writes,
 * whose uids start again); entries that come before
 * their announcement wait in a bounded table ({@link #MAX_EARLY}), anything else is ignored. A range completed that
 * way is handed to {@code boardLanded} on the reader's thread (published at once) rather than through the endpoint's
 * mailbox.
 */
final class KvInbound implements IoEngine.InboundListener {
  static final int MAX_RANGES = 1 << 16;
  /** Board entries kept while their announcement has not arrived; the oldest go first. */
  static final int MAX_EARLY = 1 << 16;

  /** One announced range: its writes not yet claimed are {@code left}. */
  static final class Expected {
    final KvProtocol.LayersSent sent;
    final AtomicInteger left;

    Expected(KvProtocol.LayersSent sent) {
      this.sent = sent;
      this.left = new AtomicInteger(sent.uids().length);
    }
  }

  private record Key(String engine, long uid) {}

  private record BoardKey(long sender, long incarnation, long uid) {}

  private final IoEngine engine;
  private final Consumer<KvProtocol.Command> self;
  private final ConcurrentHashMap<Key, Expected> byUid = new ConcurrentHashMap<>();
  // the endpoint's thread only
  private final Map<String, List<Expected>> byRequest = new HashMap<>();
  private final ArrayDeque<Expected> oldestFirst = new ArrayDeque<>();
  // the landing board's facts: sender id -> engine key (from announcements), entries not yet announced
  private final Consumer<Expected> boardLanded;
  private final AtomicInteger boardRanges = new AtomicInteger();
  private final ConcurrentHashMap<Long, String> boardSenders = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<BoardKey, Boolean> early = new ConcurrentHashMap<>();
  private final ArrayDeque<BoardKey> earlyOrder = new ArrayDeque<>(); // the board reader's thread only
  private volatile Runnable boardWake = () -> {};

  /** {@code self} tells the endpoint (a local message: the range's landing is reported on its thread). */
  KvInbound(IoEngine engine, Consumer<KvProtocol.Command> self) {
    this(engine, self, e -> self.accept(new KvProtocol.InboundLanded(e)));
  }

  /** {@code boardLanded}: a range completed by board entries (on the board reader's or the endpoint's thread). */
  KvInbound(IoEngine engine, Consumer<KvProtocol.Command> self, Consumer<Expected> boardLanded) {
    this.engine = engine;
    this.self = self;
    this.boardLanded = boardLanded;
  }

  /** Called when board writes become expected (the board's reader wakes up). */
  void onBoardExpected(Runnable wake) {
    this.boardWake = wake;
  }

  /** Whether ranges announced as board writes are waited for (the board's reader spins only then). */
  boolean boardExpected() {
    return boardRanges.get() > 0;
  }

  /** Endpoint's thread: a sender's announcement; claims the writes that already landed. */
  void expect(KvProtocol.LayersSent m) {
    Expected e = new Expected(m);
    for (long u : m.uids()) byUid.put(new Key(m.fromEngine(), u), e);
    byRequest.computeIfAbsent(requestKey(m.fromEngine(), m.requestId(), m.migration()), k -> new ArrayList<>(4)).add(e);
    oldestFirst.add(e);
    if (m.board()) boardRanges.incrementAndGet();
    while (oldestFirst.size() > MAX_RANGES) drop(oldestFirst.peekFirst());
    if (m.board()) {
      long sender = KvLandingBoard.hash64(m.fromEngine());
      boardSenders.put(sender, m.fromEngine());
      // entries that came before this announcement (the exclusive claim on each is its removal from early)
      for (long u : m.uids()) if (early.remove(new BoardKey(sender, m.fromIncarnation(), u)) != null) claimBoard(m.fromEngine(), m.fromIncarnation(), u);
      boardWake.run();
    }
    for (long u : m.uids()) claim(m.fromEngine(), u);
  }

  /** The board's reader thread: an entry of the landing board (garbage included). */
  void boardEntry(int kind, long sender, long incarnation, long uid) {
    if (kind != KvLandingBoard.KIND_LANDED) return; // "issued": only wakes the reader up
    String from = boardSenders.get(sender);
    if (from != null && claimBoard(from, incarnation, uid)) return;
    BoardKey k = new BoardKey(sender, incarnation, uid);
    early.put(k, Boolean.TRUE);
    earlyOrder.add(k);
    while (earlyOrder.size() > MAX_EARLY) early.remove(earlyOrder.poll());
    // the announcement may have been registered in between: whoever removes the key claims the write
    from = boardSenders.get(sender);
    if (from != null && byUid.containsKey(new Key(from, uid)) && early.remove(k) != null) claimBoard(from, incarnation, uid);
  }

  /** Claims write {@code uid} of {@code from} for an entry of incarnation {@code incarnation}: only if that incarnation announced it. */
  private boolean claimBoard(String from, long incarnation, long uid) {
    Key k = new Key(from, uid);
    Expected e = byUid.get(k);
    if (e == null || !e.sent.board() || e.sent.fromIncarnation() != incarnation || !byUid.remove(k, e)) return false;
    if (e.left.decrementAndGet() == 0) boardLanded.accept(e);
    return true;
  }

  /** Backend's I/O thread: write {@code uid} of {@code initiatorKey} landed. */
  @Override
  public void landed(String initiatorKey, long uid) {
    claim(initiatorKey, uid);
  }

  /** Backend's or engine's thread: drops the announcements of {@code initiatorKey} now, so no new write matches them. */
  @Override
  public void forgotten(String initiatorKey) {
    byUid.entrySet().removeIf(en -> en.getKey().engine().equals(initiatorKey));
    long sender = KvLandingBoard.hash64(initiatorKey);
    early.keySet().removeIf(k -> k.sender() == sender);
    self.accept(new KvProtocol.InboundForgotten(initiatorKey));
  }

  private void claim(String from, long uid) {
    Key k = new Key(from, uid);
    Expected e = byUid.get(k);
    if (e == null) return;
    Optional<TransferStatus> s = engine.popInboundTransferStatus(from, uid);
    if (s.isEmpty()) return; // not landed yet, or claimed by the other path
    if (!byUid.remove(k, e)) return; // claimed from the landing board
    // a failed write is the sender's to report (RequestAborted); the range then never lands here
    if (s.get().succeeded() && e.left.decrementAndGet() == 0) self.accept(new KvProtocol.InboundLanded(e));
  }

  /** Endpoint's thread: {@code e} was reported landed; forget it. */
  void settled(Expected e) {
    drop(e);
  }

  /**
   * Endpoint's thread: the sender reported layers {@code [fromLayer, toLayer)} of the request landed (the fallback) or
   * aborted ({@code fromLayer < 0}: every range): what is still announced for them is dropped, and writes that
   * landed unclaimed are popped so the notification table does not keep them. Only migration {@code migration}'s: a
   * late report of an earlier migration of the request id leaves a newer one's announcements alone.
   */
  void senderReported(String fromEngine, String requestId, long migration, int fromLayer, int toLayer) {
    List<Expected> l = byRequest.get(requestKey(fromEngine, requestId, migration));
    if (l == null) return;
    for (Expected e : List.copyOf(l)) {
      // a stream's layers may have been announced one by one and reported together
      if (fromLayer >= 0 && (e.sent.fromLayer() < fromLayer || e.sent.toLayer() > toLayer)) continue;
      drop(e);
      for (long u : e.sent.uids()) engine.popInboundTransferStatus(fromEngine, u);
      if (e.sent.board()) for (long u : e.sent.uids()) early.remove(new BoardKey(KvLandingBoard.hash64(fromEngine), e.sent.fromIncarnation(), u));
    }
  }

  /** Endpoint's thread: the initiator restarted; its announcements go (their uids were dropped by {@link #forgotten}). */
  void forgottenOnEndpoint(String engineKey) {
    for (Expected e : List.copyOf(oldestFirst)) if (e.sent.fromEngine().equals(engineKey)) drop(e);
  }

  /** Ranges still waited for (tests). */
  int waiting() {
    return oldestFirst.size();
  }

  private void drop(Expected e) {
    if (oldestFirst.remove(e) && e.sent.board()) boardRanges.decrementAndGet();
    String rk = requestKey(e.sent.fromEngine(), e.sent.requestId(), e.sent.migration());
    List<Expected> l = byRequest.get(rk);
    if (l != null && l.remove(e) && l.isEmpty()) byRequest.remove(rk);
    for (long u : e.sent.uids()) byUid.remove(new Key(e.sent.fromEngine(), u), e);
  }

  private static String requestKey(String engine, String requestId, long migration) {
    return engine + '\u0000' + requestId + '\u0000' + migration;
  }
}
