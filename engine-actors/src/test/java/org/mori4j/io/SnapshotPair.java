package org.mori4j.io;

import static org.mori4j.io.Bytes.assertSameBytes;
import static org.mori4j.io.Bytes.randomize;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * An {@link EnginePair} whose two buffers hold random bytes, with a copy of both taken at the start: the
 * error-contract suites check after every refused call that neither buffer changed (a refused call moves no byte).
 */
final class SnapshotPair implements AutoCloseable {
  final EnginePair pair;
  private final Arena arena = Arena.ofShared();
  private final MemorySegment localBefore;
  private final MemorySegment remoteBefore;

  SnapshotPair(long size) {
    pair = new EnginePair(size);
    randomize(pair.localBuf, 1);
    randomize(pair.remoteBuf, 2);
    localBefore = arena.allocate(size, 8);
    remoteBefore = arena.allocate(size, 8);
    localBefore.copyFrom(pair.localBuf);
    remoteBefore.copyFrom(pair.remoteBuf);
  }

  /** Both buffers still hold the bytes of the start; {@code after} says after what, for the failure message. */
  void assertNothingMoved(String after) {
    assertSameBytes(remoteBefore, pair.remoteBuf, "remote buffer after " + after);
    assertSameBytes(localBefore, pair.localBuf, "local buffer after " + after);
  }

  /**
   * A test's own successful write moved the first {@code bytes} of the local buffer to the remote one: the local
   * buffer gets its start bytes back and the remote snapshot takes the new ones, so later checks see no change.
   */
  void acceptWrite(long bytes) {
    pair.localBuf.asSlice(0, bytes).copyFrom(localBefore.asSlice(0, bytes));
    remoteBefore.asSlice(0, bytes).copyFrom(pair.remoteBuf.asSlice(0, bytes));
  }

  /** A test changed the first {@code bytes} of the local buffer on purpose: the snapshot takes them. */
  void acceptLocal(long bytes) {
    localBefore.asSlice(0, bytes).copyFrom(pair.localBuf.asSlice(0, bytes));
  }

  @Override
  public void close() {
    pair.close();
    arena.close();
  }
}
