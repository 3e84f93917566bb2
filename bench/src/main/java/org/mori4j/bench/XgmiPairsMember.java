package org.mori4j.bench;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.IoEngineSession;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.TransferStatus;
import org.mori4j.io.XgmiBackendConfig;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;

/**
 * One engine of {@code xgmi-pairs}: an {@link IoEngine} with only the XGMI backend, a source buffer and a
 * destination buffer on its device (the destination published as {@value #BUFFER_NAME}), and what it does in a row:
 * connect to the other engines by address (the same way in one JVM and across JVMs, so the other engines' buffers
 * come as descriptors with IPC handles when they are in other processes), take a row's layout and seed, run one
 * iteration from a common release time, and check what landed in its destination. It owns its buffers and frees
 * them after its engine is closed.
 */
final class XgmiPairsMember implements AutoCloseable {
  static final String BUFFER_NAME = "xgmi-pairs-dst";

  private final int index;
  private final int device;
  private final GpuRuntime gpu;
  private final IoEngine engine;
  private final DeviceBuffer source;
  private final DeviceBuffer destination;
  private final MemoryDesc sourceDesc;
  private final MemoryDesc destinationDesc;
  private final XgmiPairsBytes bytes;
  private final Map<Integer, MemoryDesc> remotes = new HashMap<>();
  private final Map<Integer, String> remoteDevices = new HashMap<>();
  private XgmiPairsLayout layout;
  private List<XgmiPairsLayout.Route> mine = List.of();
  private long rowSeed;
  private List<XgmiPairsLayout.Route> single = List.of();
  private List<MemoryDesc> batchLocals = List.of(), batchDsts = List.of();
  private List<long[]> batchSrcOffsets = List.of(), batchDstOffsets = List.of(), batchSizes = List.of();
  private long[] batchUids = new long[0];

  /** Starts the engine on {@code host} (port picked by the kernel) and registers both buffers. */
  XgmiPairsMember(int index, int device, GpuRuntime gpu, long sourceBytes, long destinationBytes, String host) {
    this.index = index;
    this.device = device;
    this.gpu = gpu;
    IoEngine e = null;
    DeviceBuffer s = null, d = null;
    XgmiPairsBytes b = null;
    try {
      e = IoEngine.create("xgmi-pairs-" + ProcessHandle.current().pid() + "-" + index, new IoEngineConfig(host, 0));
      e.createBackend(BackendType.XGMI, XgmiBackendConfig.defaults());
      s = gpu.allocDevice(device, sourceBytes);
      d = gpu.allocDevice(device, destinationBytes);
      b = new XgmiPairsBytes(gpu);
      sourceDesc = e.registerMemory(s.address(), sourceBytes, device, MemoryLocationType.GPU);
      destinationDesc = e.registerMemory(d.address(), destinationBytes, device, MemoryLocationType.GPU);
      e.publishMemory(BUFFER_NAME, destinationDesc);
    } catch (RuntimeException | Error ex) {
      if (e != null) e.close();
      if (b != null) b.close();
      if (s != null) s.close();
      if (d != null) d.close();
      throw ex;
    }
    this.engine = e;
    this.source = s;
    this.destination = d;
    this.bytes = b;
  }

  EngineDesc engineDesc() {
    return engine.engineDesc();
  }

  /** The destination buffer's device address: a test corrupts a byte there to show the check fails. */
  long destinationAddress() {
    return destination.address();
  }

  /**
   * Finds engine {@code i}'s destination buffer at {@code addresses[i]} for every other engine, and refuses to go
   * on unless the engine routes this source to each of them over XGMI (the rows would otherwise measure another
   * backend).
   */
  void connect(List<String> addresses) {
    for (int i = 0; i < addresses.size(); i++) {
      if (i == index) continue;
      String a = addresses.get(i);
      int colon = a.lastIndexOf(':');
      EngineDesc peer = engine.discover(a.substring(0, colon), Integer.parseInt(a.substring(colon + 1)));
      engine.registerRemoteEngine(peer);
      int peerIndex = i;
      MemoryDesc remote = engine.lookupMemory(peer, BUFFER_NAME).orElseThrow(() ->
          new IllegalStateException("engine " + peerIndex + " at " + a + " publishes no '" + BUFFER_NAME + "'"));
      Optional<IoEngineSession> route = engine.createSession(sourceDesc, remote);
      if (route.isEmpty() || route.get().backendType() != BackendType.XGMI)
        throw new IllegalStateException("engine " + index + " (GPU" + device + ") -> engine " + i + " (GPU" + remote.deviceId() + ") is not routed over XGMI ("
            + route.map(r -> "the engine chose " + r.backendType()).orElse("no backend serves the pair") + "): " + engine.explain(sourceDesc, remote).summary());
      remotes.put(i, remote);
      remoteDevices.put(i, "GPU" + remote.deviceId());
    }
  }

