package org.mori4j.io.kv;

/**
 * The receiver's news that layers {@code [fromLayer, toLayer)} of request {@code requestId} are in cache
 * {@code cacheName}: every byte of those layers' blocks has landed (the sender sends it only after its transfers
 * completed). {@code fromEngine} is the engine that moved them. A request that ended without its data
 * (cancelled, failed) is announced with {@code failure} set and an empty layer range.
 */
public record KvLayersLanded(String cacheName, String requestId, int fromLayer, int toLayer, String fromEngine, String failure) {
  public boolean failed() {
    return failure != null;
  }
}
