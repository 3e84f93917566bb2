package org.mori4j.transport.rdma;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.TransportException;

/**
 * The RDMA backend's handshake, carried as bytes by the engines' control plane (MORI exchanges the same
 * through its own server): for each device pair, the queue pairs' numbers and start PSNs and the path to the
 * device (port, LID, GID, MTU), which is all a queue pair needs to reach RTR. The initiator sends its side
 * with the pairs in INIT; the target brings its pairs to RTS and answers with its side (in the request's device
 * order) and whether it keeps notification receives posted. Decoding checks every count against small limits
 * and fails with {@code INVALID_ARGS} naming what is malformed.
 */
public record RdmaHandshake(String engineKey, boolean notifications, List<Endpoint> endpoints) {
  static final int MAGIC = 0x52444d41; // "RDMA"
  static final short VERSION = 1;
  static final int MAX_DEVICES = 64;
  static final int MAX_QPS = 64;

  /** One device's side of a device pair: its index among the engine's devices, the path, and its queue pairs. */
  public record Endpoint(int deviceIndex, int port, int lid, byte[] gid, int mtu, int[] qpNumbers, int[] psns) {
    public Endpoint {
      if (gid.length != 16) throw new IllegalArgumentException("GID must be 16 bytes: " + gid.length);
      if (qpNumbers.length != psns.length) throw new IllegalArgumentException("one PSN per queue pair");
    }
  }

  public byte[] encode() {
    byte[] key = engineKey.getBytes(StandardCharsets.UTF_8);
    int size = 4 + 2 + 2 + key.length + 1 + 4;
    for (Endpoint e : endpoints) size += 4 * 4 + 16 + 4 + e.qpNumbers().length * 8;
    ByteBuffer b = ByteBuffer.allocate(size);
    b.putInt(MAGIC).putShort(VERSION).putShort((short) key.length).put(key).put((byte) (notifications ? 1 : 0)).putInt(endpoints.size());
    for (Endpoint e : endpoints) {
      b.putInt(e.deviceIndex()).putInt(e.port()).putInt(e.lid()).put(e.gid()).putInt(e.mtu()).putInt(e.qpNumbers().length);
      for (int i = 0; i < e.qpNumbers().length; i++) b.putInt(e.qpNumbers()[i]).putInt(e.psns()[i]);
    }
    return b.array();
  }

  public static RdmaHandshake decode(byte[] bytes, String from) {
    try {
      ByteBuffer b = ByteBuffer.wrap(bytes);
      if (b.getInt() != MAGIC) throw bad(from, "not an RDMA handshake (magic)");
      short v = b.getShort();
      if (v != VERSION) throw bad(from, "handshake version " + v + ", this build speaks " + VERSION);
      int kl = b.getShort() & 0xffff;
      if (kl > b.remaining()) throw bad(from, "engine key length " + kl);
      byte[] key = new byte[kl];
      b.get(key);
      boolean notifications = b.get() != 0;
      int n = b.getInt();
      if (n < 1 || n > MAX_DEVICES) throw bad(from, "device count " + n);
      List<Endpoint> eps = new ArrayList<>(n);
      for (int d = 0; d < n; d++) {
        int index = b.getInt(), port = b.getInt(), lid = b.getInt();
        byte[] gid = new byte[16];
        b.get(gid);
        int mtu = b.getInt(), q = b.getInt();
        if (q < 1 || q > MAX_QPS) throw bad(from, "queue pair count " + q);
        if (index < 0 || index >= MAX_DEVICES) throw bad(from, "device index " + index);
        int[] qpns = new int[q], psns = new int[q];
        for (int i = 0; i < q; i++) {
          qpns[i] = b.getInt();
          psns[i] = b.getInt() & 0xffffff;
        }
        eps.add(new Endpoint(index, port, lid, gid, mtu, qpns, psns));
      }
      if (b.hasRemaining()) throw bad(from, b.remaining() + " trailing bytes");
      return new RdmaHandshake(new String(key, StandardCharsets.UTF_8), notifications, List.copyOf(eps));
    } catch (BufferUnderflowException e) {
      throw bad(from, "truncated (" + bytes.length + " bytes)");
    }
  }

  private static TransportException bad(String from, String what) {
    return new TransportException(TransportError.INVALID_ARGS, "malformed RDMA handshake from engine '" + from + "': " + what);
  }
}
