package org.mori4j.io;

/**
 * MORI-IO's XGMI (intra-node GPU peer) backend settings: streams and events per device. The XGMI backend
 * is not in this build yet: creating it fails with a clear {@link IoEngineException}.
 */
public record XgmiBackendConfig(int numStreams, int numEvents) implements BackendConfig {
  public XgmiBackendConfig {
    if (numStreams < 1) throw new IllegalArgumentException("numStreams must be >= 1: " + numStreams);
    if (numEvents < 1) throw new IllegalArgumentException("numEvents must be >= 1: " + numEvents);
  }

  /** MORI's defaults: 64 streams, 64 events. */
  public static XgmiBackendConfig defaults() {
    return new XgmiBackendConfig(64, 64);
  }

  @Override
  public BackendType type() {
    return BackendType.XGMI;
  }
}
