package org.mori4j.io.internal;

/**
 * Marker of every message that may cross the network between engines; bound to
 * {@link ControlMessageSerializer} in {@code reference.conf}, so Java serialization is never used.
 */
public interface ControlMessage {}
