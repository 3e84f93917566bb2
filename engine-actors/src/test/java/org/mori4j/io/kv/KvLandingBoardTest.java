package org.mori4j.io.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mori4j.transport.xgmi.XgmiHost;

/**
 * The landing board alone ({@link KvLandingBoard}): an owner and a sender mapping one file in one JVM and a sender
 * in a second JVM, entries read in order across the ring's wraparound, a reader lapped by producers losing the
 * oldest entries only, garbage in the file never handed on as an entry, a board of another engine or incarnation
 * refused by a sender, close marking the board closed for senders and unlinking it, stale boards of dead processes
 * removed when a board is created.
 */
class KvLandingBoardTest {
  private record E(int kind, long sender, long incarnation, long uid) {}

  private static List<E> drainAll(KvLandingBoard b) {
    List<E> out = new ArrayList<>();
    b.drain((k, s, inc, u) -> out.add(new E(k, s, inc, u)));
    return out;
  }

  @Test
  void twoMappersInOneJvmSeeEveryEntryInOrderAcrossTheWrap(@TempDir Path dir) throws IOException {
    try (KvLandingBoard own = KvLandingBoard.create(dir, "rx", 77, 16);
         KvLandingBoard tx = KvLandingBoard.open(dir, "rx", 77)) {
      assertNotNull(tx, "the sender maps the receiver's board by key and incarnation");
      assertEquals(16, tx.capacity);
      assertNull(KvLandingBoard.open(dir, "rx", 78), "another incarnation of the key has no board here");
      assertNull(KvLandingBoard.open(dir, "other", 77));
      List<E> seen = new ArrayList<>();
      // 5 rounds of 10: the ring of 16 wraps three times
      for (int r = 0; r < 5; r++) {
        for (int i = 0; i < 10; i++) assertTrue(tx.post(KvLandingBoard.KIND_LANDED, 42, 3 + r, r * 10 + i));
        seen.addAll(drainAll(own));
      }
      assertEquals(50, seen.size());
      for (int i = 0; i < 50; i++) assertEquals(new E(KvLandingBoard.KIND_LANDED, 42, 3 + i / 10, i), seen.get(i), "each entry with its sender's incarnation");
      assertEquals(0, own.lost());
      assertTrue(drainAll(own).isEmpty(), "nothing more");
    }
  }

  @Test
  void aLappedReaderLosesTheOldestEntriesOnly(@TempDir Path dir) throws IOException {
    try (KvLandingBoard own = KvLandingBoard.create(dir, "rx", 5, 16); KvLandingBoard tx = KvLandingBoard.open(dir, "rx", 5)) {
      for (int i = 0; i < 40; i++) tx.post(KvLandingBoard.KIND_ISSUED, 1, 2, i);
      List<E> seen = drainAll(own);
      assertEquals(16, seen.size(), seen.toString());
      for (int i = 0; i < 16; i++) assertEquals(24 + i, seen.get(i).uid());
      assertEquals(24, own.lost());
      tx.post(KvLandingBoard.KIND_LANDED, 1, 2, 99);
      assertEquals(List.of(new E(KvLandingBoard.KIND_LANDED, 1, 2, 99)), drainAll(own));
    }
  }

