package org.mori4j.cluster;

/**
 * Marker for every message of this module that crosses the network between cluster members. The module's
 * {@code reference.conf} binds it to Pekko's Jackson CBOR serializer, so such a message never falls back to
 * Java serialization (which stays disabled); a new remote message only has to implement this interface.
 */
public interface CborSerializable {}
