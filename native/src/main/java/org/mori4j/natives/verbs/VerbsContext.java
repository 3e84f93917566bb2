package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * An open verbs device ({@code struct ibv_context}): the factory for protection domains, completion channels
 * and queues, and the source of device, port and GID queries and asynchronous events. A context opened by
 * us ({@link RdmaDevices#open}, {@link VerbsDeviceList#openContext}) is closed with {@code ibv_close_device};
 * one librdmacm opened for a CM id ({@link #borrow}) belongs to librdmacm and closing it only ends our use.
 */
public final class VerbsContext extends NativeResource {
  private final String deviceName;
  private final boolean owned;

  private VerbsContext(MemorySegment context, String deviceName, boolean owned) {
    super("ibv context " + deviceName, context, VerbsLayouts.IBV_CONTEXT.byteSize());
    this.deviceName = deviceName;
    this.owned = owned;
  }

  static VerbsContext own(MemorySegment context, String deviceName) {
    return new VerbsContext(context, deviceName, true);
  }

  /** Wraps a context someone else owns (e.g. {@code rdma_cm_id.verbs}); {@link #close()} leaves it open. */
  public static VerbsContext borrow(MemorySegment context) {
    MemorySegment ctx = context.reinterpret(VerbsLayouts.IBV_CONTEXT.byteSize());
    String name = IbVerbs.getDeviceName(ctx.get(ADDRESS, VerbsLayouts.CONTEXT_DEVICE));
    return new VerbsContext(ctx, name, false);
  }

  public String deviceName() {
    return deviceName;
  }

  /** The file descriptor async events arrive on ({@code context->async_fd}), for poll/epoll. */
  public int asyncFd() {
    return handle().get(JAVA_INT, VerbsLayouts.CONTEXT_ASYNC_FD);
  }

  /** How many completion vectors CQs of this device may use ({@code context->num_comp_vectors}). */
  public int completionVectors() {
    return handle().get(JAVA_INT, VerbsLayouts.CONTEXT_NUM_COMP_VECTORS);
  }

  public VerbsDeviceAttributes queryDevice() {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = a.allocate(VerbsLayouts.IBV_DEVICE_ATTR);
      IbVerbs.queryDevice(handle(), attr);
      return VerbsDeviceAttributes.read(attr);
    }
  }

  /** Port numbers start at 1. */
  public VerbsPortAttributes queryPort(int port) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = a.allocate(VerbsLayouts.IBV_PORT_ATTR);
      IbVerbs.queryPort(handle(), port, attr);
      return VerbsPortAttributes.read(attr);
    }
  }

  /** The 16-byte GID at {@code index} of {@code port}'s table (RoCE addresses peers by GID). */
  public byte[] queryGid(int port, int index) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment gid = a.allocate(VerbsLayouts.IBV_GID);
      IbVerbs.queryGid(handle(), port, index, gid);
      return gid.toArray(JAVA_BYTE);
    }
  }

  public VerbsProtectionDomain allocateProtectionDomain() {
    return new VerbsProtectionDomain(IbVerbs.allocPd(handle()));
  }

  public VerbsCompletionChannel createCompletionChannel() {
    return new VerbsCompletionChannel(IbVerbs.createCompChannel(handle()));
  }

  /**
   * A CQ of at least {@code entries} entries; completion events go to {@code channel} (null for a CQ that
   * is only polled) on completion vector {@code vector}.
   */
  public VerbsCompletionQueue createCompletionQueue(int entries, VerbsCompletionChannel channel, int vector) {
    MemorySegment ch = channel == null ? MemorySegment.NULL : channel.handle();
    return new VerbsCompletionQueue(IbVerbs.createCq(handle(), entries, MemorySegment.NULL, ch, vector));
  }

  /** Blocks until the device reports an asynchronous event, copies it and acknowledges it. */
  public VerbsAsyncEvent nextAsyncEvent() {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment event = a.allocate(VerbsLayouts.IBV_ASYNC_EVENT);
      IbVerbs.getAsyncEvent(handle(), event);
      VerbsAsyncEvent copy = VerbsAsyncEvent.read(event);
      // Acknowledged at once: destroying a CQ or QP waits for its events' acks, and we keep only a copy.
      IbVerbs.ackAsyncEvent(event);
      return copy;
    }
  }

  @Override
  protected void release(MemorySegment handle) {
    if (owned) IbVerbs.closeDevice(handle);
  }
}
