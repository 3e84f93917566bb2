package org.mori4j.transport.rdma.soft;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The I/O thread of one software RDMA device (emulation): its listener, the selector of every connection of its
 * queue pairs, their timers, and the queue of QPs that have new work (posting threads add a QP there and wake the
 * selector only when the thread sleeps, never touching a socket themselves). Only this thread touches the
 * sockets; it never blocks on the network, and holds no lock across a system call except a region's pin.
 */
final class SoftIoLoop {
  private static final Logger log = LoggerFactory.getLogger(SoftIoLoop.class);
  private static final long MAX_SLEEP_MILLIS = 1000;

  final SoftDevice device;
  private final Selector selector;
  private final ServerSocketChannel server;
  private final int port;
  private final Thread thread;
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedQueue<SoftQueuePair> kicked = new ConcurrentLinkedQueue<>();
  private final ArrayList<SoftConnection> connections = new ArrayList<>();
  private final Consumer<SelectionKey> handler = this::handle;
  private volatile boolean sleeping;
  private volatile boolean closing;

  SoftIoLoop(SoftDevice device, Inet4Address bind, String threadName) throws IOException {
    this.device = device;
    Selector s = Selector.open();
    ServerSocketChannel ss = null;
    try {
      ss = ServerSocketChannel.open();
      ss.bind(new InetSocketAddress(bind, 0), 128);
      ss.configureBlocking(false);
      ss.register(s, SelectionKey.OP_ACCEPT);
    } catch (IOException | RuntimeException e) {
      if (ss != null) ss.close();
      s.close();
      throw e;
    }
    selector = s;
    server = ss;
    port = ((InetSocketAddress) ss.getLocalAddress()).getPort();
    thread = Thread.ofPlatform().name(threadName).daemon(true).unstarted(this::run);
  }

  int port() {
    return port;
  }

  void start() {
    thread.start();
  }

  Selector selector() {
    return selector;
  }

  void add(SoftConnection c) {
    connections.add(c);
  }

  void remove(SoftConnection c) {
    connections.remove(c);
  }

  /** Any thread: {@code qp} has work (its kicked flag was just set). */
  void kick(SoftQueuePair qp) {
    kicked.add(qp);
    if (sleeping) selector.wakeup();
  }

  /** Any thread: runs {@code task} on the I/O thread (dropped once the device closes). */
  void execute(Runnable task) {
    if (closing) return;
    tasks.add(task);
    selector.wakeup();
  }

  boolean onLoopThread() {
    return Thread.currentThread() == thread;
  }

  private void run() {
    log.debug("software RDMA (emulation) {}: I/O thread started", device.label);
    try {
      while (!closing) {
        Runnable t;
        while ((t = tasks.poll()) != null) safely(t);
        SoftQueuePair qp;
        while ((qp = kicked.poll()) != null) {
          qp.kicked.set(false);
          SoftQueuePair q = qp;
          safely(q::service);
        }
        long now = System.nanoTime();
        long next = SoftConnection.NO_DEADLINE;
        for (int i = connections.size() - 1; i >= 0 && i < connections.size(); i--) {
          SoftConnection c = connections.get(i);
          long d = c.deadline();
          if (d == SoftConnection.NO_DEADLINE) continue;
          if (d - now <= 0) {
            try {
              c.onTimer(now);
            } catch (RuntimeException e) {
              failConnection(c, e);
            }
            continue;
          }
          if (next == SoftConnection.NO_DEADLINE || d - next < 0) next = d;
        }
        sleeping = true;
        try {
          if (!kicked.isEmpty() || !tasks.isEmpty() || closing) {
            selector.selectNow(handler);
          } else {
            long ms = next == SoftConnection.NO_DEADLINE ? MAX_SLEEP_MILLIS
                : Math.clamp((next - System.nanoTime() + 999_999) / 1_000_000, 1, MAX_SLEEP_MILLIS);
            selector.select(handler, ms);
          }
        } finally {
          sleeping = false;
        }
      }
    } catch (IOException | ClosedSelectorException e) {
      if (!closing) log.error("software RDMA (emulation) {}: selector failed; the device stops", device.label, e);
    } catch (Throwable e) {
      log.error("software RDMA (emulation) {}: I/O thread failed; the device stops", device.label, e);
    } finally {
      // a device that stops on its own must not leave requests waiting forever: its QPs flush to ERR
      if (!closing) device.ioStopped();
      shutdown();
    }
  }

  private void handle(SelectionKey k) {
    if (!k.isValid()) return;
    if (k.attachment() instanceof SoftConnection c) {
      try {
        int ready = k.readyOps();
        if ((ready & SelectionKey.OP_CONNECT) != 0) c.onConnectable();
        if (k.isValid() && (ready & SelectionKey.OP_WRITE) != 0) c.onWritable();
        if (k.isValid() && (ready & SelectionKey.OP_READ) != 0) c.onReadable();
      } catch (RuntimeException e) {
        failConnection(c, e);
      }
    } else if (k.isAcceptable()) {
      accept();
    }
  }

  private void accept() {
    SocketChannel ch = null;
    try {
      while ((ch = server.accept()) != null) {
        ch.configureBlocking(false);
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        new ResponderConnection(this, ch).register();
        ch = null;
      }
    } catch (IOException e) {
      log.warn("software RDMA (emulation) {}: accept failed: {}", device.label, e.toString());
      if (ch != null) {
        try {
          ch.close();
        } catch (IOException ignored) {
          // already failing
        }
      }
    }
  }

  private void failConnection(SoftConnection c, RuntimeException e) {
    log.error("software RDMA (emulation) {}: connection handler failed", device.label, e);
    try {
      c.fail(e.toString());
    } catch (RuntimeException again) {
      c.close();
    }
  }

  private void safely(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      log.error("software RDMA (emulation) {}: I/O task failed", device.label, e);
    }
  }

  private void shutdown() {
    for (SoftConnection c : new ArrayList<>(connections)) c.close();
    connections.clear();
    tasks.clear();
    kicked.clear();
    try {
      server.close();
    } catch (IOException e) {
      log.debug("close listener", e);
    }
    try {
      selector.close();
    } catch (IOException e) {
      log.debug("close selector", e);
    }
    log.debug("software RDMA (emulation) {}: I/O thread stopped", device.label);
  }

  /** Stops the thread and waits for it to close every socket. */
  void close() {
    closing = true;
    selector.wakeup();
    if (onLoopThread()) return;
    try {
      thread.join(10_000);
      if (thread.isAlive()) log.warn("software RDMA (emulation) {}: I/O thread did not stop within 10 s", device.label);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
