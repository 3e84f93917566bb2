package org.mori4j.shmem;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * One PE's side of a collective host call, exchanged before the call does anything so that every PE can
 * check that all of them made the same call with the same arguments, and fail alike (naming each PE's values)
 * when they did not, instead of handing out offsets that mean different objects on different PEs.
 *
 * @param op the call ({@code malloc}, {@code free}, {@code register}, ...)
 * @param args its arguments, which must be equal on every PE
 * @param history a digest of this PE's allocator history: equal on every PE unless one skipped a call
 * @param problem what this PE found wrong with its own arguments (null when nothing): every PE then fails
 *     with it, so that a bad argument on one PE does not leave the others waiting
 * @param extra per-PE data that may differ (an IPC handle, an address)
 */
record CollectiveCall(String op, long[] args, long history, String problem, byte[] extra) {

  CollectiveCall(String op, long[] args, long history) {
    this(op, args, history, null, new byte[0]);
  }

  CollectiveCall withProblem(String why) {
    return new CollectiveCall(op, args, history, why, extra);
  }

  CollectiveCall withExtra(byte[] data) {
    return new CollectiveCall(op, args, history, problem, data);
  }

  /**
   * Throws alike on every PE unless every PE made {@code mine}'s call with the same arguments, the same heap
   * history and no problem: an {@link IllegalArgumentException} with the problems found, else a
   * {@link ShmemException} naming each PE's call.
   */
  static void requireAlike(CollectiveCall mine, CollectiveCall[] all, int myPe) {
    StringBuilder problems = new StringBuilder();
    for (CollectiveCall c : all) if (c.problem() != null) problems.append(problems.isEmpty() ? "" : "; ").append(c.problem());
    if (!problems.isEmpty()) throw new IllegalArgumentException(problems.toString());
    for (int p = 0; p < all.length; p++) {
      CollectiveCall c = all[p];
      if (!c.op().equals(mine.op()) || !java.util.Arrays.equals(c.args(), mine.args())) {
        throw new ShmemException(mine.op() + " is collective and every PE must call it alike: " + describe(all));
      }
      if (c.history() != mine.history()) {
        throw new ShmemException(mine.op() + ": the PEs' heaps have diverged (PE " + p + " and PE " + myPe
            + " did not make the same malloc/free calls before this one)");
      }
    }
  }

  /** Each PE's call with its arguments, for messages. */
  static String describe(CollectiveCall[] all) {
    StringBuilder s = new StringBuilder();
    for (int p = 0; p < all.length; p++) {
      CollectiveCall c = all[p];
      if (p > 0) s.append(", ");
      s.append("PE ").append(p).append(" called ").append(c.op());
      switch (c.op()) {
        case "malloc", "mallocAlign", "extMallocWithFlags" -> s.append("(size ").append(c.args()[0]).append(", alignment ").append(c.args()[1])
            .append(c.args()[2] != 0 ? ", flags " + c.args()[2] : "").append(')');
        case "free" -> s.append("(heap offset ").append(c.args()[0]).append(')');
        case "bufferRegister", "bufferDeregister" -> s.append("(size ").append(c.args()[0]).append(')');
        default -> s.append("()");
      }
    }
    return s.toString();
  }

  byte[] toBytes() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeUTF(op);
      out.writeInt(args.length);
      for (long a : args) out.writeLong(a);
      out.writeLong(history);
      out.writeBoolean(problem != null);
      if (problem != null) out.writeUTF(problem.length() > 8000 ? problem.substring(0, 8000) : problem);
      out.writeInt(extra.length);
      out.write(extra);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  static CollectiveCall fromBytes(byte[] data, int from) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(data))) {
      String op = in.readUTF();
      int n = in.readInt();
      if (n < 0 || n > 64) throw new IOException(n + " arguments");
      long[] args = new long[n];
      for (int i = 0; i < n; i++) args[i] = in.readLong();
      long history = in.readLong();
      String problem = in.readBoolean() ? in.readUTF() : null;
      int e = in.readInt();
      if (e < 0 || e > 1 << 20) throw new IOException(e + " extra bytes");
      byte[] extra = in.readNBytes(e);
      return new CollectiveCall(op, args, history, problem, extra);
    } catch (IOException e) {
      throw new ShmemException("PE " + from + " sent an unreadable collective call: " + e.getMessage(), e);
    }
  }
}
