package org.mori4j.shmem;

import static org.mori4j.shmem.BootstrapWire.ABORT;
import static org.mori4j.shmem.BootstrapWire.CONTRIBUTE;
import static org.mori4j.shmem.BootstrapWire.RESULT;

import java.io.EOFException;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.mori4j.shmem.BootstrapWire.Connection;
import org.mori4j.shmem.BootstrapWire.Frame;
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
 * <p>Forming the group is {@link BootstrapRendezvous}; frames and connections are {@link BootstrapWire}.
 */
final class TcpBootstrap implements Bootstrap {
  private static final Logger LOG = LoggerFactory.getLogger(TcpBootstrap.class);

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
    TcpBootstrap b = new TcpBootstrap(rank, size, timeout);
    try {
      new BootstrapRendezvous(id, rank, size, timeout, b.peers).run(server);
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
        switch (f.type()) {
          case CONTRIBUTE -> {
            if (rank != 0) throw new IOException("a contribution arrived at PE " + rank);
            contribute(f.step(), c.peer, f.data());
          }
          case RESULT -> complete(f.step(), BootstrapWire.decode(f.data()));
          case ABORT -> fail(new String(f.data(), StandardCharsets.UTF_8), false);
          default -> throw new IOException("unexpected frame type " + f.type());
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
    byte[] encoded = BootstrapWire.encode(all);
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

}
