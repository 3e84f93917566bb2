package org.mori4j.io.kv;

import com.typesafe.config.Config;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.MemoryDesc;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One engine's landing boards ({@link KvLandingBoard}): its own, which engines on this host post "write landed"
 * to, with its reader thread ({@link KvBoardPoller}), made when the engine has the XGMI backend as its KV endpoint
 * starts; and the boards of peers it posts to, mapped on first use for a migration whose path is XGMI and unmapped
 * when the endpoint stops. Settings: {@code mori4j.kv.landing-board} in {@code reference.conf}.
 */
final class KvBoards implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(KvBoards.class);
  /** A peer without a board is looked for again after this long (it may start one later). */
  private static final long RETRY_NANOS = 1_000_000_000L;

  /** {@code mori4j.kv.landing-board}: on/off, ring entries, spin and park of the reader, the directory ("" = default). */
  record Settings(boolean enabled, int entries, Duration spin, Duration park, String dir) {
    static Settings of(Config c) {
      return KvSettings.board(c);
    }
  }

  private final IoEngine engine;
  private final Settings settings;
  private final Path dir;
  private final KvLandingBoard own;
  private final KvBoardPoller poller;
  private final ConcurrentHashMap<String, KvLandingBoard> peers = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Long> missing = new ConcurrentHashMap<>();
  private volatile boolean closed;
  /** This engine's id in the entries it posts. */
  final long senderId;
  /** This engine's incarnation in the entries it posts (0 with the board off: then it posts none). */
  final long incarnation;

  KvBoards(IoEngine engine, KvInbound inbound, String threadName) {
    this.engine = engine;
    this.settings = Settings.of(engine.actorSystem().settings().config());
    this.dir = KvLandingBoard.directory(settings.dir());
    this.senderId = KvLandingBoard.hash64(engine.key());
    KvLandingBoard board = null;
    KvBoardPoller reader = null;
    long inc = 0;
    if (settings.enabled()) {
      EngineDesc me = engine.engineDesc();
      inc = me.incarnation();
      if (me.backends().contains(BackendType.XGMI) && me.incarnation() != 0) {
        try {
          board = KvLandingBoard.create(dir, engine.key(), me.incarnation(), settings.entries());
          reader = new KvBoardPoller(board, inbound::boardEntry, inbound::boardExpected, settings.spin(), settings.park(), threadName);
          inbound.onBoardExpected(reader::wake);
          reader.start();
          log.debug("engine '{}': landing board {}", engine.key(), board);
        } catch (IOException | RuntimeException e) {
          if (board != null) board.close();
          board = null;
          reader = null;
          log.warn("engine '{}': no landing board in {} ({}); XGMI peers' landed news comes over Pekko remoting", engine.key(), dir, e.toString());
        }
      }
    }
    this.own = board;
    this.poller = reader;
    this.incarnation = inc;
  }

  /** This engine's own board, or null. */
  KvLandingBoard own() {
    return own;
  }

  /**
   * The board of {@code remote}'s engine to post this engine's completed writes to, or null: the board is off, the
   * pair's path is not XGMI (peers over XGMI are always on this host), or the peer has no board on this host.
   */
  KvLandingBoard forPeer(MemoryDesc localBuffer, KvCacheDesc remote) {
    if (!settings.enabled() || closed || remote.buffers().isEmpty()) return null;
    try {
      if (engine.explain(localBuffer, remote.buffers().get(0)).chosen() != BackendType.XGMI) return null;
    } catch (IoEngineException | IllegalArgumentException e) {
      return null;
    }
    return forXgmiPeer(remote);
  }

  /** {@link #forPeer} for a {@code remote} the caller knows the engine reaches over XGMI. */
  KvLandingBoard forXgmiPeer(KvCacheDesc remote) {
    if (!settings.enabled() || closed || remote.buffers().isEmpty()) return null;
    long incarnation = remote.buffers().get(0).ownerIncarnation();
    if (incarnation == 0) return null;
    String name = KvLandingBoard.fileName(remote.engineKey(), incarnation);
    KvLandingBoard b = peers.get(name);
    if (b != null && !b.ownerClosed()) return b;
    synchronized (this) {
      b = peers.get(name);
      if (b != null && !b.ownerClosed()) return b;
      if (b != null) {
        peers.remove(name, b);
        b.close();
      }
      Long miss = missing.get(name);
      if (miss != null && System.nanoTime() - miss < RETRY_NANOS) return null;
      b = closed ? null : KvLandingBoard.open(dir, remote.engineKey(), incarnation);
      if (b == null) missing.put(name, System.nanoTime());
      else {
        missing.remove(name);
        peers.put(name, b);
      }
      return b;
    }
  }

  /** Stops the reader, closes (and unlinks) the own board, unmaps the peers'. */
  @Override
  public void close() {
    synchronized (this) {
      closed = true;
    }
    if (poller != null) poller.close();
    if (own != null) own.close();
    for (KvLandingBoard b : peers.values()) b.close();
    peers.clear();
  }
}
