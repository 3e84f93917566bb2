package org.mori4j.shmem;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Subscribe;
import org.mori4j.cluster.CborSerializable;

/**
 * The Pekko Cluster bootstrap: the group is the members with the shmem role, each running one
 * {@link GroupActor} announced under {@code mori4j-shmem-<role>} with the Receptionist. Once the listing holds
 * {@code nPes} of them, every member ranks them by member address (host, then port: the same order everywhere)
 * and an {@link #allGather} step is one {@link Contribution} from every PE to every PE. The failure detector
 * and membership decide loss: a group member that becomes unreachable, leaves, is removed, or whose actor
 * stops fails every waiting and later call with a message naming the PE and its member address.
 */
final class ClusterBootstrap implements Bootstrap {
  private static final AtomicInteger NAMES = new AtomicInteger();

  /** One PE's bytes for one step, sent to every PE of the group (itself included). */
  public record Contribution(int step, int from, byte[] data) implements GroupActor.Command, CborSerializable {}

  private final ActorRef<GroupActor.Command> actor;
  private final int rank;
  private final int size;
  private final Duration timeout;
  private int nextStep;

  private final ActorSystem<?> system;
  /** The step this PE waits in, failed at once should this member's ActorSystem terminate under it. */
  private volatile CompletableFuture<byte[][]> current;

  private ClusterBootstrap(ActorSystem<?> system, ActorRef<GroupActor.Command> actor, int rank, int size, Duration timeout) {
    this.system = system;
    this.actor = actor;
    this.rank = rank;
    this.size = size;
    this.timeout = timeout;
    // a terminated system drops every message: the group actor can no longer answer
    system.getWhenTerminated().thenRun(() -> {
      if (failure == null) failure = "PE " + rank + ": this member's ActorSystem " + system.name() + " has terminated";
      CompletableFuture<byte[][]> waiting = current;
      if (waiting != null) waiting.completeExceptionally(new ShmemException(failure));
    });
  }

