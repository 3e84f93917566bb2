package org.mori4j.io.internal;

import java.util.concurrent.CopyOnWriteArrayList;
import org.mori4j.io.IoEngine;
import org.mori4j.transport.InboundNotifications;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One engine's fan-out of its backends' inbound-write news ({@link InboundNotifications.Listener}, set on every
 * backend the engine creates) to the listeners of {@link IoEngine#onInboundLanded}. With no listener it costs a
 * volatile read and an empty-list check per landed write, on the backend's I/O thread.
 */
public final class InboundLandedHub implements InboundNotifications.Listener {
  private static final Logger log = LoggerFactory.getLogger(InboundLandedHub.class);
  private final CopyOnWriteArrayList<IoEngine.InboundListener> listeners = new CopyOnWriteArrayList<>();

  public AutoCloseable add(IoEngine.InboundListener l) {
    listeners.add(l);
    return () -> listeners.remove(l);
  }

  @Override
  public void landed(String initiatorKey, long uid) {
    for (IoEngine.InboundListener l : listeners) {
      try {
        l.landed(initiatorKey, uid);
      } catch (RuntimeException e) {
        log.warn("an inbound-write listener threw on uid {} from '{}'", uid, initiatorKey, e);
      }
    }
  }

  @Override
  public void forgotten(String initiatorKey) {
    for (IoEngine.InboundListener l : listeners) {
      try {
        l.forgotten(initiatorKey);
      } catch (RuntimeException e) {
        log.warn("an inbound-write listener threw on forgetting '{}'", initiatorKey, e);
      }
    }
  }
}
