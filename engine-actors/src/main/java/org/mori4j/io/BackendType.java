package org.mori4j.io;

/**
 * A transfer medium, in the engine's order of preference: {@code XGMI} (GPU peer copies between engines of
 * one host; NVLink on NVIDIA) and {@code TCP} are implemented; {@code RDMA} is named so that configurations
 * and descriptors are stable, and {@link IoEngine#createBackend} refuses it with a clear error.
 */
public enum BackendType { XGMI, RDMA, TCP }
