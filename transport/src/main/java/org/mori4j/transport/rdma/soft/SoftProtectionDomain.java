package org.mori4j.transport.rdma.soft;

import static org.mori4j.natives.verbs.Errno.*;
import static org.mori4j.natives.verbs.VerbsConstants.*;

import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.mori4j.transport.DeviceStaging;
import org.mori4j.transport.rdma.verbs.MemoryRegion;
import org.mori4j.transport.rdma.verbs.ProtectionDomain;
import org.mori4j.transport.rdma.verbs.QueuePair;
import org.mori4j.transport.rdma.verbs.QueuePairSpec;

/**
 * A protection domain of the software RDMA device (emulation): the regions and queue pairs created in it work
 * only with each other (the responder refuses an rkey of another domain's region, the requester an lkey).
 * Closing it while regions or queue pairs of it are open fails with {@code EBUSY}, as {@code ibv_dealloc_pd} does.
 */
final class SoftProtectionDomain implements ProtectionDomain {
  final SoftDevice device;
  private final Set<SoftMemoryRegion> regions = ConcurrentHashMap.newKeySet();
  private final Set<SoftQueuePair> queuePairs = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  SoftProtectionDomain(SoftDevice device) {
    this.device = device;
  }

  @Override
  public MemoryRegion registerMemory(MemorySegment memory, int access) {
    checkOpen("ibv_reg_mr");
    if (memory == null) throw SoftErrors.error("ibv_reg_mr", EINVAL, "memory is null");
    if (!memory.isNative()) {
      throw SoftErrors.error("ibv_reg_mr", EFAULT, "memory must be native (off-heap); a heap segment has no fixed address: " + memory);
    }
    if (memory.byteSize() == 0) throw SoftErrors.error("ibv_reg_mr", EINVAL, "memory length is 0 at " + SoftErrors.hex(memory.address()));
    checkAccess(access);
    return add(memory.address(), memory.byteSize(), access, false, 0, memory.scope());
  }

  @Override
  public MemoryRegion registerGpuMemory(long address, long length, int deviceId, int access) {
    checkOpen("ibv_reg_mr");
    DeviceStaging staging = device.staging;
    if (staging == null) {
      throw SoftErrors.error("ibv_reg_mr", EOPNOTSUPP, "GPU memory of device " + deviceId + " at " + SoftErrors.hex(address)
          + ": this software provider was created without a DeviceStaging, so it cannot reach GPU memory");
    }
    if (!staging.available()) {
      throw SoftErrors.error("ibv_reg_mr", EOPNOTSUPP, "GPU memory of device " + deviceId + ": GPU staging is unavailable: "
          + staging.unavailableReason());
    }
    if (address == 0) throw SoftErrors.error("ibv_reg_mr", EINVAL, "GPU address is 0");
    if (length <= 0) throw SoftErrors.error("ibv_reg_mr", EINVAL, "GPU memory length must be > 0: " + length);
    if (deviceId < 0) throw SoftErrors.error("ibv_reg_mr", EINVAL, "GPU device id must be >= 0: " + deviceId);
    checkAccess(access);
    return add(address, length, access, true, deviceId, null);
  }

  private SoftMemoryRegion add(long address, long length, int access, boolean gpu, int gpuDevice, MemorySegment.Scope owner) {
    SoftMemoryRegion mr = device.newRegion(this, address, length, access, gpu, gpuDevice, owner);
    regions.add(mr);
    return mr;
  }

  private static void checkAccess(int access) {
    // IB: a region remote peers may write (or do atomics on) must be locally writable too
    if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) != 0 && (access & IBV_ACCESS_LOCAL_WRITE) == 0) {
      throw SoftErrors.error("ibv_reg_mr", EINVAL, "access " + SoftErrors.hex(access)
          + " grants remote write or atomics without IBV_ACCESS_LOCAL_WRITE");
    }
  }

  @Override
  public QueuePair createQueuePair(QueuePairSpec spec) {
    checkOpen("ibv_create_qp");
    if (spec == null) throw SoftErrors.error("ibv_create_qp", EINVAL, "spec is null");
    SoftCompletionQueue send = ownCq(spec.sendCq(), "send");
    SoftCompletionQueue receive = ownCq(spec.receiveCq(), "receive");
    int max = device.maxQueuePairWorkRequests();
    if (spec.maxSendWr() > max) throw SoftErrors.error("ibv_create_qp", EINVAL, "maxSendWr " + spec.maxSendWr() + " exceeds the device's " + max);
    if (spec.maxReceiveWr() > max) throw SoftErrors.error("ibv_create_qp", EINVAL, "maxReceiveWr " + spec.maxReceiveWr() + " exceeds the device's " + max);
    SoftQueuePair qp = device.newQueuePair(this, send, receive, spec.maxSendWr(), spec.maxReceiveWr());
    queuePairs.add(qp);
    return qp;
  }

  private SoftCompletionQueue ownCq(Object cq, String which) {
    if (!(cq instanceof SoftCompletionQueue s) || s.device != device) {
      throw SoftErrors.error("ibv_create_qp", EINVAL, which + " CQ " + cq + " is not a CQ of software device " + device.label);
    }
    if (s.closed()) throw SoftErrors.error("ibv_create_qp", EINVAL, which + " CQ is destroyed");
    return s;
  }

  void forget(SoftMemoryRegion mr) {
    regions.remove(mr);
    device.forget(mr);
  }

  void forget(SoftQueuePair qp) {
    queuePairs.remove(qp);
  }

  private void checkOpen(String function) {
    if (closed) throw SoftErrors.error(function, EINVAL, "protection domain is deallocated");
    device.checkOpen(function);
  }

  @Override
  public void close() {
    if (closed) return;
    if (!regions.isEmpty() || !queuePairs.isEmpty()) {
      throw SoftErrors.error("ibv_dealloc_pd", EBUSY, regions.size() + " memory regions and " + queuePairs.size()
          + " queue pairs of this protection domain are still open; close them first");
    }
    closed = true;
    device.forget(this);
  }
}
