package org.mori4j.transport.rdma.ibv;

import org.mori4j.natives.verbs.VerbsCompletionQueue;
import org.mori4j.natives.verbs.VerbsContext;
import org.mori4j.natives.verbs.VerbsDeviceAttributes;
import org.mori4j.natives.verbs.VerbsPortAttributes;
import org.mori4j.transport.rdma.verbs.CompletionChannel;
import org.mori4j.transport.rdma.verbs.CompletionQueue;
import org.mori4j.transport.rdma.verbs.PortInfo;
import org.mori4j.transport.rdma.verbs.ProtectionDomain;
import org.mori4j.transport.rdma.verbs.VerbsDevice;

/**
 * An open NIC ({@code ibv_context}, owned): its attributes are queried once at open
 * ({@code ibv_query_device}) because queue sizing reads them often and they never change; ports and GIDs are
 * queried on each call ({@code ibv_query_port}, {@code ibv_query_gid}) because a port's state and LID do.
 */
final class IbvDevice implements VerbsDevice {
  private final VerbsContext context;
  private final VerbsDeviceAttributes attributes;

  IbvDevice(VerbsContext context) {
    this.context = context;
    this.attributes = context.queryDevice();
  }

  @Override
  public String name() {
    return context.deviceName();
  }

  @Override
  public int portCount() {
    return attributes.physicalPortCount();
  }

  @Override
  public PortInfo queryPort(int port) {
    checkPort(port);
    return portInfo(port, context.queryPort(port));
  }

  /** The part of {@code ibv_port_attr} the backend needs. */
  static PortInfo portInfo(int port, VerbsPortAttributes a) {
    return new PortInfo(port, a.state(), a.activeMtu(), a.lid(), a.linkLayer(), a.gidTableLength());
  }

  @Override
  public byte[] queryGid(int port, int index) {
    checkPort(port);
    if (index < 0) throw new IllegalArgumentException("GID index must be >= 0: " + index);
    return context.queryGid(port, index);
  }

  @Override
  public int maxQueuePairWorkRequests() {
    return attributes.maxQpWr();
  }

  @Override
  public int maxCompletionQueueEntries() {
    return attributes.maxCqe();
  }

  @Override
  public ProtectionDomain allocateProtectionDomain() {
    return new IbvProtectionDomain(context.allocateProtectionDomain());
  }

  @Override
  public CompletionChannel createCompletionChannel() {
    return IbvCompletionChannel.create(context);
  }

  @Override
  public CompletionQueue createCompletionQueue(int entries, CompletionChannel channel) {
    if (entries < 1) throw new IllegalArgumentException("completion queue entries must be >= 1: " + entries);
    if (entries > attributes.maxCqe()) {
      throw new IllegalArgumentException("completion queue entries " + entries + " exceed " + name()
          + "'s max_cqe " + attributes.maxCqe());
    }
    IbvCompletionChannel events = null;
    if (channel != null) {
      if (!(channel instanceof IbvCompletionChannel c)) {
        throw new IllegalArgumentException("channel is not an ibverbs completion channel: " + channel);
      }
      events = c;
    }
    // Completion vector 0: the backend runs one poller per device, so spreading interrupts buys nothing.
    VerbsCompletionQueue cq = context.createCompletionQueue(entries, events == null ? null : events.verbs(), 0);
    try {
      return new IbvCompletionQueue(cq);
    } catch (RuntimeException e) {
      cq.close();
      throw e;
    }
  }

  @Override
  public void close() {
    context.close();
  }

  private void checkPort(int port) {
    if (port < 1 || port > portCount()) {
      throw new IllegalArgumentException("port must be in 1.." + portCount() + " on " + name() + ": " + port);
    }
  }

  @Override
  public String toString() {
    return "ibverbs device " + name();
  }
}