  /** Takes a row: its layout (what this engine sends), the pattern of its source, a zeroed destination. */
  void prepare(XgmiPairsLayout layout, long rowSeed) {
    if (layout.sourceBytes() > source.size() || layout.destinationBytes() > destination.size())
      throw new IllegalStateException("row " + layout.shape().label() + " needs " + layout.sourceBytes() + " + " + layout.destinationBytes()
          + " bytes, engine " + index + " has " + source.size() + " + " + destination.size());
    for (XgmiPairsLayout.Route r : layout.from(index)) {
      if (!remotes.containsKey(r.destination())) throw new IllegalStateException("engine " + index + " is not connected to engine " + r.destination());
    }
    this.layout = layout;
    this.mine = layout.from(index);
    this.rowSeed = rowSeed;
    // the iteration's arguments, built once: a route of one block is a write, the others one batchWrite entry each
    single = mine.stream().filter(r -> r.sizes().length == 1).toList();
    List<XgmiPairsLayout.Route> batched = mine.stream().filter(r -> r.sizes().length > 1).toList();
    batchLocals = batched.stream().map(r -> sourceDesc).toList();
    batchDsts = batched.stream().map(r -> remotes.get(r.destination())).toList();
    batchSrcOffsets = batched.stream().map(XgmiPairsLayout.Route::sourceOffsets).toList();
    batchDstOffsets = batched.stream().map(XgmiPairsLayout.Route::destinationOffsets).toList();
    batchSizes = batched.stream().map(XgmiPairsLayout.Route::sizes).toList();
    batchUids = new long[batched.size()];
    bytes.fill(source.address(), layout.sourceBytes(), XgmiPairsLayout.seed(rowSeed, index));
    bytes.zero(destination.address(), layout.destinationBytes());
  }

  /**
   * One iteration: waits for {@code releaseAt} ({@link System#nanoTime}, which on Linux is one clock for every
   * process of the host), issues every route of this engine, waits for all of them, and returns when the last
   * completed and how late this engine started: {@code [end, late]} in nanoseconds.
   */
  long[] iterate(long releaseAt) {
    long late = waitUntil(releaseAt) - releaseAt;
    List<TransferStatus> all = new ArrayList<>(mine.size());
    for (XgmiPairsLayout.Route r : single) {
      all.add(engine.write(sourceDesc, r.sourceOffsets()[0], remotes.get(r.destination()), r.destinationOffsets()[0], r.sizes()[0],
          engine.allocateTransferUid()));
    }
    if (!batchDsts.isEmpty()) {
      for (int i = 0; i < batchUids.length; i++) batchUids[i] = engine.allocateTransferUid();
      all.addAll(engine.batchWrite(batchLocals, batchSrcOffsets, batchDsts, batchDstOffsets, batchSizes, batchUids));
    }
    for (TransferStatus s : all) {
      if (!s.await().succeeded()) throw new EngineBenchmark.TransferFailedException("engine " + index + ": write failed: " + s.code() + " " + s.message());
    }
    return new long[] {System.nanoTime(), late};
  }

  /**
   * Returns at {@code releaseAt} or just after it, with the time: parked until shortly before (a park can overshoot by
   * tens of microseconds), spinning the rest, so that every engine and every raw copy thread starts within a
   * microsecond of the others.
   */
  static long waitUntil(long releaseAt) {
    long now;
    while ((now = System.nanoTime()) < releaseAt) {
      if (releaseAt - now > 500_000) LockSupport.parkNanos(releaseAt - now - 300_000);
      else Thread.onSpinWait();
    }
    return now;
  }

  /** Compares every block that landed in this engine's destination; null when all match, else the first wrong byte. */
  String check() {
    return check(layout);
  }

  /** {@link #check()} against {@code expected}, which may differ from the layout the row was sent with (a test's wrong route). */
  String check(XgmiPairsLayout expected) {
    return bytes.check(destination.address(), expected.into(index), i -> XgmiPairsLayout.seed(rowSeed, i),
        "engine " + index + " (GPU" + device + ") destination");
  }

  /** One line: the path the engine takes to each other engine's buffer. */
  String paths() {
    List<String> out = new ArrayList<>();
    for (int i : remotes.keySet().stream().sorted().toList()) out.add("-> " + i + " " + remoteDevices.get(i) + ": " + engine.explain(sourceDesc, remotes.get(i)).summary());
    return String.join("; ", out);
  }

  @Override
  public void close() {
    try {
      engine.close();
    } finally {
      bytes.close();
      source.close();
      destination.close();
    }
  }
}
