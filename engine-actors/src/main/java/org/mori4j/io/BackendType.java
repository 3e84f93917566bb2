package org.mori4j.io;

/**
 * A transfer medium. {@code TCP} is implemented; {@code RDMA} and {@code XGMI} are named so that
 * configurations and descriptors are stable, and {@link IoEngine#createBackend} refuses them with a
 * clear error until their backends land.
 */
public enum BackendType { XGMI, RDMA, TCP }
