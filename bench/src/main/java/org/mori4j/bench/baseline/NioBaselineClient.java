package org.mori4j.bench.baseline;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import org.mori4j.bench.ResultRow;
import org.mori4j.bench.SweepPlan;

/**
 * The sending side of the plain-NIO baseline: one blocking {@link SocketChannel}, messages written from a
 * direct buffer, 8-byte acks read back. An iteration sends {@code batch} messages back to back and ends when
 * the last ack arrives, the same shape as a mori4j iteration (issue the batch, wait for every completion), so
 * the two rows of the same (size, batch) compare directly. With batch 1 and 4 KiB it is the ping-pong
 * baseline: request out, ack back, one round trip per sample.
 */
public final class NioBaselineClient {
  private final String host;
  private final int port;

  public NioBaselineClient(String host, int port) {
    this.host = host;
    this.port = port;
  }

  /**
   * Measures one point over a fresh connection.
   *
   * @param warmupNanos least time spent warming up (JIT), besides {@code warmup} iterations
   * @param capacity bytes of the server's buffer: messages cycle over the same slots the engine run uses
   */
  public ResultRow measure(long msgSize, int batch, int iters, int warmup, long warmupNanos, long capacity) throws IOException {
    if (msgSize > Integer.MAX_VALUE) throw new IllegalArgumentException("NIO baseline message too large: " + msgSize);
    int slots = (int) Math.min(SweepPlan.slots(msgSize, batch, capacity), Integer.MAX_VALUE / msgSize);
    try (SocketChannel c = SocketChannel.open(); Arena arena = Arena.ofConfined()) {
      c.setOption(StandardSocketOptions.TCP_NODELAY, true);
      c.connect(new InetSocketAddress(host, port));
      ByteBuffer header = ByteBuffer.allocateDirect(NioBaselineProtocol.HEADER_BYTES).order(ByteOrder.BIG_ENDIAN);
      new NioBaselineProtocol.Header(msgSize, slots).encode(header);
      header.flip();
      while (header.hasRemaining()) c.write(header);

      // touch every page before timing so that first-use page faults are not billed to the baseline
      ByteBuffer src = arena.allocate(msgSize * slots, 4096).fill((byte) 0x5a).asByteBuffer();
      ByteBuffer ack = ByteBuffer.allocateDirect(8).order(ByteOrder.BIG_ENDIAN);
      long[] seq = {0, 0}; // [0] = next to send, [1] = next ack expected
      // the same warm-up rule as the engine's rows: iterations and time, whichever lasts longer
      long warmStart = System.nanoTime();
      for (int i = 0; i < warmup || System.nanoTime() - warmStart < warmupNanos; i++) iteration(c, src, ack, msgSize, batch, slots, seq);
      long[] lat = new long[iters];
      for (int i = 0; i < iters; i++) {
        long t0 = System.nanoTime();
        iteration(c, src, ack, msgSize, batch, slots, seq);
        lat[i] = System.nanoTime() - t0;
      }
      return ResultRow.fromLatencies(msgSize, batch, lat);
    }
  }

  private static void iteration(SocketChannel c, ByteBuffer src, ByteBuffer ack, long msgSize, int batch, int slots,
                                long[] seq) throws IOException {
    for (int j = 0; j < batch; j++) {
      int off = (int) ((j % slots) * msgSize);
      src.limit(off + (int) msgSize).position(off);
      while (src.hasRemaining()) c.write(src);
      seq[0]++;
      // keep at most ACK_WINDOW acks outstanding: the server blocks on its ack writes if nobody reads them,
      // and a blocked server stops reading, which would deadlock a huge batch
      if (seq[0] - seq[1] > NioBaselineProtocol.ACK_WINDOW) readAck(c, ack, seq);
    }
    while (seq[1] < seq[0]) readAck(c, ack, seq);
  }

  private static void readAck(SocketChannel c, ByteBuffer ack, long[] seq) throws IOException {
    ack.clear();
    if (!NioBaselineServer.readFully(c, ack, false)) throw new IOException("NIO baseline server closed the connection");
    long got = ack.getLong(0);
    if (got != seq[1]) throw new IOException("NIO baseline: ack " + got + " where " + seq[1] + " was expected");
    seq[1]++;
  }
}
