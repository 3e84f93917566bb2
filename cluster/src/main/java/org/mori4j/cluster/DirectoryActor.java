package org.mori4j.cluster;

import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.UniqueAddress;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.pattern.StatusReply;
import org.mori4j.cluster.DescriptorDirectory.Command;
import org.mori4j.cluster.DirectoryEntry.Checked;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.IoEngineProtocol;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.StatusCode;

/**
 * The actor behind a {@link DescriptorDirectory}. It follows the replicated map and the membership, keeps
 * this member's checked reading of the map in a {@link DirectoryView}, answers lookups from it or from a
 * majority read, tells subscribers what changed, and unpublishes its engine's names when the engine stops. Each
 * other concern has its own class, driven from here on the actor's thread: publish and unpublish
 * ({@link DirectoryPublishing}), removal of departed owners' entries ({@link DirectorySweep}), waiting lookups
 * ({@link DirectoryLookups}), subscriptions ({@link DirectorySubscribers}). Writes go through
 * {@link DirectoryWrites}' modify functions, which run inside the Replicator against its current value, so the
 * duplicate and ownership checks see the latest local state rather than this actor's possibly older view.
 */
final class DirectoryActor extends AbstractBehavior<Command> {

  private record DataChanged(Replicator.SubscribeResponse<LWWMap<String, DirectoryEntry>> response) implements Command {}

  private record LookupRead(long id, Replicator.GetResponse<LWWMap<String, DirectoryEntry>> response) implements Command {}

  private record MembershipChanged(ClusterEvent.MemberEvent event) implements Command {}

  private record SubscriberGone(ActorRef<DirectoryEvent> subscriber) implements Command {}

  private record EngineStopped() implements Command {}

  private record Closed(Replicator.UpdateResponse<LWWMap<String, DirectoryEntry>> response) implements Command {}

  private final ActorRef<IoEngineProtocol.Command> engine;
  private final String engineKey;
  private final DirectorySettings settings;
  private final TimerScheduler<Command> timers;
  private final ReplicatorMessageAdapter<Command, LWWMap<String, DirectoryEntry>> replicator;
  private final SelfUniqueAddress self;
  private final Cluster cluster;

  /** The last value the Replicator reported, null until the first one. */
  private LWWMap<String, DirectoryEntry> data;
  private final DirectoryView view;
  private boolean closing;
  private final DirectoryLookups lookups;
  private final DirectorySubscribers subscribers = new DirectorySubscribers();
  private final DirectoryPublishing publishing;
  private final DirectorySweep sweep;

  private DirectoryActor(ActorContext<Command> ctx, TimerScheduler<Command> timers,
                         ReplicatorMessageAdapter<Command, LWWMap<String, DirectoryEntry>> replicator,
                         ActorRef<IoEngineProtocol.Command> engine, String engineKey, DirectorySettings settings) {
    super(ctx);
    this.engine = engine;
    this.engineKey = engineKey;
    this.settings = settings;
    this.timers = timers;
    this.replicator = replicator;
    this.self = DistributedData.get(ctx.getSystem()).selfUniqueAddress();
    this.cluster = Cluster.get(ctx.getSystem());
    ctx.setLoggerName(DirectoryActor.class);
    this.view = new DirectoryView(settings, self.uniqueAddress(), engineKey, ctx.getLog());
    this.lookups = new DirectoryLookups(timers);
    this.publishing = new DirectoryPublishing(ctx, replicator, engine, engineKey, settings, self, view, this::members, this::refuseWhenClosing);
    this.sweep = new DirectorySweep(ctx, timers, replicator, engineKey, settings, self, cluster, view, this::members);
    replicator.subscribe(DescriptorDirectory.KEY, DataChanged::new);
    ActorRef<ClusterEvent.MemberEvent> members = ctx.messageAdapter(ClusterEvent.MemberEvent.class, MembershipChanged::new);
    cluster.subscriptions().tell(org.apache.pekko.cluster.typed.Subscribe.create(members, ClusterEvent.MemberEvent.class));
    ctx.watchWith(engine, new EngineStopped());
  }

