package org.mori4j.natives.gpu;

/**
 * Free and total memory of one device as its driver reports them ({@code cuMemGetInfo}, {@code hipMemGetInfo}),
 * in bytes: what an engine checks before sizing staging pools, and what a leak test compares before and after.
 */
public record DeviceMemoryInfo(long free, long total) {}
