package org.mori4j.transport.rdma.soft;

import static org.mori4j.natives.verbs.Errno.*;
import static org.mori4j.natives.verbs.VerbsConstants.*;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.Inet4Address;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.mori4j.transport.DeviceStaging;
import org.mori4j.transport.rdma.verbs.CompletionChannel;
import org.mori4j.transport.rdma.verbs.CompletionQueue;
import org.mori4j.transport.rdma.verbs.PortInfo;
import org.mori4j.transport.rdma.verbs.ProtectionDomain;
import org.mori4j.transport.rdma.verbs.VerbsDevice;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One software RDMA device (emulation), the analogue of an rxe device: one active Ethernet port with one GID
 * that encodes the address of the device's own TCP listener ({@link SoftGid}), and its own I/O thread
 * ({@code soft-rdma-<n>-io}) that carries every queue pair's traffic. Each {@link SoftwareVerbsProvider#open}
 * creates an independent device, so two engines in one JVM (or in two JVMs) talk to each other as two hosts
 * would. It keeps the tables a NIC keeps: regions by lkey and rkey, queue pairs by number. Closing it stops its
 * thread and closes every socket; resources still open are logged and their queue pairs flushed to ERR.
 */
final class SoftDevice implements VerbsDevice {
  private static final Logger log = LoggerFactory.getLogger(SoftDevice.class);
  private static final AtomicInteger COUNTER = new AtomicInteger();
  static final int MAX_QP_WR = 32768;
  static final int MAX_CQE = 4194303;

  final String label;
  final DeviceStaging staging;
  final SoftSettings settings;
  final SoftIoLoop loop;
  private final byte[] gid;
  private final Map<Integer, SoftMemoryRegion> byLkey = new ConcurrentHashMap<>();
  private final Map<Integer, SoftMemoryRegion> byRkey = new ConcurrentHashMap<>();
  private final Map<Integer, SoftQueuePair> queuePairs = new ConcurrentHashMap<>();
  private final Set<Object> resources = ConcurrentHashMap.newKeySet();
  private final SplittableRandom random = new SplittableRandom(new SecureRandom().nextLong());
  private int nextQpn;
  private volatile boolean closed;
  /** I/O thread only: where drained payloads go, and the zeros a failed payload is padded with. */
  final ByteBuffer scratch = ByteBuffer.allocateDirect(256 << 10);
  final ByteBuffer zeros = ByteBuffer.allocateDirect(64 << 10);

  private SoftDevice(Inet4Address bind, DeviceStaging staging, SoftSettings settings) throws IOException {
    int n = COUNTER.incrementAndGet();
    this.label = SoftwareVerbsProvider.DEVICE_NAME + "#" + n;
    this.staging = staging;
    this.settings = settings;
    this.loop = new SoftIoLoop(this, bind, "soft-rdma-" + n + "-io");
    this.gid = SoftGid.encode(bind, loop.port());
    this.nextQpn = 0x100 + random.nextInt(0x7f0000);
  }

  static SoftDevice open(Inet4Address bind, DeviceStaging staging, SoftSettings settings) {
    SoftDevice d;
    try {
      d = new SoftDevice(bind, staging, settings);
    } catch (IOException e) {
      throw SoftErrors.error("ibv_open_device", EADDRNOTAVAIL, "cannot listen on " + bind.getHostAddress() + ": " + e);
    }
    d.loop.start();
    log.info("software RDMA device {} opened (emulation, not NIC performance): TCP {}:{}, GID {}", d.label,
        bind.getHostAddress(), d.loop.port(), SoftGid.format(d.gid));
    return d;
  }

  @Override
  public String name() {
    return SoftwareVerbsProvider.DEVICE_NAME;
  }

  @Override
  public int portCount() {
    return 1;
  }

  @Override
  public PortInfo queryPort(int port) {
    checkOpen("ibv_query_port");
    if (port != 1) throw SoftErrors.error("ibv_query_port", EINVAL, "port " + port + " does not exist; the software device has port 1");
    return new PortInfo(1, IBV_PORT_ACTIVE, IBV_MTU_4096, 0, IBV_LINK_LAYER_ETHERNET, 1);
  }

  @Override
  public byte[] queryGid(int port, int index) {
    checkOpen("ibv_query_gid");
    if (port != 1) throw SoftErrors.error("ibv_query_gid", EINVAL, "port " + port + " does not exist; the software device has port 1");
    if (index != 0) throw SoftErrors.error("ibv_query_gid", EINVAL, "GID index " + index + " is outside the GID table of 1 entry");
    return gid.clone();
  }

  @Override
  public int maxQueuePairWorkRequests() {
    return MAX_QP_WR;
  }

  @Override
  public int maxCompletionQueueEntries() {
    return MAX_CQE;
  }