  static Behavior<Command> create(ActorRef<IoEngineProtocol.Command> engine, String engineKey, DirectorySettings settings) {
    // the adapter's own ask limit only guards against a Replicator that never answers; every request
    // carries a shorter consistency timeout of its own
    Duration unexpected = settings.writeTimeout().plus(settings.readTimeout()).plus(settings.askTimeout());
    // a bug here must not take the directory away for good: a restarted actor subscribes again and rebuilds
    // its view from the Replicator (waiting lookups are lost; their callers' asks time out)
    return Behaviors.supervise(Behaviors.<Command>setup(ctx -> Behaviors.withTimers(timers -> new DirectoryActor(ctx, timers,
            new ReplicatorMessageAdapter<>(ctx, DistributedData.get(ctx.getSystem()).replicator(), unexpected), engine, engineKey, settings))))
        .onFailure(org.apache.pekko.actor.typed.SupervisorStrategy.restart());
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(DescriptorDirectory.Publish.class, m -> { publishing.publish(m); return this; })
        .onMessage(DirectoryPublishing.EngineChecked.class, m -> { publishing.engineChecked(m); return this; })
        .onMessage(DirectoryPublishing.PublishRead.class, m -> { publishing.publishRead(m); return this; })
        .onMessage(DescriptorDirectory.Unpublish.class, m -> { publishing.unpublish(m); return this; })
        .onMessage(DirectoryPublishing.Written.class, m -> { publishing.written(m); return this; })
        .onMessage(DirectoryPublishing.EnginePublished.class, m -> { publishing.enginePublished(m); return this; })
        .onMessage(DescriptorDirectory.Lookup.class, this::onLookup)
        .onMessage(LookupRead.class, this::onLookupRead)
        .onMessage(DirectoryLookups.Expired.class, m -> {
          lookups.expire(m);
          return this;
        })
        .onMessage(DescriptorDirectory.GetEntries.class, m -> {
          TreeMap<String, MemoryDesc> out = new TreeMap<>();
          if (m.prefix() != null) for (Checked c : view.under(m.prefix())) out.put(c.name(), c.desc());
          m.replyTo().tell(Collections.unmodifiableSortedMap(out));
          return this;
        })
        .onMessage(DescriptorDirectory.Subscribe.class, this::onSubscribe)
        .onMessage(DescriptorDirectory.Unsubscribe.class, m -> {
          if (subscribers.remove(m.subscriber())) getContext().unwatch(m.subscriber());
          return this;
        })
        .onMessage(SubscriberGone.class, m -> {
          subscribers.remove(m.subscriber());
          return this;
        })
        .onMessage(DataChanged.class, this::onDataChanged)
        .onMessage(MembershipChanged.class, this::onMembership)
        .onMessage(DirectorySweep.Tick.class, m -> { sweep.sweep(data, closing); return this; })
        .onMessage(DirectorySweep.Swept.class, m -> { sweep.swept(m); return this; })
        .onMessage(EngineStopped.class, this::onEngineStopped)
        .onMessage(Closed.class, m -> {
          if (!(m.response() instanceof Replicator.UpdateSuccess<?>))
            getContext().getLog().warn("directory of engine '{}': could not unpublish its names on close ({}); the other members drop "
                + "them when this member leaves", engineKey, m.response());
          return Behaviors.stopped();
        })
        .build();
  }

  // ---- lookup ----

