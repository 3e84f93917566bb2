package org.mori4j.io;

/** How an RDMA completion-queue poller waits: busy {@code POLLING} (lowest latency) or {@code EVENT} (interrupt driven). */
public enum PollCqMode { POLLING, EVENT }
