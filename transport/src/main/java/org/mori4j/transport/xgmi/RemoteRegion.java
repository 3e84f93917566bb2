package org.mori4j.transport.xgmi;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.mori4j.natives.gpu.IpcMapping;
import org.mori4j.transport.TransferOp;

/**
 * A remote engine's GPU region as the worker knows it (worker thread only): first {@link State#CONFIRMING}
 * while its owner is asked what it registered (ops wait in {@link #waiting}), then {@link State#READY} with
 * the owner's answer, against which every op is checked. In another process the region is reached through
 * the allocation's IPC handle, opened once per local device that copies to or from it and kept until the
 * region is revoked (deregistered by its owner), its peer goes, or the backend closes; a mapping is closed
 * only when no copy that uses it is still on the GPU.
 */
final class RemoteRegion {
  enum State { CONFIRMING, READY, REVOKED }

  final XgmiPeer peer;
  final long id;
  final long accessKey;
  State state = State.CONFIRMING;
  final List<TransferOp> waiting = new ArrayList<>(2);
  // the owner's answer
  long address;
  long size;
  byte[] data;
  int ownerDevice;
  long pciLocation;
  long offsetInAllocation;
  long allocationSize;
  boolean hasHandle;
  /** The owner's device as this process numbers it, or -1 when this process cannot see it. */
  int localDevice = -1;
  /** IPC mappings by local device (another process only). */
  IpcMapping[] mappings = new IpcMapping[0];
  /** Why opening the handle on a device failed, by local device, so later ops fail fast with the same reason. */
  String[] openFailures = new String[0];
  /** Ops of this region on the GPU now. */
  int inFlight;
  /** Run when a revoked region has no op on the GPU any more and its mappings are closed. */
  Runnable onReleased;

  RemoteRegion(XgmiPeer peer, long id, long accessKey) {
    this.peer = peer;
    this.id = id;
    this.accessKey = accessKey;
  }

  /** The owner's answer (checked XGMI data): the region is {@link State#READY}; the caller sets {@link #localDevice}. */
  void confirmed(long address, long size, byte[] data) {
    this.address = address;
    this.size = size;
    this.data = data;
    XgmiMemoryData parsed = XgmiMemoryData.decode(data);
    this.ownerDevice = parsed.device();
    this.pciLocation = parsed.pciLocation();
    this.hasHandle = XgmiMemoryData.hasHandle(data);
    this.offsetInAllocation = parsed.offsetInAllocation();
    this.allocationSize = parsed.allocationSize();
    this.state = State.READY;
  }

  /** Whether {@code opData} is the XGMI data the owner confirmed (same array when it came from the same descriptor). */
  boolean sameData(byte[] opData) {
    return opData == data || Arrays.equals(opData, data);
  }

  IpcMapping mapping(int device) {
    return device < mappings.length ? mappings[device] : null;
  }

  String openFailure(int device) {
    return device < openFailures.length ? openFailures[device] : null;
  }

  void keepMapping(int device, IpcMapping m) {
    if (device >= mappings.length) mappings = Arrays.copyOf(mappings, device + 1);
    mappings[device] = m;
  }

  void keepOpenFailure(int device, String why) {
    if (device >= openFailures.length) openFailures = Arrays.copyOf(openFailures, device + 1);
    openFailures[device] = why;
  }

  /** Closes every mapping (no copy may use them any more); returns how many were open. */
  int closeMappings() {
    int n = 0;
    for (int i = 0; i < mappings.length; i++) {
      if (mappings[i] != null) {
        mappings[i].close();
        mappings[i] = null;
        n++;
      }
    }
    return n;
  }

  String describe() {
    return "memory id " + id + " of engine '" + peer.key + "'";
  }
}
