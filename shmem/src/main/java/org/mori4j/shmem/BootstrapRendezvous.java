package org.mori4j.shmem;

import static org.mori4j.shmem.BootstrapWire.HELLO;
import static org.mori4j.shmem.BootstrapWire.REFUSE;
import static org.mori4j.shmem.BootstrapWire.WELCOME;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.mori4j.shmem.BootstrapWire.Connection;
import org.mori4j.shmem.BootstrapWire.Frame;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Forms a {@link TcpBootstrap} group: rank 0 accepts a connection from every other rank and admits it only when its
 * hello carries the unique id's nonce, a rank in range that has not joined yet and the same group size (a refusal says
 * which); every other rank connects to rank 0, retrying while rank 0 is not up yet, and fails with rank 0's reason
 * when refused. Everything gives up at one deadline, naming the ranks that did not join. The connections it makes
 * go into the array it was given (rank 0: index = peer rank; other ranks: index 0), which the group then owns.
 */
final class BootstrapRendezvous {
  private static final Logger LOG = LoggerFactory.getLogger(BootstrapRendezvous.class);
  /** How long a connecting client may take to say hello before rank 0 drops it. */
  private static final int HELLO_MILLIS = 10_000;

  /** Listening sockets that {@link #reserve} opened for a rank 0 of this process, by id. */
  private static final Map<UniqueId, ServerSocket> RESERVED = new ConcurrentHashMap<>();

  private final UniqueId id;
  private final int rank;
  private final int size;
  private final Duration timeout;
  private final Connection[] peers;
  private final long deadline;

  BootstrapRendezvous(UniqueId id, int rank, int size, Duration timeout, Connection[] peers) {
    this.id = id;
    this.rank = rank;
    this.size = size;
    this.timeout = timeout;
    this.peers = peers;
    this.deadline = System.nanoTime() + timeout.toNanos();
  }

  /**
   * A fresh id listening on an ephemeral port of {@code host}: the socket stays open, reserved for a rank 0 of this
   * process to take over ({@link #takeReserved}), so that no other process can take the port in between.
   */
  static UniqueId reserve(String host) {
    try {
      ServerSocket server = new ServerSocket();
      try {
        server.bind(new InetSocketAddress(InetAddress.getByName(host), 0));
      } catch (IOException | RuntimeException e) {
        server.close();
        throw e;
      }
      UniqueId id = UniqueId.fresh((InetSocketAddress) server.getLocalSocketAddress());
      RESERVED.put(id, server);
      return id;
    } catch (IOException e) {
      throw new ShmemException("cannot listen for the shmem bootstrap on " + host + ": " + e.getMessage(), e);
    }
  }

  /** The socket {@link #reserve} opened for {@code id} in this process, removed from the reservations; null if none. */
  static ServerSocket takeReserved(UniqueId id) {
    return RESERVED.remove(id);
  }

  /**
   * Rank 0 listens on {@code server} (the socket {@link Shmem#getUniqueId()} reserved) or, when null, binds the id's
   * address itself; the others close {@code server} if given and connect. Returns once this rank is connected to
   * every rank it talks to.
   */
  void run(ServerSocket server) throws IOException {
    if (rank == 0) {
      ServerSocket s = server;
      if (s == null && size > 1) s = bindUntil(id, deadline);
      try {
        if (size > 1) acceptAll(s);
      } finally {
        if (s != null) s.close();
      }
    } else {
      if (server != null) server.close();
      connect();
    }
  }

