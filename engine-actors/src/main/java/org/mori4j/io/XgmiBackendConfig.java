package org.mori4j.io;

/**
 * MORI-IO's XGMI (intra-node GPU peer) backend settings: streams per device that copies and batch kernels are
 * spread over, and events per device, which bound the transfers on one device's GPU at once (more wait in the
 * backend's queue). Creating the backend needs a GPU runtime; without one it fails with
 * {@link StatusCode#ERR_GPU_OP} saying what was tried.
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
