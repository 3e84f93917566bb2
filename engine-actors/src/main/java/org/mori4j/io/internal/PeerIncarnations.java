package org.mori4j.io.internal;

import java.security.SecureRandom;
import java.util.LinkedHashMap;
import java.util.Map;
import org.mori4j.io.EngineDesc;

/**
 * The engine actor's bookkeeping of incarnations (see {@link EngineDesc#incarnation()}): its own, drawn at
 * start, and the last one seen from each engine that shook hands with it. An engine restarted under the same
 * key and address is a new process with new memory; everything that still names the old one (descriptors,
 * sessions, connections, inbound notifications) must be refused or dropped, never served against the new
 * process. Touched only by the engine actor.
 */
final class PeerIncarnations {
  private final long own;
  /** Initiators' incarnations as their handshakes stated them; bounded like the lost-peer memory. */
  private final Map<String, Long> initiators;

  PeerIncarnations(SecureRandom random, int remembered) {
    long v;
    do v = random.nextLong(); while (v == 0); // 0 means "not stated"
    this.own = v;
    this.initiators = new LinkedHashMap<>() {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
        return size() > remembered;
      }
    };
  }

  long own() {
    return own;
  }

  /** Why a handshake meant for incarnation {@code expected} of this engine is refused, or null when it is not. */
  String refusal(String ownKey, long expected) {
    if (expected == 0 || expected == own) return null;
    return "engine '" + ownKey + "' is incarnation " + EngineDesc.incarnationText(own) + ", but the handshake was meant for incarnation "
        + EngineDesc.incarnationText(expected) + " (the engine was restarted under the same key; register its new descriptor)";
  }

  /**
   * Records that {@code key} shook hands as incarnation {@code incarnation}; returns the incarnation it had
   * before when that differs (the initiator was restarted), else 0.
   */
  long initiatorSeen(String key, long incarnation) {
    if (incarnation == 0) return 0;
    Long before = initiators.put(key, incarnation);
    return before != null && before != incarnation ? before : 0;
  }

  /** The message for what belonged to incarnation {@code old} of {@code key} once {@code now} replaced it. */
  static String replaced(String key, long old, long now) {
    return "engine '" + key + "' was restarted: incarnation " + EngineDesc.incarnationText(old) + " was replaced by incarnation "
        + EngineDesc.incarnationText(now);
  }
}