  private Behavior<Command> onLookup(DescriptorDirectory.Lookup m) {
    Duration timeout = m.timeout() == null ? settings.lookupTimeout() : m.timeout();
    try {
      refuseWhenClosing();
      settings.checkName("name", m.name(), false);
      if (timeout.isNegative())
        throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "timeout must be zero or positive: " + timeout + " (name '" + m.name() + "')");
    } catch (IoEngineException e) {
      m.replyTo().tell(StatusReply.error(e));
      return this;
    }
    Checked c = view.get(m.name());
    // the view changes with the Replicator's notifications; a downing seen since then already rules the entry out
    if (c != null && !view.isGone(c.owner(), members())) {
      m.replyTo().tell(StatusReply.success(c.desc()));
      return this;
    }
    String bad = view.refusal(m.name());
    if (bad != null) {
      m.replyTo().tell(StatusReply.error(new IoEngineException(StatusCode.ERR_INVALID_ARGS, "the entry under name '" + m.name()
          + "' was refused: " + bad)));
      return this;
    }
    long id = lookups.await(m.name(), m.replyTo(), timeout);
    // not in this replica yet: a majority read finds what a majority write has stored, then the wait covers the rest
    replicator.askGet(r -> new Replicator.Get<>(DescriptorDirectory.KEY, new Replicator.ReadMajority(settings.readTimeout()), r),
        rsp -> new LookupRead(id, rsp));
    return this;
  }

  private Behavior<Command> onLookupRead(LookupRead m) {
    DirectoryLookups.Pending p = lookups.get(m.id());
    if (p == null) return this;
    if (m.response() instanceof Replicator.GetSuccess<LWWMap<String, DirectoryEntry>> s) {
      Object v = s.dataValue().getEntries().get(p.name());
      if (v instanceof DirectoryEntry e) {
        try {
          Checked c = e.check(p.name(), settings);
          if (!view.isGone(c.owner(), members())) {
            lookups.finish(m.id(), StatusReply.success(c.desc()));
            return this;
          }
        } catch (IllegalArgumentException bad) {
          lookups.finish(m.id(), StatusReply.error(new IoEngineException(StatusCode.ERR_INVALID_ARGS, "the entry under name '" + p.name()
              + "' was refused: " + bad.getMessage())));
          return this;
        }
      }
    }
    if (p.timeout().isZero()) lookups.finish(m.id(), StatusReply.error(DirectoryLookups.notFound(p)));
    return this;
  }

  // ---- the replicated data, membership, subscribers ----

  private Behavior<Command> onDataChanged(DataChanged m) {
    if (m.response() instanceof Replicator.Changed<LWWMap<String, DirectoryEntry>> c) {
      data = c.dataValue();
      refresh();
      sweep.sweep(data, closing);
    }
    return this;
  }

  private Behavior<Command> onMembership(MembershipChanged m) {
    Member member = m.event().member();
    MemberStatus st = member.status();
    if ((st == MemberStatus.exiting() || st == MemberStatus.down() || st == MemberStatus.removed()) && view.markGone(member.uniqueAddress()))
      getContext().getLog().info("directory of engine '{}': member {} is {}; its entries are dropped", engineKey, member.address(), st);
    if (data != null) {
      refresh();
      sweep.sweep(data, closing);
    }
    return this;
  }

  /** Reads {@link #data} again, tells subscribers the difference and answers waiting lookups. */
  private void refresh() {
    for (DirectoryEvent e : view.update(data, members(), unreachable())) emit(e);
    lookups.answerFrom(view);
  }

  private Set<UniqueAddress> unreachable() {
    Set<UniqueAddress> out = new HashSet<>();
    for (Member mb : cluster.state().getUnreachable()) out.add(mb.uniqueAddress());
    return out;
  }

  /** The current members by address (whatever their status), from the cluster extension's view. */
  private Map<Address, UniqueAddress> members() {
    Map<Address, UniqueAddress> out = new HashMap<>();
    for (Member mb : cluster.state().getMembers()) out.put(mb.address(), mb.uniqueAddress());
    return out;
  }

  private void emit(DirectoryEvent e) {
    subscribers.emit(e);
  }

  private Behavior<Command> onSubscribe(DescriptorDirectory.Subscribe m) {
    if (m.subscriber() == null) return this;
    try {
      settings.checkName("prefix", m.prefix(), true);
    } catch (IoEngineException e) {
      getContext().getLog().warn("directory of engine '{}' ignores a subscription of {}: {}", engineKey, m.subscriber(), e.getMessage());
      return this;
    }
    if (subscribers.isNew(m.subscriber())) getContext().watchWith(m.subscriber(), new SubscriberGone(m.subscriber()));
    if (subscribers.add(m.subscriber(), m.prefix())) for (Checked c : view.under(m.prefix())) m.subscriber().tell(DirectoryView.published(c));
    return this;
  }

  private Behavior<Command> onEngineStopped(EngineStopped m) {
    closing = true;
    lookups.abandonAll(name -> new IoEngineException(StatusCode.ERR_BAD_STATE, "engine '" + engineKey + "' was closed; lookup of '" + name + "' abandoned"));
    getContext().getLog().info("directory of engine '{}': the engine stopped; unpublishing its names", engineKey);
    replicator.askUpdate(r -> new Replicator.Update<>(DescriptorDirectory.KEY, LWWMap.create(), settings.writeConsistencyLevel(), r,
        map -> DirectoryWrites.removeAllOf(map, self, engineKey)), Closed::new);
    return this;
  }

  private void refuseWhenClosing() {
    if (closing) throw new IoEngineException(StatusCode.ERR_BAD_STATE, "the directory of engine '" + engineKey + "' is closed: the engine stopped");
  }
}
