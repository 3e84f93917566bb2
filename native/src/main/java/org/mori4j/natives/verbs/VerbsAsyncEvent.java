package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemorySegment;

/**
 * An asynchronous event of a device ({@code ibv_get_async_event}), copied out before it is acknowledged:
 * its type ({@code IBV_EVENT_*}) and the element it concerns, a CQ, QP, SRQ or WQ pointer, or a port number
 * for port events (the C union holds one or the other).
 */
public record VerbsAsyncEvent(int type, long elementAddress, int portNumber) {

  /** Whether the event concerns a port ({@code element.port_num}) rather than an object. */
  public boolean isPortEvent() {
    return switch (type) {
      case VerbsConstants.IBV_EVENT_PORT_ACTIVE, VerbsConstants.IBV_EVENT_PORT_ERR,
          VerbsConstants.IBV_EVENT_LID_CHANGE, VerbsConstants.IBV_EVENT_PKEY_CHANGE,
          VerbsConstants.IBV_EVENT_SM_CHANGE, VerbsConstants.IBV_EVENT_CLIENT_REREGISTER,
          VerbsConstants.IBV_EVENT_GID_CHANGE -> true;
      default -> false;
    };
  }

  /** Reads an {@link VerbsLayouts#IBV_ASYNC_EVENT}. */
  static VerbsAsyncEvent read(MemorySegment s) {
    int type = s.get(JAVA_INT, VerbsLayouts.ASYNC_EVENT_TYPE);
    long element = s.get(ADDRESS, VerbsLayouts.ASYNC_EVENT_ELEMENT).address();
    int port = s.get(JAVA_INT, VerbsLayouts.ASYNC_EVENT_ELEMENT);
    VerbsAsyncEvent e = new VerbsAsyncEvent(type, element, port);
    return e.isPortEvent() ? new VerbsAsyncEvent(type, 0, port) : new VerbsAsyncEvent(type, element, 0);
  }
}
