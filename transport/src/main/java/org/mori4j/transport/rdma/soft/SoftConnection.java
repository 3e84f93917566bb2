package org.mori4j.transport.rdma.soft;

import static org.mori4j.natives.verbs.VerbsConstants.*;

import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What both ends of a software RDMA connection share, all on the owning device's I/O thread: the non-blocking
 * channel, an input buffer that headers (and small payloads) are read through, an output buffer that headers
 * (and small payloads) are packed into, and the movement of one payload at a time between the socket and
 * registered memory. Host payloads of any size are read and written in place through direct-buffer views of the
 * region (large reads bypass the input buffer once it is drained); GPU payloads go through a {@link GpuStage}.
 * The region is pinned around each system call or copy that touches it. When a region goes away (or a GPU copy
 * fails) mid-payload, the rest of the payload is padded or drained so that the stream stays framed, and the
 * failure is reported as the status in {@link #txFailure}/{@link #rxFailure}.
 */
abstract class SoftConnection {
  static final Logger log = LoggerFactory.getLogger(SoftConnection.class);
  static final int IN_BYTES = 64 << 10;
  static final int OUT_BYTES = 64 << 10;
  /** A payload with at least this much left is read straight into memory once the input buffer is drained. */
  static final int DIRECT_MIN = 16 << 10;
  /** Request and READ payloads up to this size are copied into the output buffer behind their header. */
  static final int INLINE_MAX = 16 << 10;
  static final long NO_DEADLINE = Long.MAX_VALUE;

  private static final int NONE = 0, HOST = 1, GPU = 2, ZERO = 3, DISCARD = 4;

  final SoftIoLoop loop;
  final SoftDevice device;
  SocketChannel channel;
  SelectionKey key;
  /** Read mode: position..limit is unread input. */
  final ByteBuffer in = ByteBuffer.allocateDirect(IN_BYTES).order(ByteOrder.LITTLE_ENDIAN).flip();
  private final MemorySegment inSegment = MemorySegment.ofBuffer(in.duplicate().clear());
  /** Fill mode: 0..position is output not yet written. */
  final ByteBuffer out = ByteBuffer.allocateDirect(OUT_BYTES).order(ByteOrder.LITTLE_ENDIAN);
  final MemorySegment outSegment = MemorySegment.ofBuffer(out.duplicate().clear());
  private final ByteBuffer[] pair = new ByteBuffer[2];
  long lastProgressNanos = System.nanoTime();
  boolean closed;

  private int txKind;
  private SoftMemoryRegion txRegion;
  private ByteBuffer txChunk;
  private long txAddress;
  private long txLeft;
  /** 0, or the status of a payload that went out padded because its memory failed. */
  int txFailure;

  private int rxKind;
  private SoftMemoryRegion rxRegion;
  private long rxAddress;
  private long rxLeft;
  private long rxStageDeviceAddress;
  private int rxStageFill;
  /** 0, or the status of a payload that was drained because its memory failed. */
  int rxFailure;

  private SoftMemoryRegion txViewRegion, rxViewRegion;
  private ByteBuffer txView, rxView;
  private GpuStage txStage, rxStage;

  SoftConnection(SoftIoLoop loop) {
    this.loop = loop;
    this.device = loop.device;
  }

  abstract void onConnectable();

  abstract void onReadable();

  abstract void onWritable();

  /** The next time {@link #onTimer} wants to run ({@link #NO_DEADLINE}: never). */
  abstract long deadline();

  abstract void onTimer(long now);

  /** Something unexpected broke this connection (a bug or a broken peer); fail what depends on it and close. */
  abstract void fail(String reason);

  final void interest(boolean read, boolean write) {
    int ops = (read ? SelectionKey.OP_READ : 0) | (write ? SelectionKey.OP_WRITE : 0);
    if (key != null && key.isValid() && key.interestOps() != ops) key.interestOps(ops);
  }

  /** Reads what the socket has into {@link #in}; -1 at end of stream. */
  final int fillIn() throws IOException {
    in.compact();
    int n;
    try {
      n = channel.read(in);
    } finally {
      in.flip();
    }
    if (n > 0) lastProgressNanos = System.nanoTime();
    return n;
  }

  // ---- outbound payload ----

  /** The payload that follows the header just packed into {@link #out}. */
  final void startTx(SoftMemoryRegion region, long address, int length) {
    txFailure = 0;
    txRegion = region;
    txAddress = address;
    txLeft = length;
    txChunk = null;
    if (length == 0) {
      txKind = NONE;
    } else if (region.gpu) {
      txKind = GPU;
    } else {
      txKind = HOST;
      txChunk = hostView(region, address, length, true);
      txLeft = 0;
    }
  }

  final boolean txPending() {
    return txKind != NONE;
  }

  /** Writes {@link #out} and then the current payload; true once both are out, false when the socket is full. */
  final boolean writeOut() throws IOException {
    while (true) {
      ByteBuffer p = nextTxChunk();
      boolean hasOut = out.position() > 0;
      if (!hasOut && p == null) return true;
      long n;
      boolean pinned = false;
      if (p != null && txKind == HOST) {
        if (!txRegion.pin()) {
          padRest(IBV_WC_LOC_PROT_ERR);
          continue;
        }
        pinned = true;
      }
      out.flip();
      try {
        if (p == null) {
          n = channel.write(out);
        } else if (hasOut) {
          pair[0] = out;
          pair[1] = p;
          n = channel.write(pair, 0, 2);
        } else {
          n = channel.write(p);
        }
      } finally {
        out.compact();
        if (pinned) txRegion.unpin();
        pair[0] = pair[1] = null;
      }
      if (n > 0) lastProgressNanos = System.nanoTime();
      else return false;
    }
  }

  private ByteBuffer nextTxChunk() {
    switch (txKind) {
      case NONE:
        return null;
      case HOST:
        if (txChunk.hasRemaining()) return txChunk;
        break;
      case GPU:
      case ZERO:
        if (txChunk != null && txChunk.hasRemaining()) return txChunk;
        if (txLeft > 0) return txKind == GPU ? stageOut() : zeroChunk();
        break;
      default:
        throw new IllegalStateException("tx kind " + txKind);
    }
    txKind = NONE;
    txChunk = null;
    txRegion = null;
    return null;
  }

  private ByteBuffer stageOut() {
    if (txStage == null) txStage = new GpuStage(device.staging, device.settings.stagingChunkBytes());
    int k = (int) Math.min(txLeft, txStage.capacity);
    if (!txRegion.pin()) {
      padRest(IBV_WC_LOC_PROT_ERR);
      return zeroChunk();
    }
    try {
      txStage.fromDevice(txRegion.gpuDevice, txAddress, k);
    } catch (RuntimeException e) {
      log.warn("software RDMA (emulation) {}: GPU copy out of {} failed: {}", device.label, txRegion, e.toString());
      padRest(IBV_WC_GENERAL_ERR);
      return zeroChunk();
    } finally {
      txRegion.unpin();
    }
    txAddress += k;
    txLeft -= k;
    txChunk = txStage.view.clear().limit(k);
    return txChunk;
  }

  /** The source failed: the rest of the payload goes out as zeros and the request will complete with {@code status}. */
  private void padRest(int status) {
    if (txKind == HOST) txLeft = txChunk.remaining();
    else if (txChunk != null) txLeft += txChunk.remaining();
    txFailure = status;
    txKind = ZERO;
    txChunk = null;
  }

  private ByteBuffer zeroChunk() {
    ByteBuffer z = device.zeros.duplicate();
    z.limit((int) Math.min(txLeft, z.capacity()));
    txLeft -= z.remaining();
    txChunk = z;
    return z;
  }

  // ---- inbound payload ----

  /** The payload that follows the header just read lands in {@code region} at {@code address} (null region: drained). */
  final void startRx(SoftMemoryRegion region, long address, int length) {
    rxFailure = 0;
    rxRegion = region;
    rxAddress = address;
    rxLeft = length;
    rxKind = region == null ? DISCARD : region.gpu ? GPU : HOST;
    rxStageDeviceAddress = address;
    rxStageFill = 0;
  }

  /** Drains {@code length} payload bytes and reports {@code status} for them. */
  final void startDrain(int length, int status) {
    startRx(null, 0, length);
    rxFailure = status;
  }

  /** Moves payload bytes from {@link #in} and the socket into place; true when all have landed. */
  final boolean readPayload() throws IOException {
    while (rxLeft > 0) {
      if (in.hasRemaining()) {
        deliverFromIn((int) Math.min(in.remaining(), rxLeft));
        continue;
      }
      long n;
      if (rxKind == HOST && rxLeft >= DIRECT_MIN) {
        if (!rxRegion.pin()) {
          drainRest(IBV_WC_LOC_PROT_ERR);
          continue;
        }
        try {
          n = channel.read(hostView(rxRegion, rxAddress, (int) rxLeft, false));
        } finally {
          rxRegion.unpin();
        }
        if (n > 0) {
          rxAddress += n;
          rxLeft -= n;
        }
      } else if (rxKind == GPU) {
        n = readIntoStage();
      } else if (rxKind == DISCARD && rxLeft >= DIRECT_MIN) {
        ByteBuffer s = device.scratch.clear().limit((int) Math.min(rxLeft, device.scratch.capacity()));
        n = channel.read(s);
        if (n > 0) rxLeft -= n;
      } else {
        n = fillIn();
        if (n > 0) continue;
      }
      if (n < 0) throw new EOFException("connection closed by the peer in the middle of a payload");
      if (n == 0) return false;
      lastProgressNanos = System.nanoTime();
    }
    if (rxKind == GPU && rxStageFill > 0) flushStage();
    rxKind = NONE;
    rxRegion = null;
    return true;
  }

  private void deliverFromIn(int k) {
    switch (rxKind) {
      case HOST -> {
        if (!rxRegion.pin()) {
          drainRest(IBV_WC_LOC_PROT_ERR);
          return;
        }
        try {
          MemorySegment.copy(inSegment, in.position(), rxRegion.segment, rxAddress - rxRegion.address(), k);
        } finally {
          rxRegion.unpin();
        }
      }
      case GPU -> {
        if (rxStage == null) rxStage = new GpuStage(device.staging, device.settings.stagingChunkBytes());
        k = Math.min(k, rxStage.capacity - rxStageFill);
        MemorySegment.copy(inSegment, in.position(), rxStage.buffer, rxStageFill, k);
        rxStageFill += k;
      }
      default -> { }
    }
    in.position(in.position() + k);
    rxAddress += k;
    rxLeft -= k;
    if (rxKind == GPU && rxStageFill == rxStage.capacity) flushStage();
  }

  private long readIntoStage() throws IOException {
    if (rxStage == null) rxStage = new GpuStage(device.staging, device.settings.stagingChunkBytes());
    ByteBuffer v = rxStage.view;
    v.limit((int) Math.min(rxStage.capacity, rxStageFill + rxLeft)).position(rxStageFill);
    int n = channel.read(v);
    if (n > 0) {
      rxStageFill += n;
      rxAddress += n;
      rxLeft -= n;
      if (rxStageFill == rxStage.capacity) flushStage();
    }
    return n;
  }

  private void flushStage() {
    int n = rxStageFill;
    rxStageFill = 0;
    if (!rxRegion.pin()) {
      drainRest(IBV_WC_LOC_PROT_ERR);
      return;
    }
    try {
      rxStage.toDevice(rxRegion.gpuDevice, rxStageDeviceAddress, n);
      rxStageDeviceAddress += n;
    } catch (RuntimeException e) {
      log.warn("software RDMA (emulation) {}: GPU copy into {} failed: {}", device.label, rxRegion, e.toString());
      drainRest(IBV_WC_GENERAL_ERR);
    } finally {
      rxRegion.unpin();
    }
  }

  /** The destination failed: the rest of the payload is drained and reported as {@code status}. */
  private void drainRest(int status) {
    rxFailure = status;
    rxKind = DISCARD;
    rxStageFill = 0;
  }

  /** A view of {@code [address, +length)} of a host region, from a per-connection cache for regions up to 2 GiB. */
  private ByteBuffer hostView(SoftMemoryRegion region, long address, int length, boolean tx) {
    ByteBuffer v;
    if (tx) {
      if (txViewRegion != region) {
        txView = region.newView();
        txViewRegion = region;
      }
      v = txView;
    } else {
      if (rxViewRegion != region) {
        rxView = region.newView();
        rxViewRegion = region;
      }
      v = rxView;
    }
    if (v == null) return MemorySegment.ofAddress(address).reinterpret(length).asByteBuffer();
    int at = (int) (address - region.address());
    return v.limit(at + length).position(at);
  }

  /** Closes the channel and frees the staging buffers. Idempotent. */
  void close() {
    if (closed) return;
    closed = true;
    loop.remove(this);
    if (key != null) key.cancel();
    try {
      if (channel != null) channel.close();
    } catch (IOException e) {
      log.debug("close", e);
    }
    if (txStage != null) txStage.close();
    if (rxStage != null) rxStage.close();
    txStage = rxStage = null;
    txViewRegion = rxViewRegion = null;
    txView = rxView = null;
  }
}
