package org.mori4j.cluster;

import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.pekko.Done;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.cluster.UniqueAddress;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.apache.pekko.pattern.StatusReply;
import org.mori4j.cluster.DescriptorDirectory.Command;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.IoEngineProtocol;
import org.mori4j.io.StatusCode;

/**
 * The publish and unpublish steps of a {@link DirectoryActor}: a publish is checked by the engine (it owns the
 * memory), then the name is written into the replicated map after a majority read (so that the duplicate check sees
 * what completed elsewhere), and only then told to the engine, so that a refused duplicate leaves the engine as it
 * was; an unpublish removes the name if this engine owns it. Every answer, including a write that timed out after
 * it was applied here, reaches the caller as a {@link StatusReply} with an {@link IoEngineException}. Runs on the
 * actor's thread; its messages come back to the actor, which hands them here.
 */
final class DirectoryPublishing {
  /** The engine answered whether it owns the descriptor of {@code request} ({@code failure} null: it does). */
  record EngineChecked(DescriptorDirectory.Publish request, Throwable failure) implements Command {}

  /** The majority read before a publish's write answered (whatever it said: the write checks this replica). */
  record PublishRead(DescriptorDirectory.Publish request) implements Command {}

  /**
   * A directory write answered: {@code publish} is the request of a publish (null for an unpublish), and
   * {@code unpublished} the name an unpublish removed (null for a publish).
   */
  record Written(String what, DescriptorDirectory.Publish publish, String unpublished, ActorRef<StatusReply<Done>> replyTo,
                 Replicator.UpdateResponse<LWWMap<String, DirectoryEntry>> response)
      implements Command {}

  /** The engine took a name the directory took, or said why not; the publish is answered now. */
  record EnginePublished(DescriptorDirectory.Publish publish, Throwable failure) implements Command {}

  private final ActorContext<Command> ctx;
  private final ReplicatorMessageAdapter<Command, LWWMap<String, DirectoryEntry>> replicator;
  private final ActorRef<IoEngineProtocol.Command> engine;
  private final String engineKey;
  private final DirectorySettings settings;
  private final SelfUniqueAddress self;
  private final DirectoryView view;
  private final Supplier<Map<Address, UniqueAddress>> members;
  /** Throws the actor's "closed" refusal once its engine stopped. */
  private final Runnable refuseWhenClosing;

  DirectoryPublishing(ActorContext<Command> ctx, ReplicatorMessageAdapter<Command, LWWMap<String, DirectoryEntry>> replicator,
                      ActorRef<IoEngineProtocol.Command> engine, String engineKey, DirectorySettings settings, SelfUniqueAddress self,
                      DirectoryView view, Supplier<Map<Address, UniqueAddress>> members, Runnable refuseWhenClosing) {
    this.ctx = ctx;
    this.replicator = replicator;
    this.engine = engine;
    this.engineKey = engineKey;
    this.settings = settings;
    this.self = self;
    this.view = view;
    this.members = members;
    this.refuseWhenClosing = refuseWhenClosing;
  }

  void publish(DescriptorDirectory.Publish m) {
    String name = m.name();
    try {
      refuseWhenClosing.run();
      settings.checkName("name", name, false);
      if (m.desc() == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "desc must not be null (name '" + name + "')");
    } catch (IoEngineException e) {
      m.replyTo().tell(StatusReply.error(e));
      return;
    }
    // the engine is the authority on what it has registered: it refuses foreign or forged descriptors (it is told
    // the name only once the directory took it, so that a refused duplicate leaves the engine as it was)
    ctx.ask(castReply(), engine, settings.askTimeout(), r -> new IoEngineProtocol.CheckMemory(m.desc(), r),
        (r, err) -> new EngineChecked(m, err != null ? err : r.isError() ? r.getError() : null));
  }

  void engineChecked(EngineChecked m) {
    DescriptorDirectory.Publish p = m.request();
    if (m.failure() != null) {
      Throwable f = m.failure();
      p.replyTo().tell(StatusReply.error(f instanceof IoEngineException ? f : new IoEngineException(StatusCode.ERR_BAD_STATE,
          "engine '" + engineKey + "' did not confirm that it owns " + p.desc() + " (name '" + p.name() + "'): " + f, f)));
      return;
    }
    // the duplicate check runs against this member's replica: a majority read first merges into it every
    // publish and unpublish that has completed elsewhere (they are majority writes), so a name unpublished on
    // another member a moment ago is free here too. If no majority answers, the check uses what is here.
    replicator.askGet(r -> new Replicator.Get<>(DescriptorDirectory.KEY, new Replicator.ReadMajority(settings.readTimeout()), r),
        rsp -> new PublishRead(p));
  }

