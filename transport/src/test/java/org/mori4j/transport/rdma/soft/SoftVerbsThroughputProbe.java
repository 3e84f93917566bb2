package org.mori4j.transport.rdma.soft;

import static org.mori4j.natives.verbs.VerbsConstants.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import org.mori4j.transport.rdma.verbs.Completions;
import org.mori4j.transport.rdma.verbs.CompletionQueue;
import org.mori4j.transport.rdma.verbs.MemoryRegion;
import org.mori4j.transport.rdma.verbs.QueuePair;
import org.mori4j.transport.rdma.verbs.SendRequests;

/**
 * A measuring tool, not a test (run by hand): times RDMA WRITE and READ of one size between two software devices
 * over loopback, after warm-up, beside a blocking NIO stream of the same bytes between direct buffers, which
 * is the ceiling a TCP transport reaches on this machine. Prints median GB/s. The software provider is an
 * emulation: these figures say how fast CI runs the RDMA backend, nothing about a NIC.
 * {@code java -cp <test classpath> org.mori4j.transport.rdma.soft.SoftVerbsThroughputProbe [MiB] [iterations]}
 */
public final class SoftVerbsThroughputProbe {
  private SoftVerbsThroughputProbe() {}

  public static void main(String[] args) throws Exception {
    int size = (args.length > 0 ? Integer.parseInt(args[0]) : 64) << 20;
    int iterations = args.length > 1 ? Integer.parseInt(args[1]) : 10;
    System.out.printf("size %d MiB, %d iterations (median)%n", size >> 20, iterations);
    System.out.printf("NIO stream       %.2f GB/s%n", nioStream(size, iterations));
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(256, 16, SoftFixture.NORMAL);
      MemorySegment src = f.memory(size), dst = f.memory(size);
      MemoryRegion ms = f.register(f.pdA, src, IBV_ACCESS_LOCAL_WRITE);
      MemoryRegion md = f.register(f.pdB, dst, SoftFixture.ALL);
      SendRequests w = new SendRequests(1).write(0, 1, ms.address(), size, ms.lkey(), md.address(), md.rkey(), IBV_SEND_SIGNALED);
      SendRequests r = new SendRequests(1).read(0, 2, ms.address(), size, ms.lkey(), md.address(), md.rkey(), IBV_SEND_SIGNALED);
      System.out.printf("soft RDMA WRITE  %.2f GB/s%n", time(qp[0], f.cqA, w, size, iterations));
      System.out.printf("soft RDMA READ   %.2f GB/s%n", time(qp[0], f.cqA, r, size, iterations));
      int small = 4096, batch = 128;
      SendRequests chain = new SendRequests(batch);
      for (int i = 0; i < batch; i++) {
        chain.write(i, i, ms.address() + (long) i * small, small, ms.lkey(), md.address() + (long) i * small, md.rkey(),
            i == batch - 1 ? IBV_SEND_SIGNALED : 0);
      }
      double gbs = time(qp[0], f.cqA, chain, batch, small * batch, iterations * 20);
      System.out.printf("soft RDMA WRITE  %d x %d B, last signaled: %.2f GB/s, %.0f us per batch%n", batch, small, gbs,
          small * batch / gbs / 1000);
    }
  }

  private static double time(QueuePair qp, CompletionQueue cq, SendRequests wr, int size, int iterations) {
    return time(qp, cq, wr, 1, size, iterations);
  }

  private static double time(QueuePair qp, CompletionQueue cq, SendRequests wr, int count, int size, int iterations) {
    Completions c = new Completions(4);
    double[] gbs = new double[iterations];
    for (int i = -3; i < iterations; i++) {
      long t0 = System.nanoTime();
      qp.postSend(wr, 0, count);
      while (cq.poll(c) == 0) java.util.concurrent.locks.LockSupport.parkNanos(20_000); // leave the cores to the I/O threads
      if (!c.succeeded(0)) throw new IllegalStateException(Completions.statusName(c.status(0)));
      if (i >= 0) gbs[i] = size / (double) (System.nanoTime() - t0);
    }
    Arrays.sort(gbs);
    return gbs[iterations / 2];
  }

  private static double nioStream(int size, int iterations) throws Exception {
    try (Arena arena = Arena.ofShared(); ServerSocketChannel server = ServerSocketChannel.open()) {
      server.bind(new InetSocketAddress("127.0.0.1", 0));
      ByteBuffer src = arena.allocate(size).asByteBuffer(), dst = arena.allocate(size).asByteBuffer();
      double[] gbs = new double[iterations];
      try (SocketChannel out = SocketChannel.open(server.getLocalAddress()); SocketChannel in = server.accept()) {
        Thread reader = Thread.ofPlatform().start(() -> {
          try {
            for (int i = -3; i < iterations; i++) {
              dst.clear();
              while (dst.hasRemaining()) in.read(dst);
              in.write(ByteBuffer.allocate(1));
            }
          } catch (Exception e) {
            throw new RuntimeException(e);
          }
        });
        ByteBuffer ack = ByteBuffer.allocate(1);
        for (int i = -3; i < iterations; i++) {
          long t0 = System.nanoTime();
          src.clear();
          while (src.hasRemaining()) out.write(src);
          ack.clear();
          while (ack.hasRemaining()) out.read(ack);
          if (i >= 0) gbs[i] = size / (double) (System.nanoTime() - t0);
        }
        reader.join();
      }
      Arrays.sort(gbs);
      return gbs[iterations / 2];
    }
  }
}
