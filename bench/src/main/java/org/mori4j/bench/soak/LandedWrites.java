package org.mori4j.bench.soak;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;

/**
 * The initiator's half of the notification check: the uids of its writes (with notification) and how each
 * ended, grouped per target incarnation into {@code LANDED <target-key> <target-incarnation> <ok> <uid,uid,...>}
 * lines that the driver passes on to that target ({@link NotificationChecker}). {@code ok=1}: the write
 * succeeded, so the target must have recorded it exactly once; {@code ok=0}: it failed, and the target only
 * pops whatever it recorded, so failed writes leave nothing behind in its table.
 */
final class LandedWrites {
  private record Landed(String key, long incarnation, boolean ok, long uid) {}

  private static final int PER_LINE = 400;
  private final ConcurrentLinkedQueue<Landed> queue = new ConcurrentLinkedQueue<>();

  void add(String targetKey, long targetIncarnation, boolean ok, long uid) {
    queue.add(new Landed(targetKey, targetIncarnation, ok, uid));
  }

  /** Emits everything queued so far as lines. */
  void flush(Consumer<String> out) {
    Map<String, List<Long>> groups = new LinkedHashMap<>();
    for (Landed l; (l = queue.poll()) != null; )
      groups.computeIfAbsent(l.key() + " " + l.incarnation() + " " + (l.ok() ? 1 : 0), k -> new ArrayList<>()).add(l.uid());
    groups.forEach((head, uids) -> {
      for (int i = 0; i < uids.size(); i += PER_LINE) {
        StringBuilder sb = new StringBuilder("LANDED ").append(head).append(' ');
        for (int j = i; j < Math.min(uids.size(), i + PER_LINE); j++) sb.append(j == i ? "" : ",").append(uids.get(j));
        out.accept(sb.toString());
      }
    });
  }
}
