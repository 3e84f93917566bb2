package org.mori4j.io.internal;

import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.SerializerWithStringManifest;

/**
 * The base of mori4j's Pekko serializers whose messages carry actor references: holds the actor system Pekko
 * constructs a serializer with and resolves references lazily, because the typed system is not yet available
 * while serializers are created.
 */
public abstract class ResolvingSerializer extends SerializerWithStringManifest {
  protected final ExtendedActorSystem system;
  private volatile ActorRefResolver resolver;

  protected ResolvingSerializer(ExtendedActorSystem system) {
    this.system = system;
  }

  /** The typed system's reference resolver, looked up on first use. */
  protected final ActorRefResolver resolver() {
    ActorRefResolver r = resolver;
    if (r == null) resolver = r = ActorRefResolver.get(Adapter.toTyped(system));
    return r;
  }
}
