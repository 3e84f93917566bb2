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