  @Override
  public ProtectionDomain allocateProtectionDomain() {
    checkOpen("ibv_alloc_pd");
    SoftProtectionDomain pd = new SoftProtectionDomain(this);
    resources.add(pd);
    return pd;
  }

  @Override
  public CompletionChannel createCompletionChannel() {
    checkOpen("ibv_create_comp_channel");
    SoftCompletionChannel c = new SoftCompletionChannel(this);
    resources.add(c);
    return c;
  }

  @Override
  public CompletionQueue createCompletionQueue(int entries, CompletionChannel channel) {
    checkOpen("ibv_create_cq");
    if (entries < 1 || entries > MAX_CQE) throw SoftErrors.error("ibv_create_cq", EINVAL, "entries " + entries + " is outside 1.." + MAX_CQE);
    SoftCompletionChannel ch = null;
    if (channel != null) {
      if (!(channel instanceof SoftCompletionChannel s) || !resources.contains(s)) {
        throw SoftErrors.error("ibv_create_cq", EINVAL, "channel " + channel + " is not an open channel of software device " + label);
      }
      ch = s;
    }
    SoftCompletionQueue cq = new SoftCompletionQueue(this, entries, ch);
    resources.add(cq);
    return cq;
  }

  /** Registers a region under fresh keys: random 32-bit values, lkey != rkey, neither in use on this device. */
  synchronized SoftMemoryRegion newRegion(SoftProtectionDomain pd, long address, long length, int access, boolean gpu, int gpuDevice,
                                          MemorySegment.Scope owner) {
    int lkey, rkey;
    do {
      lkey = random.nextInt();
      rkey = random.nextInt();
    } while (lkey == rkey || lkey == 0 || rkey == 0 || byLkey.containsKey(lkey) || byRkey.containsKey(lkey)
        || byLkey.containsKey(rkey) || byRkey.containsKey(rkey));
    SoftMemoryRegion mr = new SoftMemoryRegion(pd, address, length, lkey, rkey, access, gpu, gpuDevice, owner);
    byLkey.put(lkey, mr);
    byRkey.put(rkey, mr);
    return mr;
  }

  synchronized SoftQueuePair newQueuePair(SoftProtectionDomain pd, SoftCompletionQueue send, SoftCompletionQueue receive,
                                          int maxSendWr, int maxReceiveWr) {
    int qpn = nextQpn;
    while (queuePairs.containsKey(qpn)) qpn = qpn + 1 > 0xffffff ? 0x100 : qpn + 1;
    nextQpn = qpn + 1 > 0xffffff ? 0x100 : qpn + 1;
    SoftQueuePair qp = new SoftQueuePair(this, pd, send, receive, qpn, maxSendWr, maxReceiveWr);
    send.attach(qp);
    receive.attach(qp);
    queuePairs.put(qpn, qp);
    return qp;
  }

  SoftMemoryRegion regionByLkey(int lkey) {
    SoftMemoryRegion mr = byLkey.get(lkey);
    return mr != null && mr.live() ? mr : null;
  }

  SoftMemoryRegion regionByRkey(int rkey) {
    SoftMemoryRegion mr = byRkey.get(rkey);
    return mr != null && mr.live() ? mr : null;
  }

  SoftQueuePair queuePair(int qpn) {
    return queuePairs.get(qpn);
  }

  void forget(SoftMemoryRegion mr) {
    byLkey.remove(mr.lkey(), mr);
    byRkey.remove(mr.rkey(), mr);
  }

  void forget(SoftQueuePair qp) {
    queuePairs.remove(qp.qpNumber(), qp);
    dropConnections(qp);
  }

  void forget(Object resource) {
    resources.remove(resource);
  }

  /** Has the I/O thread close the connections {@code qp} no longer uses. */
  void dropConnections(SoftQueuePair qp) {
    loop.execute(qp::dropStaleConnections);
  }

  void checkOpen(String function) {
    if (closed) throw SoftErrors.error(function, EINVAL, "software device " + label + " is closed");
  }

  /** The I/O thread stopped without {@link #close()}: every QP goes to ERR so that its requests complete (flushed). */
  void ioStopped() {
    for (SoftQueuePair qp : new ArrayList<>(queuePairs.values())) qp.deviceClosing();
  }

  @Override
  public void close() {
    if (closed) return;
    closed = true;
    List<SoftQueuePair> open = new ArrayList<>(queuePairs.values());
    if (!open.isEmpty() || !resources.isEmpty()) {
      log.warn("software RDMA (emulation) {}: closed with {} queue pairs and {} other resources still open; their owners"
          + " should close them first (the queue pairs go to ERR)", label, open.size(), resources.size());
    }
    for (SoftQueuePair qp : open) qp.deviceClosing();
    loop.close();
    log.info("software RDMA device {} closed (emulation)", label);
  }

  @Override
  public String toString() {
    return "software RDMA device " + label + " (emulation)";
  }
}