  @Test
  void garbageInTheFileIsNeverHandedOn(@TempDir Path dir) throws IOException {
    try (KvLandingBoard own = KvLandingBoard.create(dir, "rx", 9, 16); KvLandingBoard tx = KvLandingBoard.open(dir, "rx", 9);
         Arena arena = Arena.ofShared(); FileChannel fc = FileChannel.open(own.path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      MemorySegment raw = fc.map(FileChannel.MapMode.READ_WRITE, 0, fc.size(), arena);
      // random bytes over every entry slot: sequences that are not the reader's next position are not entries
      Random rnd = new Random(3);
      for (long o = KvLandingBoard.HEADER; o < raw.byteSize(); o += 8) raw.set(ValueLayout.JAVA_LONG, o, rnd.nextLong());
      assertTrue(drainAll(own).isEmpty());
      // a well-formed sequence with a kind that does not exist: read past, not handed on
      raw.set(ValueLayout.JAVA_LONG, KvLandingBoard.HEADER, 1);
      raw.set(ValueLayout.JAVA_LONG, KvLandingBoard.HEADER + 24, 7);
      raw.set(ValueLayout.JAVA_LONG, KvLandingBoard.HEADER + KvLandingBoard.ENTRY, 0); // the next slot: not published
      assertTrue(drainAll(own).isEmpty());
      // the next producer's entry still arrives (position 1 after the garbage one: the head was never moved)
      raw.set(ValueLayout.JAVA_LONG, 64, 1);
      assertTrue(tx.post(KvLandingBoard.KIND_LANDED, 5, 8, 6));
      assertEquals(List.of(new E(KvLandingBoard.KIND_LANDED, 5, 8, 6)), drainAll(own));
    }
  }

  @Test
  void closeMarksTheBoardClosedForSendersAndUnlinksIt(@TempDir Path dir) throws IOException {
    KvLandingBoard own = KvLandingBoard.create(dir, "rx", 11, 16);
    Path p = own.path;
    assertTrue(Files.exists(p));
    if (Files.getFileStore(dir).supportsFileAttributeView("posix"))
      assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(p)));
    try (KvLandingBoard tx = KvLandingBoard.open(dir, "rx", 11)) {
      assertFalse(tx.ownerClosed());
      own.close();
      assertFalse(Files.exists(p), "unlinked");
      assertTrue(tx.ownerClosed(), "the sender's view says closed");
      assertFalse(tx.post(KvLandingBoard.KIND_LANDED, 1, 1, 1), "no post to a closed board");
    }
    assertNull(KvLandingBoard.open(dir, "rx", 11));
  }

  @Test
  void staleBoardsOfDeadProcessesAreRemovedWhenABoardIsCreated(@TempDir Path dir) throws Exception {
    Process gone = new ProcessBuilder("true").start();
    assertTrue(gone.waitFor(10, TimeUnit.SECONDS));
    XgmiHost me = XgmiHost.local();
    Path stale = dir.resolve(KvLandingBoard.PREFIX + "dead"), live = dir.resolve(KvLandingBoard.PREFIX + "live");
    Files.write(stale, header(gone.pid(), KvLandingBoard.hash64(me.bootId()), KvLandingBoard.hash64(me.pidNamespace())));
    Files.write(live, header(ProcessHandle.current().pid(), KvLandingBoard.hash64(me.bootId()), KvLandingBoard.hash64(me.pidNamespace())));
    try (KvLandingBoard own = KvLandingBoard.create(dir, "rx", 13, 16)) {
      assertFalse(Files.exists(stale), "a dead process's board is removed");
      assertTrue(Files.exists(live), "a running process's board stays");
    }
  }

  @Test
  void aSenderInAnotherJvmPostsToTheBoard(@TempDir Path dir) throws Exception {
    try (KvLandingBoard own = KvLandingBoard.create(dir, "rx-x", 21, 64)) {
      String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
      Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), KvLandingBoardPoster.class.getName(), dir.toString(), "rx-x",
          "21", "20").redirectErrorStream(true).start();
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the child ends");
      String out = new String(p.getInputStream().readAllBytes());
      assertEquals(0, p.exitValue(), out);
      List<E> seen = drainAll(own);
      assertEquals(20, seen.size(), out);
      for (int i = 0; i < 20; i++) assertEquals(new E(KvLandingBoard.KIND_LANDED, KvLandingBoard.hash64("tx-x"), 1, 1000 + i), seen.get(i));
    }
  }

  private static byte[] header(long pid, long boot, long ns) {
    ByteBuffer b = ByteBuffer.allocate((int) KvLandingBoard.HEADER).order(ByteOrder.nativeOrder());
    b.putLong(0, KvLandingBoard.MAGIC).putInt(8, KvLandingBoard.VERSION).putInt(12, 16).putLong(16, pid).putLong(40, boot).putLong(48, ns);
    return b.array();
  }
}