  void publishRead(PublishRead m) {
    DescriptorDirectory.Publish p = m.request();
    DirectoryEntry entry = DirectoryEntry.of(p.desc(), self.uniqueAddress());
    Set<UniqueAddress> goneNow = view.goneOwners();
    Map<Address, UniqueAddress> membersNow = Map.copyOf(members.get());
    String what = "publish of '" + DirectorySettings.shorten(p.name()) + "'";
    replicator.askUpdate(r -> new Replicator.Update<>(DescriptorDirectory.KEY, LWWMap.create(), settings.writeConsistencyLevel(), r,
            map -> DirectoryWrites.putIfFree(map, p.name(), entry, self, goneNow, membersNow, settings)),
        rsp -> new Written(what, p, null, p.replyTo(), rsp));
  }

  void enginePublished(EnginePublished m) {
    // the directory holds the name either way; an engine that deregistered the memory meanwhile just does not answer it
    if (m.failure() != null)
      ctx.getLog().debug("directory of engine '{}': the engine did not take '{}': {}", engineKey, m.publish().name(), m.failure().toString());
    m.publish().replyTo().tell(StatusReply.success(Done.getInstance()));
  }

  void unpublish(DescriptorDirectory.Unpublish m) {
    try {
      refuseWhenClosing.run();
      settings.checkName("name", m.name(), false);
    } catch (IoEngineException e) {
      m.replyTo().tell(StatusReply.error(e));
      return;
    }
    String what = "unpublish of '" + DirectorySettings.shorten(m.name()) + "'";
    replicator.askUpdate(r -> new Replicator.Update<>(DescriptorDirectory.KEY, LWWMap.create(), settings.writeConsistencyLevel(), r,
            map -> DirectoryWrites.removeOwned(map, m.name(), self, engineKey, settings)),
        rsp -> new Written(what, null, m.name(), m.replyTo(), rsp));
  }

  void written(Written m) {
    var r = m.response();
    if (r instanceof Replicator.UpdateSuccess<?>) {
      ctx.getLog().debug("directory of engine '{}': {} done", engineKey, m.what());
      // the engine answers lookupMemory for a published name as well: it learns the name now, or forgets it
      if (m.unpublished() != null) engine.tell(new IoEngineProtocol.UnpublishMemory(m.unpublished(), ctx.getSystem().ignoreRef()));
      if (m.publish() != null) {
        DescriptorDirectory.Publish p = m.publish();
        ctx.ask(castReply(), engine, settings.askTimeout(), ref -> new IoEngineProtocol.PublishMemory(p.name(), p.desc(), ref),
            (rep, err) -> new EnginePublished(p, err != null ? err : rep.isError() ? rep.getError() : null));
      } else {
        m.replyTo().tell(StatusReply.success(Done.getInstance()));
      }
      // let subscribers and local lookups see the change without waiting for notify-subscribers-interval
      DistributedData.get(ctx.getSystem()).replicator().tell(Replicator.flushChanges());
    } else if (r instanceof Replicator.ModifyFailure<?> f && f.cause() instanceof DirectoryWrites.Refusal refusal) {
      m.replyTo().tell(StatusReply.error(new IoEngineException(refusal.code(), refusal.getMessage())));
    } else if (r instanceof Replicator.UpdateTimeout<?>) {
      // applied here, so the engine follows as on success (a repeated call is then answered at once)
      if (m.unpublished() != null) engine.tell(new IoEngineProtocol.UnpublishMemory(m.unpublished(), ctx.getSystem().ignoreRef()));
      if (m.publish() != null) engine.tell(new IoEngineProtocol.PublishMemory(m.publish().name(), m.publish().desc(), ctx.getSystem().ignoreRef()));
      m.replyTo().tell(StatusReply.error(new IoEngineException(StatusCode.ERR_TIMEOUT, m.what() + " was applied on this member but not confirmed by "
          + settings.writeConsistency() + " of the members within " + settings.writeTimeout() + "; it still spreads by gossip, and repeating the "
          + "call is safe")));
    } else {
      m.replyTo().tell(StatusReply.error(new IoEngineException(StatusCode.ERR_BAD_STATE, m.what() + " failed in the replicator: " + r)));
    }
  }

  @SuppressWarnings("unchecked")
  private static Class<StatusReply<Done>> castReply() {
    return (Class<StatusReply<Done>>) (Class<?>) StatusReply.class;
  }
}
