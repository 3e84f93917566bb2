package org.mori4j.cluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.pattern.StatusReply;
import org.mori4j.cluster.DescriptorDirectory.Command;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.StatusCode;

/**
 * The lookups a {@link DirectoryActor} holds because their name is not in its view yet: each waits until the name
 * appears (answered from the view on every change), its own timeout passes (answered {@code ERR_NOT_FOUND}, saying
 * how long it waited) or the engine stops (every waiting lookup is abandoned with the actor's reason). Used only
 * from the actor's thread; the timeouts are the actor's timers, keyed by lookup.
 */
final class DirectoryLookups {
  /** A lookup's timeout passed: the actor hands it to {@link #expire}. */
  record Expired(long id) implements Command {}

  record Pending(String name, ActorRef<StatusReply<MemoryDesc>> replyTo, Duration timeout) {}

  private final TimerScheduler<Command> timers;
  private final Map<Long, Pending> pending = new HashMap<>();
  private long seq;

  DirectoryLookups(TimerScheduler<Command> timers) {
    this.timers = timers;
  }

  /** Holds a lookup of {@code name} for up to {@code timeout} (zero: until the actor's own read answers it); returns its id. */
  long await(String name, ActorRef<StatusReply<MemoryDesc>> replyTo, Duration timeout) {
    long id = ++seq;
    pending.put(id, new Pending(name, replyTo, timeout));
    if (!timeout.isZero()) timers.startSingleTimer(new Expired(id), new Expired(id), timeout);
    return id;
  }

  /** The lookup {@code id} if it still waits. */
  Pending get(long id) {
    return pending.get(id);
  }

  /** Answers lookup {@code id} with {@code reply} unless it was answered already. */
  void finish(long id, StatusReply<MemoryDesc> reply) {
    Pending p = pending.remove(id);
    if (p == null) return;
    timers.cancel(new Expired(id));
    p.replyTo().tell(reply);
  }

  void expire(Expired m) {
    Pending p = pending.remove(m.id());
    if (p != null) p.replyTo().tell(StatusReply.error(notFound(p)));
  }

  /** Answers every lookup whose name {@code view} now holds. */
  void answerFrom(DirectoryView view) {
    List<Long> done = new ArrayList<>();
    for (Map.Entry<Long, Pending> p : pending.entrySet()) if (view.get(p.getValue().name()) != null) done.add(p.getKey());
    for (Long id : done) finish(id, StatusReply.success(view.get(pending.get(id).name()).desc()));
  }

  /** Fails every waiting lookup with the error {@code why} makes of its name. */
  void abandonAll(Function<String, IoEngineException> why) {
    for (Map.Entry<Long, Pending> p : List.copyOf(pending.entrySet())) {
      timers.cancel(new Expired(p.getKey()));
      p.getValue().replyTo().tell(StatusReply.error(why.apply(p.getValue().name())));
    }
    pending.clear();
  }

  static IoEngineException notFound(Pending p) {
    return new IoEngineException(StatusCode.ERR_NOT_FOUND, "no memory is published under name '" + p.name() + "' in the cluster directory"
        + (p.timeout().isZero() ? "" : " (waited " + p.timeout().toMillis() + " ms for it to appear)"));
  }
}
