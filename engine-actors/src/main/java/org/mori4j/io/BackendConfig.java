package org.mori4j.io;

/** Configuration of one backend, passed to {@link IoEngine#createBackend(BackendType, BackendConfig)}. */
public sealed interface BackendConfig permits TcpBackendConfig, RdmaBackendConfig, XgmiBackendConfig {
  /** The backend type this configuration is for. */
  BackendType type();
}
