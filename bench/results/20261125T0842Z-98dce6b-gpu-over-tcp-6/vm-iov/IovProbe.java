import java.net.*;
import java.nio.*;
import java.nio.channels.*;
import java.util.*;

/** Loopback: time of one gathered write of 736 KiB (+ the remaining 288 KiB) from one contiguous buffer vs from 4 separate 2 MiB buffers (the stager's layout). */
public class IovProbe {
  public static void main(String[] a) throws Exception {
    int iters = Integer.parseInt(a.length > 0 ? a[0] : "300");
    ServerSocketChannel ss = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
    SocketChannel c = SocketChannel.open(ss.getLocalAddress());
    SocketChannel s = ss.accept();
    c.setOption(StandardSocketOptions.TCP_NODELAY, true); s.setOption(StandardSocketOptions.TCP_NODELAY, true);
    c.configureBlocking(false);
    int total = 1 << 20;
    Thread reader = new Thread(() -> {
      ByteBuffer in = ByteBuffer.allocateDirect(total); ByteBuffer ack = ByteBuffer.allocateDirect(1);
      try { while (true) { in.clear(); while (in.hasRemaining()) if (s.read(in) < 0) return; ack.clear(); s.write(ack); } } catch (Exception e) {}
    });
    reader.setDaemon(true); reader.start();
    ByteBuffer one = ByteBuffer.allocateDirect(total);
    ByteBuffer[] four = new ByteBuffer[4];
    for (int i = 0; i < 4; i++) four[i] = ByteBuffer.allocateDirect(2 << 20);
    int[] piece = {64 << 10, 224 << 10, 224 << 10, 224 << 10, 224 << 10, 64 << 10};
    Selector sel = Selector.open(); c.register(sel, 0);
    ByteBuffer ackb = ByteBuffer.allocateDirect(1);
    for (int round = 0; round < 4; round++) {
      for (String mode : round % 2 == 0 ? new String[] {"one", "four"} : new String[] {"four", "one"}) {
        long[] first = new long[iters], all = new long[iters];
        for (int it = 0; it < iters; it++) {
          ByteBuffer[] iov;
          if (mode.equals("one")) { one.clear().limit(736 << 10); iov = new ByteBuffer[] {one.slice()}; }
          else { iov = new ByteBuffer[4]; for (int k = 0; k < 4; k++) { four[k].clear().limit(piece[k]); iov[k] = four[k]; } }
          long t0 = System.nanoTime();
          long w = c.write(iov);
          long t1 = System.nanoTime();
          long left = (736 << 10) - w;
          ByteBuffer[] rest;
          if (mode.equals("one")) { one.clear().position((int) w).limit(total); rest = new ByteBuffer[] {one}; }
          else { for (int k = 0; k < 2; k++) four[k].clear().limit(piece[4 + k]); rest = new ByteBuffer[left > 0 ? 4 : 2];
            if (left > 0) { for (int k = 0; k < 4; k++) { four[k].clear().limit(piece[k]); } rest = iov; } else { rest = new ByteBuffer[] {four[0], four[1]}; } }
          // write the rest (spinning on a full socket)
          if (mode.equals("four") && left > 0) { while (iov[3].hasRemaining()) c.write(iov); four[0].clear().limit(piece[4]); four[1].clear().limit(piece[5]); rest = new ByteBuffer[] {four[0], four[1]}; }
          while (rest[rest.length - 1].hasRemaining()) c.write(rest);
          all[it] = System.nanoTime() - t0;
          first[it] = w == (736 << 10) ? t1 - t0 : -1;
          // wait for the ack (blocking read on a non-blocking channel: spin)
          ackb.clear(); while (c.read(ackb) == 0) Thread.onSpinWait();
        }
        long[] f = Arrays.stream(first).filter(x -> x >= 0).sorted().toArray(); Arrays.sort(all);
        System.out.printf("round %d %-4s first write 736K p50 %7.1f us (%d of %d whole)  all 1 MiB written p50 %7.1f us%n", round, mode,
            f.length > 0 ? f[f.length / 2] / 1e3 : -1, f.length, iters, all[iters / 2] / 1e3);
      }
    }
  }
}
