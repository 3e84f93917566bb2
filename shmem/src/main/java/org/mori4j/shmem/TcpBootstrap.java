package org.mori4j.shmem;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The unique-id bootstrap: rank 0 listens where the {@link UniqueId} says, every other rank connects to it and
 * introduces itself with the id's nonce, its rank and the group size; rank 0 refuses a wrong nonce, a rank out
 * of range, a duplicate rank or another group size, and says why. An {@link #allGather} step sends each rank's
 * bytes to rank 0, which answers every rank with all of them once the last has arrived (a star: n-1
 * connections and two messages per rank per step, which is all the host side of shmem needs).
 *
 * <p>Failure: each connection has a reader thread. A rank whose connection closes or breaks before the final
 * step is lost: rank 0 fails its own waiting call and tells every other rank ({@code ABORT} with the reason,
 * e.g. {@code "PE 2 disconnected (EOF)"}), and they fail theirs; the loss of rank 0 closes every connection,
 * which each rank reports as {@code "PE 0 disconnected"}. A wait gives up after the timeout, which fails the
 * group too (its PEs would no longer agree on the step).
 *
 * <p>Frames: {@code int type, int step, int length, bytes}.
 */
final class TcpBootstrap implements Bootstrap {
  private static final Logger LOG = LoggerFactory.getLogger(TcpBootstrap.class);

  private static final int HELLO = 1, WELCOME = 2, REFUSE = 3, CONTRIBUTE = 4, RESULT = 5, ABORT = 6;
  /** Frames above this are refused, so that a stray client cannot make a rank allocate gigabytes. */
  private static final int MAX_FRAME = 64 << 20;
  /** How long a connecting client may take to say hello before rank 0 drops it. */
  private static final int HELLO_MILLIS = 10_000;

  private final int rank;
  private final int size;
  private final Duration timeout;
  /** Rank 0: the connection of every other rank (index 0 unused); other ranks: index 0 is rank 0. */
  private final Connection[] peers;
  /** Steps in progress, by number: rank 0 collects contributions in them, every rank waits on them. */
  private final Map<Integer, Step> steps = new HashMap<>();
  private int nextStep;
  private volatile String failure;
  /** Set once the final step has completed: peers closing their end is then expected. */
  private volatile boolean finished;

  private TcpBootstrap(int rank, int size, Duration timeout) {
    this.rank = rank;
    this.size = size;
    this.timeout = timeout;
    this.peers = new Connection[size];
  }

  /**
   * Joins the group named by {@code id}. Rank 0 listens on {@code server} (the socket {@link Shmem#getUniqueId()}
   * reserved) or, when null, binds the id's address itself; the others connect to it, retrying while rank 0
   * is not up yet. Returns once every rank is connected, or throws (after at most {@code timeout}).
   */
  static TcpBootstrap join(UniqueId id, int rank, int size, Duration timeout, ServerSocket server) {
    if (size < 1) throw new IllegalArgumentException("nPes " + size + " must be at least 1");
    if (rank < 0 || rank >= size) throw new IllegalArgumentException("rank " + rank + " is out of range 0.." + (size - 1) + " (nPes " + size + ")");
    long deadline = System.nanoTime() + timeout.toNanos();
    TcpBootstrap b = new TcpBootstrap(rank, size, timeout);
    try {
      if (rank == 0) {
        ServerSocket s = server;
        if (s == null && size > 1) s = bindUntil(id, deadline);
        try {
          if (size > 1) b.acceptAll(s, id, deadline);
        } finally {
          if (s != null) s.close();
        }
      } else {
        if (server != null) server.close();
        b.connect(id, deadline);
      }
      b.startReaders();
      return b;
    } catch (IOException e) {
      b.close();
      throw new ShmemException("PE " + rank + ": bootstrap at " + id.socketAddress() + " failed: " + e, e);
    } catch (RuntimeException e) {
      b.close();
      throw e;
    }
  }

  private void acceptAll(ServerSocket server, UniqueId id, long deadline) throws IOException {
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
      if (admit(s, id)) joined++;
    }
  }

  /** Reads a client's hello and welcomes or refuses it; false when it was refused or went away. */
  private boolean admit(Socket s, UniqueId id) {
    try {
      s.setSoTimeout(HELLO_MILLIS);
      s.setTcpNoDelay(true);
      Connection c = new Connection(-1, s);
      Frame hello = c.read();
      String refusal = null;
      int peer = -1;
      if (hello.type != HELLO || hello.data.length != 24) {
        refusal = "not a mori4j shmem bootstrap hello";
      } else {
        java.nio.ByteBuffer h = java.nio.ByteBuffer.wrap(hello.data);
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

  private void connect(UniqueId id, long deadline) throws IOException {
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
      if (answer.type == REFUSE) {
        s.close();
        throw new ShmemException("PE " + rank + ": PE 0 refused to admit it: " + new String(answer.data, StandardCharsets.UTF_8));
      }
      if (answer.type != WELCOME) {
        s.close();
        throw new ShmemException("PE " + rank + ": " + id.socketAddress() + " is not a mori4j shmem bootstrap (answered frame type " + answer.type + ")");
      }
      s.setSoTimeout(0);
      peers[0] = c;
      return;
    }
    throw new ShmemException("PE " + rank + ": PE 0's bootstrap at " + id.socketAddress() + " was not reachable within " + timeout.toSeconds()
        + " s" + (last == null ? "" : " (" + last.getMessage() + ")"));
  }

  private void startReaders() {
    for (Connection c : peers) {
      if (c == null) continue;
      Thread.ofPlatform().daemon().name("mori4j-shmem-bootstrap-" + rank + "-from-" + c.peer).start(() -> readLoop(c));
    }
  }

  private void readLoop(Connection c) {
    try {
      while (true) {
        Frame f = c.read();
        switch (f.type) {
          case CONTRIBUTE -> {
            if (rank != 0) throw new IOException("a contribution arrived at PE " + rank);
            contribute(f.step, c.peer, f.data);
          }
          case RESULT -> complete(f.step, decode(f.data));
          case ABORT -> fail(new String(f.data, StandardCharsets.UTF_8), false);
          default -> throw new IOException("unexpected frame type " + f.type);
        }
      }
    } catch (IOException e) {
      if (finished || failure != null) return;
      String why = e instanceof EOFException ? "closed its connection" : "connection broke: " + e.getMessage();
      fail("PE " + c.peer + " disconnected (" + why + ")", true);
    }
  }

  @Override
  public int rank() {
    return rank;
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public String failure() {
    return failure;
  }

  @Override
  public byte[][] allGather(byte[] mine, boolean last) {
    Step step;
    int number;
    synchronized (this) {
      if (failure != null) throw new ShmemException(failure);
      number = nextStep++;
      step = steps.computeIfAbsent(number, k -> new Step(size));
      step.last = last;
    }
    if (rank == 0) {
      contribute(number, 0, mine);
    } else {
      try {
        peers[0].write(CONTRIBUTE, number, mine);
      } catch (IOException e) {
        fail("PE 0 disconnected (" + e.getMessage() + ")", false);
      }
    }
    try {
      byte[][] all = step.done.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
      if (last) finished = true;
      return all;
    } catch (TimeoutException e) {
      String why = rank == 0 ? "PEs " + step.missing() + " did not reach step " + number : "PE 0 did not complete step " + number;
      fail("PE " + rank + ": " + why + " within " + timeout.toSeconds() + " s (mori4j.shmem.timeout)", true);
      throw new ShmemException(failure);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof ShmemException s ? new ShmemException(s.getMessage(), s) : new ShmemException(String.valueOf(e.getCause()), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ShmemException("PE " + rank + ": interrupted while waiting for step " + number, e);
    } finally {
      synchronized (this) {
        steps.remove(number);
      }
    }
  }

  /** Rank 0: one rank's bytes for a step; the last one completes the step and answers everybody. */
  private void contribute(int number, int from, byte[] data) {
    byte[][] all;
    boolean last;
    synchronized (this) {
      if (failure != null) return;
      Step step = steps.computeIfAbsent(number, k -> new Step(size));
      if (step.parts[from] != null) {
        fail("PE " + from + " contributed twice to step " + number, true);
        return;
      }
      step.parts[from] = data;
      if (++step.count < size) return;
      all = step.parts;
      last = step.last;
    }
    byte[] encoded = encode(all);
    if (last) finished = true; // rank 0's peers close once they have the result of the final step
    for (int r = 1; r < size; r++) {
      try {
        peers[r].write(RESULT, number, encoded);
      } catch (IOException e) {
        fail("PE " + r + " disconnected (" + e.getMessage() + ")", true);
        return;
      }
    }
    complete(number, all);
  }

  private void complete(int number, byte[][] all) {
    Step step;
    synchronized (this) {
      step = steps.computeIfAbsent(number, k -> new Step(size));
    }
    // before the waiting caller wakes: rank 0 closes its end right after the final result, and this rank's
    // reader must take that EOF as the end, not as a lost PE
    if (step.last) finished = true;
    step.done.complete(all);
  }

  /** Fails the group: every waiting and later call throws {@code reason}; rank 0 tells the others when asked. */
  private void fail(String reason, boolean tellOthers) {
    List<Step> waiting;
    synchronized (this) {
      if (failure != null) return;
      failure = reason;
      waiting = new ArrayList<>(steps.values());
    }
    LOG.warn("shmem PE {}: group failed: {}", rank, reason);
    for (Step s : waiting) s.done.completeExceptionally(new ShmemException(reason));
    if (tellOthers && rank == 0) {
      for (int r = 1; r < size; r++) {
        Connection c = peers[r];
        if (c == null) continue;
        try {
          c.write(ABORT, 0, reason.getBytes(StandardCharsets.UTF_8));
        } catch (IOException ignored) {
          // that peer is gone as well; it finds out by itself
        }
      }
    }
  }

  @Override
  public void close() {
    synchronized (this) {
      if (failure == null && !finished) failure = "PE " + rank + " left the group (closed)";
    }
    for (Step s : snapshot()) s.done.completeExceptionally(new ShmemException(failure));
    for (Connection c : peers) {
      if (c == null) continue;
      try {
        c.socket.close();
      } catch (IOException ignored) {
        // closing
      }
    }
  }

  private synchronized List<Step> snapshot() {
    return new ArrayList<>(steps.values());
  }

  static byte[] encode(byte[][] parts) {
    int total = 4;
    for (byte[] p : parts) total += 4 + p.length;
    java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(total).putInt(parts.length);
    for (byte[] p : parts) b.putInt(p.length).put(p);
    return b.array();
  }

  static byte[][] decode(byte[] data) throws IOException {
    java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(data);
    int n = b.getInt();
    if (n < 0 || n > 1 << 16) throw new IOException("a result of " + n + " parts");
    byte[][] parts = new byte[n][];
    for (int i = 0; i < n; i++) {
      int len = b.getInt();
      if (len < 0 || len > b.remaining()) throw new IOException("a result part of " + len + " bytes");
      parts[i] = new byte[len];
      b.get(parts[i]);
    }
    return parts;
  }

  /** One step of the exchange: the contributions so far (rank 0) and the outcome every rank waits for. */
  private static final class Step {
    final byte[][] parts;
    int count;
    boolean last;
    final CompletableFuture<byte[][]> done = new CompletableFuture<>();

    Step(int size) {
      parts = new byte[size][];
    }

    synchronized List<Integer> missing() {
      List<Integer> m = new ArrayList<>();
      for (int r = 0; r < parts.length; r++) if (parts[r] == null) m.add(r);
      return m;
    }
  }

  private record Frame(int type, int step, byte[] data) {}

  /** A socket to one peer, with framed, synchronised output. */
  private static final class Connection {
    final int peer;
    final Socket socket;
    final DataOutputStream out;
    final DataInputStream in;

    Connection(int peer, Socket socket) throws IOException {
      this.peer = peer;
      this.socket = socket;
      this.out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
      this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
    }

    /** The same socket and streams under the peer's rank, once its hello named it. */
    Connection(int peer, Socket socket, Connection streams) {
      this.peer = peer;
      this.socket = socket;
      this.out = streams.out;
      this.in = streams.in;
    }

    synchronized void write(int type, int step, byte[] data) throws IOException {
      out.writeInt(type);
      out.writeInt(step);
      out.writeInt(data.length);
      out.write(data);
      out.flush();
    }

    Frame read() throws IOException {
      int type = in.readInt();
      int step = in.readInt();
      int length = in.readInt();
      if (length < 0 || length > MAX_FRAME) throw new IOException("frame of " + length + " bytes");
      byte[] data = new byte[length];
      in.readFully(data);
      return new Frame(type, step, data);
    }
  }
}
