package org.mori4j.cluster;

import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.StatusCode;
import org.mori4j.io.kv.KvCache;
import org.mori4j.io.kv.KvCacheDesc;
import org.mori4j.io.kv.KvProtocol;

/**
 * KV caches by name across the cluster. Publishing puts the cache's first buffer under {@code kv/<name>} in the
 * {@link DescriptorDirectory} (so the name goes when its owner goes, as every directory entry does) and registers
 * the owner's KV endpoint with the Receptionist; a lookup finds the entry, then asks the owner's endpoint for the
 * full {@link KvCacheDesc} (layout and every buffer) and checks it against the entry.
 */
public final class KvCacheDirectory {
  /** The directory prefix of KV caches. */
  public static final String PREFIX = "kv/";

  private final DescriptorDirectory directory;
  private final ActorSystem<?> system;

  public KvCacheDirectory(DescriptorDirectory directory, ActorSystem<?> system) {
    this.directory = Objects.requireNonNull(directory, "directory");
    this.system = Objects.requireNonNull(system, "system");
  }

  static ServiceKey<KvProtocol.Command> endpointKey(String engineKey) {
    return ServiceKey.create(KvProtocol.Command.class, "mori4j-kv-" + engineKey);
  }

  /** Publishes {@code cache} under its name. */
  public CompletionStage<Done> publish(KvCache cache) {
    if (cache == null) return CompletableFuture.failedStage(new IoEngineException(StatusCode.ERR_INVALID_ARGS, "cache must not be null"));
    KvCacheDesc d = cache.desc();
    ActorRef<KvProtocol.Command> ep = ActorRefResolver.get(system).resolveActorRef(d.endpoint());
    system.receptionist().tell(Receptionist.register(endpointKey(d.engineKey()), ep));
    return directory.publish(PREFIX + d.name(), d.buffers().get(0));
  }

  public CompletionStage<Done> unpublish(String name) {
    return directory.unpublish(PREFIX + name);
  }

  /** The descriptor of the cache published as {@code name}, waiting up to {@code timeout} for the name to appear. */
  public CompletionStage<KvCacheDesc> lookup(String name, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    return directory.lookup(PREFIX + name, timeout).thenCompose(first -> describe(name, first, deadline));
  }

  private CompletionStage<KvCacheDesc> describe(String name, MemoryDesc first, long deadline) {
    ServiceKey<KvProtocol.Command> key = endpointKey(first.engineKey());
    Duration step = Duration.ofSeconds(3);
    return AskPattern.<Receptionist.Command, Receptionist.Listing>ask(system.receptionist(), r -> Receptionist.find(key, r), step, system.scheduler())
        .thenCompose(listing -> {
          Set<ActorRef<KvProtocol.Command>> eps = listing.getServiceInstances(key);
          if (eps.isEmpty()) return retry(name, first, deadline, "the KV endpoint of engine '" + first.engineKey() + "' is not known yet");
          ActorRef<KvProtocol.Command> ep = eps.iterator().next();
          return AskPattern.<KvProtocol.Command, KvProtocol.Description>ask(ep, r -> new KvProtocol.Describe(name, r), step, system.scheduler())
              .thenCompose(desc -> {
                if (desc.desc().length == 0) return retry(name, first, deadline, "engine '" + first.engineKey() + "' has no open cache '" + name + "'");
                KvCacheDesc d = KvCacheDesc.fromBytes(desc.desc());
                if (!d.buffers().get(0).equals(first))
                  return CompletableFuture.failedStage(new IoEngineException(StatusCode.ERR_NOT_FOUND, "KV cache '" + name
                      + "': the directory's entry and the owner's cache differ (it was closed and opened again?)"));
                return CompletableFuture.completedStage(d);
              });
        });
  }

  private CompletionStage<KvCacheDesc> retry(String name, MemoryDesc first, long deadline, String why) {
    if (System.nanoTime() > deadline)
      return CompletableFuture.failedStage(new IoEngineException(StatusCode.ERR_NOT_FOUND, "KV cache '" + name + "': " + why));
    CompletableFuture<Void> later = new CompletableFuture<>();
    system.scheduler().scheduleOnce(Duration.ofMillis(100), () -> later.complete(null), system.executionContext());
    return later.thenCompose(x -> describe(name, first, deadline));
  }
}
