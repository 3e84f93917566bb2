package org.mori4j.cluster;

import java.util.Map;
import java.util.function.Supplier;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.UniqueAddress;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.apache.pekko.cluster.typed.Cluster;
import org.mori4j.cluster.DescriptorDirectory.Command;

/**
 * Removal of departed owners' entries for a {@link DirectoryActor}: an owner that left, was downed or removed, or
 * has not been a member for {@code orphan-grace} (an entry that reached this member after its owner's removal, or a
 * previous incarnation's) loses its names. Every member sweeps on its own with a local write (concurrent removals
 * of the same name merge), one sweep at a time, only while this member is up; a failed sweep is retried after
 * {@code sweep-interval}, and orphans not yet due keep a timer running until they are. Runs on the actor's thread.
 */
final class DirectorySweep {
  /** Sweep again now (an orphan may have come due, or a failed sweep is retried). */
  record Tick() implements Command {}

  /** The removal write answered. */
  record Swept(Replicator.UpdateResponse<LWWMap<String, DirectoryEntry>> response) implements Command {}

  private final ActorContext<Command> ctx;
  private final TimerScheduler<Command> timers;
  private final ReplicatorMessageAdapter<Command, LWWMap<String, DirectoryEntry>> replicator;
  private final String engineKey;
  private final DirectorySettings settings;
  private final SelfUniqueAddress self;
  private final Cluster cluster;
  private final DirectoryView view;
  private final Supplier<Map<Address, UniqueAddress>> members;
  private boolean sweeping;

  DirectorySweep(ActorContext<Command> ctx, TimerScheduler<Command> timers,
                 ReplicatorMessageAdapter<Command, LWWMap<String, DirectoryEntry>> replicator, String engineKey,
                 DirectorySettings settings, SelfUniqueAddress self, Cluster cluster, DirectoryView view,
                 Supplier<Map<Address, UniqueAddress>> members) {
    this.ctx = ctx;
    this.timers = timers;
    this.replicator = replicator;
    this.engineKey = engineKey;
    this.settings = settings;
    this.self = self;
    this.cluster = cluster;
    this.view = view;
    this.members = members;
  }

  /**
   * Removes from {@code data} (the Replicator's last value, null before the first) the entries of owners that are
   * gone or orphaned for too long; does nothing while {@code closing} (the engine stopped and unpublishes its names).
   */
  void sweep(LWWMap<String, DirectoryEntry> data, boolean closing) {
    if (data == null || closing || sweeping || cluster.selfMember().status() != MemberStatus.up()) return;
    Map<String, UniqueAddress> doomed = view.due(data, members.get(), System.nanoTime());
    if (view.hasOrphans()) timers.startSingleTimer(Tick.class, new Tick(), settings.sweepInterval());
    if (doomed.isEmpty()) return;
    ctx.getLog().info("directory of engine '{}' removes {} entries of departed owners: {}", engineKey, doomed.size(), doomed);
    sweeping = true;
    Map<String, UniqueAddress> remove = Map.copyOf(doomed);
    replicator.askUpdate(r -> new Replicator.Update<>(DescriptorDirectory.KEY, LWWMap.create(), Replicator.writeLocal(), r,
        map -> DirectoryWrites.removeIfOwnedBy(map, remove, self)), Swept::new);
  }

  void swept(Swept m) {
    sweeping = false;
    if (m.response() instanceof Replicator.UpdateSuccess<?>) {
      // the next sweep starts from the Changed notification that shows the removal; sweeping again from
      // the value at hand would only remove the same names again
      DistributedData.get(ctx.getSystem()).replicator().tell(Replicator.flushChanges());
    } else {
      ctx.getLog().warn("directory of engine '{}': removing entries of departed owners failed: {}; retrying in {}", engineKey,
          m.response(), settings.sweepInterval());
      timers.startSingleTimer(Tick.class, new Tick(), settings.sweepInterval());
    }
  }
}