  static ClusterBootstrap join(ActorSystem<?> system, int nPes, String role, Duration timeout) {
    Cluster cluster = Cluster.get(system);
    if (!cluster.selfMember().hasRole(role))
      throw new IllegalArgumentException("this member (" + cluster.selfMember().address() + ") does not have the cluster role '" + role
          + "' that marks the PEs (pekko.cluster.roles)");
    CompletableFuture<Integer> ranked = new CompletableFuture<>();
    ActorRef<GroupActor.Command> actor = system.systemActorOf(GroupActor.create(nPes, role, ranked), "mori4j-shmem-" + NAMES.incrementAndGet(), Props.empty());
    try {
      int rank = ranked.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
      return new ClusterBootstrap(system, actor, rank, nPes, timeout);
    } catch (TimeoutException e) {
      actor.tell(new GroupActor.Fail("PE group of role '" + role + "' did not form: fewer than " + nPes + " members within " + timeout.toSeconds() + " s"));
      actor.tell(GroupActor.Stop.INSTANCE);
      throw new ShmemException("the cluster did not have " + nPes + " members with role '" + role + "' within " + timeout.toSeconds() + " s");
    } catch (ExecutionException e) {
      actor.tell(GroupActor.Stop.INSTANCE);
      throw new ShmemException(e.getCause().getMessage(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      actor.tell(GroupActor.Stop.INSTANCE);
      throw new ShmemException("interrupted while the PE group formed", e);
    }
  }

  @Override
  public int rank() {
    return rank;
  }

  @Override
  public int size() {
    return size;
  }

  private volatile String failure;

  @Override
  public String failure() {
    return failure;
  }

  @Override
  public synchronized byte[][] allGather(byte[] mine, boolean last) {
    if (failure != null) throw new ShmemException(failure);
    int step = nextStep++;
    CompletableFuture<byte[][]> done = new CompletableFuture<>();
    current = done;
    if (system.getWhenTerminated().toCompletableFuture().isDone()) {
      if (failure == null) failure = "PE " + rank + ": this member's ActorSystem " + system.name() + " has terminated";
      throw new ShmemException(failure);
    }
    actor.tell(new GroupActor.Gather(step, mine, last, done, reason -> failure = reason));
    try {
      return done.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      String why = "PE " + rank + ": step " + step + " did not complete within " + timeout.toSeconds() + " s (mori4j.shmem.timeout)";
      actor.tell(new GroupActor.Fail(why));
      failure = why;
      throw new ShmemException(why);
    } catch (ExecutionException e) {
      throw new ShmemException(e.getCause().getMessage(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ShmemException("PE " + rank + ": interrupted while waiting for step " + step, e);
    }
  }

  @Override
  public void close() {
    if (failure == null) failure = "PE " + rank + " left the group (closed)";
    actor.tell(GroupActor.Stop.INSTANCE);
  }

  /** Orders members the same way on every member: host, then port. */
  static final Comparator<Address> ADDRESS_ORDER = Comparator.<Address, String>comparing(a -> a.host().getOrElse(() -> ""))
      .thenComparingInt(a -> (Integer) a.port().getOrElse(() -> 0)).thenComparing(Address::toString);

  /** The ranks of {@code members}: index in {@link #ADDRESS_ORDER}. */
  static List<Address> rankOrder(List<Address> members) {
    List<Address> sorted = new ArrayList<>(members);
    sorted.sort(ADDRESS_ORDER);
    return sorted;
  }

  /** The PE's actor: forms the group, relays contributions, watches the members. */
  static final class GroupActor extends AbstractBehavior<GroupActor.Command> {
    interface Command {}

    record Gather(int step, byte[] data, boolean last, CompletableFuture<byte[][]> done, java.util.function.Consumer<String> onFailure) implements Command {}

    record Fail(String reason) implements Command {}

    enum Stop implements Command { INSTANCE }

    private record Listed(Receptionist.Listing listing) implements Command {}

    private record MemberChanged(ClusterEvent.MemberEvent event) implements Command {}

    private record Reachability(ClusterEvent.ReachabilityEvent event) implements Command {}

    private record PeerStopped(int pe) implements Command {}

    private final int size;
    private final ServiceKey<Command> key;
    private final CompletableFuture<Integer> ranked;
    private final Address self;
    private List<ActorRef<Command>> group;
    private List<Address> addresses;
    private int rank = -1;
    private final Map<Integer, byte[][]> parts = new HashMap<>();
    private final Map<Integer, Gather> waiting = new HashMap<>();
    private final Map<Integer, Integer> counts = new HashMap<>();
    private String failure;
    private boolean finished;
    private java.util.function.Consumer<String> onFailure = r -> {};

    static Behavior<Command> create(int size, String role, CompletableFuture<Integer> ranked) {
      return Behaviors.setup(ctx -> new GroupActor(ctx, size, role, ranked));
    }

    private GroupActor(ActorContext<Command> ctx, int size, String role, CompletableFuture<Integer> ranked) {
      super(ctx);
      this.size = size;
      this.ranked = ranked;
      this.key = ServiceKey.create(Command.class, "mori4j-shmem-" + role);
      Cluster cluster = Cluster.get(ctx.getSystem());
      this.self = cluster.selfMember().address();
      ctx.getSystem().receptionist().tell(Receptionist.register(key, ctx.getSelf()));
      ctx.getSystem().receptionist().tell(Receptionist.subscribe(key, ctx.messageAdapter(Receptionist.Listing.class, Listed::new)));
      cluster.subscriptions().tell(Subscribe.create(ctx.messageAdapter(ClusterEvent.MemberEvent.class, MemberChanged::new), ClusterEvent.MemberEvent.class));
      cluster.subscriptions().tell(Subscribe.create(ctx.messageAdapter(ClusterEvent.ReachabilityEvent.class, Reachability::new),
          ClusterEvent.ReachabilityEvent.class));
    }

    @Override
    public Receive<Command> createReceive() {
      return newReceiveBuilder()
          .onMessage(Listed.class, this::onListed)
          .onMessage(Contribution.class, this::onContribution)
          .onMessage(Gather.class, this::onGather)
          .onMessage(MemberChanged.class, m -> {
            if (m.event() instanceof ClusterEvent.MemberRemoved r) lost(r.member(), "was removed from the cluster");
            else if (m.event() instanceof ClusterEvent.MemberLeft l) lost(l.member(), "left the cluster");
            else if (m.event() instanceof ClusterEvent.MemberExited x) lost(x.member(), "exited the cluster");
            else if (m.event() instanceof ClusterEvent.MemberDowned d) lost(d.member(), "was downed");
            return this;
          })
          .onMessage(Reachability.class, m -> {
            if (m.event() instanceof ClusterEvent.UnreachableMember u) lost(u.member(), "became unreachable");
            return this;
          })
          .onMessage(PeerStopped.class, m -> {
            fail("PE " + m.pe() + " (" + addresses.get(m.pe()) + ") stopped");
            return this;
          })
          .onMessage(Fail.class, m -> {
            fail(m.reason());
            return this;
          })
          .onMessage(Stop.class, m -> Behaviors.stopped())
          .build();
    }

    private Behavior<Command> onListed(Listed m) {
      if (group != null) return this;
      var listed = m.listing().getServiceInstances(key);
      if (listed.size() > size) {
        ranked.completeExceptionally(new ShmemException(listed.size() + " cluster members announce the shmem role, more than nPes " + size));
        return Behaviors.stopped();
      }
      if (listed.size() < size) return this;
      Map<Address, ActorRef<Command>> byAddress = new HashMap<>();
      for (ActorRef<Command> ref : listed) {
        Address a = ref.path().address().hasLocalScope() ? self : ref.path().address();
        byAddress.put(a, ref);
      }
      if (byAddress.size() != size) {
        ranked.completeExceptionally(new ShmemException("two PEs of the shmem group run in one member (" + listed + "); one PE per member"));
        return Behaviors.stopped();
      }
      addresses = rankOrder(new ArrayList<>(byAddress.keySet()));
      group = new ArrayList<>();
      for (int p = 0; p < size; p++) {
        ActorRef<Command> ref = byAddress.get(addresses.get(p));
        group.add(ref);
        if (addresses.get(p).equals(self)) rank = p;
        else getContext().watchWith(ref, new PeerStopped(p));
      }
      ranked.complete(rank);
      // contributions that arrived before this member saw the whole group are complete now, perhaps
      for (Integer step : new ArrayList<>(waiting.keySet())) maybeComplete(step);
      return this;
    }

    private Behavior<Command> onGather(Gather g) {
      onFailure = g.onFailure();
      if (failure != null) {
        g.done().completeExceptionally(new ShmemException(failure));
        return this;
      }
      waiting.put(g.step(), g);
      Contribution c = new Contribution(g.step(), rank, g.data());
      for (ActorRef<Command> ref : group) ref.tell(c);
      return this;
    }

    private Behavior<Command> onContribution(Contribution c) {
      if (c.from() < 0 || c.from() >= size) return this;
      byte[][] step = parts.computeIfAbsent(c.step(), k -> new byte[size][]);
      if (step[c.from()] == null) {
        step[c.from()] = c.data();
        counts.merge(c.step(), 1, Integer::sum);
      }
      maybeComplete(c.step());
      return this;
    }

    private void maybeComplete(int step) {
      Gather g = waiting.get(step);
      if (g == null || counts.getOrDefault(step, 0) < size) return;
      waiting.remove(step);
      counts.remove(step);
      if (g.last()) finished = true;
      g.done().complete(parts.remove(step));
    }

    private void lost(Member member, String what) {
      if (addresses == null || finished) return;
      int pe = addresses.indexOf(member.address());
      if (pe < 0 || pe == rank) return;
      fail("PE " + pe + " (" + member.address() + ") " + what);
    }

    private void fail(String reason) {
      if (failure != null || finished) return;
      failure = reason;
      getContext().getLog().warn("shmem PE {}: group failed: {}", rank, reason);
      onFailure.accept(reason);
      for (Gather g : waiting.values()) g.done().completeExceptionally(new ShmemException(reason));
      waiting.clear();
      if (!ranked.isDone()) ranked.completeExceptionally(new ShmemException(reason));
    }
  }
}