  private void acceptAll(ServerSocket server) throws IOException {
    int joined = 0;
    while (joined < size - 1) {
      long left = deadline - System.nanoTime();
      if (left <= 0)
        throw new ShmemException("PE 0: PEs " + missing() + " did not join the bootstrap at " + id.socketAddress() + " within " + timeout.toSeconds() + " s");
      server.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(left))));
      Socket s;
      try {
        s = server.accept();
      } catch (SocketTimeoutException e) {
        continue;
      }
      if (admit(s)) joined++;
    }
  }

  /** Reads a client's hello and welcomes or refuses it; false when it was refused or went away. */
  private boolean admit(Socket s) {
    try {
      s.setSoTimeout(HELLO_MILLIS);
      s.setTcpNoDelay(true);
      Connection c = new Connection(-1, s);
      Frame hello = c.read();
      String refusal = null;
      int peer = -1;
      if (hello.type() != HELLO || hello.data().length != 24) {
        refusal = "not a mori4j shmem bootstrap hello";
      } else {
        java.nio.ByteBuffer h = java.nio.ByteBuffer.wrap(hello.data());
        byte[] nonce = new byte[16];
        h.get(nonce);
        peer = h.getInt();
        int theirSize = h.getInt();
        if (!Arrays.equals(nonce, id.nonce())) refusal = "the unique id's nonce does not match this group's (an id of another run?)";
        else if (theirSize != size) refusal = "PE " + peer + " says nPes " + theirSize + ", rank 0 says " + size;
        else if (peer < 1 || peer >= size) refusal = "rank " + peer + " is out of range 1.." + (size - 1);
        else if (peers[peer] != null) refusal = "rank " + peer + " has already joined";
      }
      if (refusal != null) {
        LOG.warn("shmem bootstrap (PE 0) refused {}: {}", s.getRemoteSocketAddress(), refusal);
        c.write(REFUSE, 0, refusal.getBytes(StandardCharsets.UTF_8));
        s.close();
        return false;
      }
      s.setSoTimeout(0);
      c.write(WELCOME, 0, new byte[0]);
      peers[peer] = new Connection(peer, s, c);
      return true;
    } catch (IOException e) {
      LOG.warn("shmem bootstrap (PE 0): a client at {} went away during its hello: {}", s.getRemoteSocketAddress(), e.toString());
      try {
        s.close();
      } catch (IOException ignored) {
        // already gone
      }
      return false;
    }
  }

  private String missing() {
    List<Integer> m = new ArrayList<>();
    for (int r = 1; r < size; r++) if (peers[r] == null) m.add(r);
    return m.toString();
  }

  /**
   * Binds the id's address for rank 0. The address can be held for a moment by the socket that
   * {@link Shmem#getUniqueId} reserved, when another rank of the same process took that socket first and is about to
   * give it up (ranks start in any order on their own threads), so a refused bind is retried until the deadline.
   */
  private static ServerSocket bindUntil(UniqueId id, long deadline) throws IOException {
    while (true) {
      ServerSocket s = new ServerSocket();
      try {
        s.bind(id.socketAddress());
        return s;
      } catch (java.net.BindException e) {
        s.close();
        if (System.nanoTime() >= deadline) throw e;
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
      } catch (IOException | RuntimeException e) {
        s.close();
        throw e;
      }
    }
  }

  private void connect() throws IOException {
    IOException last = null;
    while (System.nanoTime() < deadline) {
      Socket s = new Socket();
      try {
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        s.connect(id.socketAddress(), (int) Math.max(1, Math.min(left, HELLO_MILLIS)));
      } catch (ConnectException | SocketTimeoutException e) {
        // rank 0 is not listening yet: it may start after this rank
        s.close();
        last = e;
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        continue;
      }
      s.setTcpNoDelay(true);
      s.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))));
      Connection c = new Connection(0, s);
      java.nio.ByteBuffer hello = java.nio.ByteBuffer.allocate(24).put(id.nonce()).putInt(rank).putInt(size);
      c.write(HELLO, 0, hello.array());
      Frame answer;
      try {
        answer = c.read();
      } catch (SocketTimeoutException e) {
        s.close();
        throw new ShmemException("PE " + rank + ": PE 0 at " + id.socketAddress() + " did not answer the bootstrap hello within " + timeout.toSeconds() + " s");
      }
      if (answer.type() == REFUSE) {
        s.close();
        throw new ShmemException("PE " + rank + ": PE 0 refused to admit it: " + new String(answer.data(), StandardCharsets.UTF_8));
      }
      if (answer.type() != WELCOME) {
        s.close();
        throw new ShmemException("PE " + rank + ": " + id.socketAddress() + " is not a mori4j shmem bootstrap (answered frame type " + answer.type() + ")");
      }
      s.setSoTimeout(0);
      peers[0] = c;
      return;
    }
    throw new ShmemException("PE " + rank + ": PE 0's bootstrap at " + id.socketAddress() + " was not reachable within " + timeout.toSeconds()
        + " s" + (last == null ? "" : " (" + last.getMessage() + ")"));
  }
}
