package org.mori4j.transport;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The target side's record of transfers that landed (MORI's {@code enable_notification}): per initiating
 * engine, transfer uid to outcome, until the application pops it. Recording a success allocates nothing
 * (a primitive open-addressed table); failures keep their message. Each initiator may hold at most
 * {@link #MAX_PENDING} unpopped entries; past that, new ones are dropped and counted, with one warning. A
 * {@link Listener} (the engine's) is told of every success once it is recorded, so that a receiver waiting for
 * known uids hears of them without polling.
 */
public final class InboundNotifications {
  public static final int MAX_PENDING = 1 << 20;
  private static final Logger log = LoggerFactory.getLogger(InboundNotifications.class);
  private static final byte EMPTY = 0;
  private static final byte OK = -1;

  private final ConcurrentHashMap<String, PeerLog> peers = new ConcurrentHashMap<>();
  private volatile Listener listener;

  /**
   * Told, on the thread that recorded it (a backend's I/O thread: keep it short, never block), that a write landed
   * and can now be popped; and that an initiator's entries were forgotten. Called outside the log's lock.
   */
  public interface Listener {
    void landed(String initiatorKey, long uid);

    void forgotten(String initiatorKey);
  }

  /** Sets the one listener (null: none); entries recorded before it was set are not replayed. */
  public void listener(Listener l) {
    listener = l;
  }

  /** The log of one initiator; callers on hot paths keep the reference. */
  public PeerLog peer(String initiatorKey) {
    return peers.computeIfAbsent(initiatorKey, k -> new PeerLog(k, this));
  }

  /** Outcome of a popped entry: {@code error == null} means the transfer landed. */
  public record Outcome(TransportError error, String message) {
    public boolean succeeded() {
      return error == null;
    }
  }

  /** Removes and returns the outcome of transfer {@code uid} from {@code initiatorKey}, or null if none was recorded. */
  public Outcome pop(String initiatorKey, long uid) {
    PeerLog p = peers.get(initiatorKey);
    return p == null ? null : p.pop(uid);
  }

  /**
   * Drops everything recorded from {@code initiatorKey}: the engine of that key was restarted, and the new one's
   * uids start again, so an old entry would answer a pop of the new one. Connections that keep the old log
   * belong to the old process.
   */
  public void forget(String initiatorKey) {
    peers.remove(initiatorKey);
    Listener l = listener;
    if (l != null) l.forgotten(initiatorKey);
  }

  /** Per-initiator table. */
  public static final class PeerLog {
    private final String key;
    private final InboundNotifications owner;
    private long[] uids = new long[64];
    private byte[] codes = new byte[64];
    private int count;
    private long dropped;
    private final Map<Long, String> messages = new HashMap<>();
    private final Map<Long, int[]> partsSeen = new HashMap<>();

    PeerLog(String key, InboundNotifications owner) {
      this.key = key;
      this.owner = owner;
    }

    /** Records one transfer; {@code error == null} for success. */
    public void record(long uid, TransportError error, String message) {
      boolean kept;
      synchronized (this) {
        kept = put(uid, error, message);
      }
      if (kept && error == null) told(uid);
    }

    private void told(long uid) {
      Listener l = owner.listener;
      if (l != null) l.landed(key, uid);
    }

    /** False when the entry was dropped (too many unpopped). */
    private boolean put(long uid, TransportError error, String message) {
      if (count >= MAX_PENDING) {
        if (dropped++ == 0) log.warn("inbound notifications from {}: {} unpopped entries; dropping new ones", key, MAX_PENDING);
        return false;
      }
      if ((count + 1) * 2 > uids.length) grow();
      int i = slot(uids, codes, uid);
      if (codes[i] == EMPTY) count++;
      uids[i] = uid;
      codes[i] = error == null ? OK : (byte) error.wire();
      if (error != null) messages.put(uid, message);
      return true;
    }

    /**
     * Records one of {@code parts} stripes of a transfer; the transfer is recorded when the last part
     * arrives, failed if any part failed.
     */
    public void recordPart(long uid, int parts, TransportError error, String message) {
      boolean landed;
      synchronized (this) {
        int[] seen = partsSeen.computeIfAbsent(uid, u -> new int[2]);
        seen[0]++;
        if (error != null && seen[1] == 0) {
          seen[1] = error.wire();
          messages.put(uid, message);
        }
        if (seen[0] < parts) return;
        partsSeen.remove(uid);
        TransportError e = seen[1] == 0 ? null : TransportError.fromWire(seen[1]);
        landed = put(uid, e, e == null ? null : messages.get(uid)) && e == null;
      }
      if (landed) told(uid);
    }

    synchronized Outcome pop(long uid) {
      int i = slot(uids, codes, uid);
      if (codes[i] == EMPTY) return null;
      byte c = codes[i];
      deleteAt(i);
      count--;
      if (c == OK) return new Outcome(null, "");
      return new Outcome(TransportError.fromWire(c), messages.remove(uid));
    }

    public synchronized long dropped() {
      return dropped;
    }

    private static int slot(long[] uids, byte[] codes, long uid) {
      int mask = uids.length - 1;
      int i = (int) (uid * 0x9E3779B97F4A7C15L >>> 40) & mask;
      while (codes[i] != EMPTY && uids[i] != uid) i = (i + 1) & mask;
      return i;
    }

    private void deleteAt(int i) {
      int mask = uids.length - 1;
      codes[i] = EMPTY;
      // backward-shift deletion keeps probe chains intact without tombstones
      for (int j = (i + 1) & mask; codes[j] != EMPTY; j = (j + 1) & mask) {
        long u = uids[j];
        byte c = codes[j];
        codes[j] = EMPTY;
        int k = slot(uids, codes, u);
        uids[k] = u;
        codes[k] = c;
      }
    }

    private void grow() {
      long[] ou = uids;
      byte[] oc = codes;
      uids = new long[ou.length * 2];
      codes = new byte[oc.length * 2];
      for (int i = 0; i < ou.length; i++) {
        if (oc[i] == EMPTY) continue;
        int k = slot(uids, codes, ou[i]);
        uids[k] = ou[i];
        codes[k] = oc[i];
      }
    }
  }
}
