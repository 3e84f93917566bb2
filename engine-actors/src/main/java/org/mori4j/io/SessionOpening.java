package org.mori4j.io;

import java.util.Optional;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.mori4j.io.internal.ControlCalls;
import org.mori4j.io.internal.EngineMessages;
import org.mori4j.io.internal.Routes;
import org.mori4j.io.internal.TransferPath;

/**
 * Opens an {@link IoEngineSession} for {@code IoEngine.createSession}: resolves the pair once against the current
 * {@link Routes} (local region registered with this engine, remote engine registered, not lost and of the same
 * incarnation as the descriptor), takes the first backend, in the engine's preference order, that can serve it, and
 * has the engine actor watch the session so that a deregistration, a lost peer or close ends it. Package-private:
 * the session's constructor is, and users reach this only through the facade.
 */
final class SessionOpening {
  private SessionOpening() {}

  /** Empty when no backend can serve the pair; throws {@link IoEngineException} when a descriptor is not usable. */
  static Optional<IoEngineSession> open(String key, TransferPath path, ControlCalls calls, MemoryDesc local, MemoryDesc remote) {
    Routes r = path.routes();
    if (r.closed()) throw new IoEngineException(StatusCode.ERR_BAD_STATE, "engine '" + key + "' is closed");
    if (local == null || remote == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "local and remote must not be null");
    Routes.Local l = r.locals().get(local.id());
    if (!local.engineKey().equals(key) || l == null || l.desc().accessKey() != local.accessKey())
      throw new IoEngineException(StatusCode.ERR_NOT_FOUND, "local memory id " + local.id() + " of engine '" + local.engineKey() + "' is not registered with this engine");
    Routes.Peer p = r.peers().get(remote.engineKey());
    if (p == null) {
      String lost = r.lost().get(remote.engineKey());
      if (lost != null) throw new IoEngineException(StatusCode.ERR_PEER_LOST, "remote engine '" + remote.engineKey() + "' was lost: " + lost
          + " (it is not registered until it is registered again)");
      throw new IoEngineException(StatusCode.ERR_NOT_FOUND, "remote engine '" + remote.engineKey() + "' is not registered");
    }
    if (p.desc().incarnation() != remote.ownerIncarnation())
      throw new IoEngineException(StatusCode.ERR_NOT_FOUND, TransferPath.staleRemote("remote", remote, p.desc().incarnation()));
    for (Routes.Backend b : r.backends()) {
      Object handle = p.handles().get(b.type());
      if (handle == null || !b.backend().canServe(l.region(), handle, remote.location() == MemoryLocationType.GPU,
          remote.backendData().get(b.type()))) continue;
      IoEngineSession s = new IoEngineSession(path, l, remote, b, handle);
      calls.ask((ActorRef<Done> ref) -> new EngineMessages.OpenSession(local.id(), remote.engineKey(), s, ref));
      return Optional.of(s);
    }
    return Optional.empty();
  }
}
