package org.mori4j.io.kv;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.ConcurrentHashMap;
import org.mori4j.transport.xgmi.XgmiHost;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A receiving engine's landing board: a small file in shared memory ({@code /dev/shm}, else {@code java.io.tmpdir})
 * that the receiving engine creates, owns and unlinks on close, and that sending engines on the same host, in this
 * or another process, map to say "my write {@code uid} to you completed" without a Pekko remoting hop (which costs
 * ~0.3-0.8 ms one way on a busy host, more than a layer's XGMI copy). It is a multi-producer ring: a producer takes
 * a position with an atomic add on the shared head, writes its entry and publishes it with a release store of the
 * entry's sequence ({@code position + 1}); the owner's one reader reads entries in order with acquire loads and
 * checks the sequence again after reading (a producer that lapped it mid-read loses that entry). Producers never
 * wait: when the reader falls a whole ring behind, the oldest entries are lost, and the sender's remoting message
 * (which still goes) reports those ranges. A slot taken by a producer that died before publishing is skipped
 * after {@link #STUCK_NANOS}.
 *
 * <p>The board carries only facts the receiver checks against what it already expects ({@link KvInbound}): an
 * entry names a sender (a 64-bit hash of its engine key) and a write uid; anything that does not match an
 * announced write of that sender is ignored, so garbage can delay nothing but the board itself and can never
 * report a range the receiver did not expect. An entry also carries its sender's incarnation, and it counts only for a
 * write announced by that incarnation: a sender that restarts (same engine key, uids counting from the start again)
 * can leave entries of its old incarnation in the ring that name the same uids as the new incarnation's writes, and
 * those must never complete the new incarnation's ranges. The file is created owner-only ({@code rw-------}). Its name is
 * derived from the owner's engine key and incarnation, so a sender needs nothing beyond the cache descriptor it
 * already has; the header repeats both and the host's boot id, which a sender checks before it writes.
 */
final class KvLandingBoard implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(KvLandingBoard.class);

  static final long MAGIC = 0x4d344a4b56424431L; // "M4JKVBD1"
  static final int VERSION = 2; // 2: entries carry the sender's incarnation
  static final int KIND_LANDED = 1, KIND_ISSUED = 2;
  static final String PREFIX = "mori4j-kvboard-";
  static final long HEADER = 128, ENTRY = 40;
  static final int MIN_ENTRIES = 16, MAX_ENTRIES = 1 << 20;
  /** A slot claimed but not published for this long while later positions exist is skipped (its producer died). */
  static final long STUCK_NANOS = 10_000_000L;
  private static final long OFF_MAGIC = 0, OFF_VERSION = 8, OFF_CAPACITY = 12, OFF_PID = 16, OFF_INCARNATION = 24, OFF_KEY = 32,
      OFF_BOOT = 40, OFF_PIDNS = 48, OFF_STATE = 56, OFF_HEAD = 64;
  private static final int STATE_OPEN = 1, STATE_CLOSED = 2;
  private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
  private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
  private static final ConcurrentHashMap<String, Long> HASHES = new ConcurrentHashMap<>();

  /** What the owner's reader is handed per entry. */
  interface Reader {
    void entry(int kind, long sender, long incarnation, long uid);
  }

  final Path path;
  final boolean owner;
  final int capacity;
  private final long mask;
  private final Arena arena;
  private final MemorySegment seg;
  // the owner's reader thread only
  private long next;
  private long stuckSince;
  private long lost;
  private volatile boolean closed;

  private KvLandingBoard(Path path, boolean owner, Arena arena, MemorySegment seg, int capacity) {
    this.path = path;
    this.owner = owner;
    this.arena = arena;
    this.seg = seg;
    this.capacity = capacity;
    this.mask = capacity - 1;
  }

  /** The file name of the board of engine {@code engineKey}, incarnation {@code incarnation}. */
  static String fileName(String engineKey, long incarnation) {
    return PREFIX + HexFormat.of().toHexDigits(hash64(engineKey)) + "-" + HexFormat.of().toHexDigits(incarnation);
  }

  /** The directory boards live in: {@code configured} if not empty, else {@code /dev/shm} where usable, else java.io.tmpdir. */
  static Path directory(String configured) {
    if (configured != null && !configured.isBlank()) return Path.of(configured);
    Path shm = Path.of("/dev/shm");
    if (Files.isDirectory(shm) && Files.isWritable(shm)) return shm;
    return Path.of(System.getProperty("java.io.tmpdir"));
  }

  /** A stable 64-bit hash of {@code s} (the first 8 bytes of its SHA-256): the sender id entries carry. */
  static long hash64(String s) {
    return HASHES.computeIfAbsent(s, k -> {
      try {
        byte[] d = MessageDigest.getInstance("SHA-256").digest(k.getBytes(StandardCharsets.UTF_8));
        return ByteBuffer.wrap(d).getLong();
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException(e);
      }
    });
  }

  /**
   * Creates the board of {@code engineKey} (incarnation {@code incarnation}) with {@code entries} slots (a power of
   * two) in {@code dir}, after removing boards of dead processes there. Throws {@link IOException} when the file
   * cannot be made; {@link IllegalArgumentException} for bad arguments or a host without a boot id.
   */
  static KvLandingBoard create(Path dir, String engineKey, long incarnation, int entries) throws IOException {
    if (entries < MIN_ENTRIES || entries > MAX_ENTRIES || Integer.bitCount(entries) != 1)
      throw new IllegalArgumentException("mori4j.kv.landing-board.entries must be a power of two in " + MIN_ENTRIES + ".." + MAX_ENTRIES + ", not " + entries);
    XgmiHost me = XgmiHost.local();
    if (me.bootId().isEmpty()) throw new IllegalArgumentException("this host's boot id is unreadable: no landing board");
    cleanStale(dir);
    Path p = dir.resolve(fileName(engineKey, incarnation));
    long size = HEADER + entries * ENTRY;
    FileChannel opened;
    try {
      opened = FileChannel.open(p, java.util.Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE), ownerOnly(dir));
    } catch (FileAlreadyExistsException e) {
      // the same key and incarnation: only a board this engine left behind (its previous endpoint) can be there
      Files.deleteIfExists(p);
      opened = FileChannel.open(p, java.util.Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE), ownerOnly(dir));
    }
    Arena arena = Arena.ofShared();
    try (FileChannel fc = opened) {
      fc.truncate(size);
      fc.write(ByteBuffer.allocate(1), size - 1);
      MemorySegment s = fc.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
      s.fill((byte) 0);
      INT.set(s, OFF_VERSION, VERSION);
      INT.set(s, OFF_CAPACITY, entries);
      LONG.set(s, OFF_PID, ProcessHandle.current().pid());
      LONG.set(s, OFF_INCARNATION, incarnation);
      LONG.set(s, OFF_KEY, hash64(engineKey));
      LONG.set(s, OFF_BOOT, hash64(me.bootId()));
      LONG.set(s, OFF_PIDNS, hash64(me.pidNamespace()));
      INT.set(s, OFF_STATE, STATE_OPEN);
      // last: a mapper that sees the magic sees the whole header
      LONG.setRelease(s, OFF_MAGIC, MAGIC);
      return new KvLandingBoard(p, true, arena, s, entries);
    } catch (IOException | RuntimeException e) {
      arena.close();
      Files.deleteIfExists(p);
      throw e;
    }
  }

  /**
   * Maps the board of the engine {@code engineKey} (incarnation {@code incarnation}) in {@code dir} for writing, or
   * returns null when there is none, it was made on another boot of the host, or it is not that engine's board
   * (header checked) or already closed.
   */
  static KvLandingBoard open(Path dir, String engineKey, long incarnation) {
    Path p = dir.resolve(fileName(engineKey, incarnation));
    if (!Files.isRegularFile(p)) return null;
    XgmiHost me = XgmiHost.local();
    if (me.bootId().isEmpty()) return null;
    Arena arena = Arena.ofShared();
    try (FileChannel fc = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      long size = fc.size();
      if (size < HEADER) throw new IllegalArgumentException("board " + p + " has " + size + " bytes");
      MemorySegment s = fc.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
      long magic = (long) LONG.getAcquire(s, OFF_MAGIC);
      int version = (int) INT.get(s, OFF_VERSION), cap = (int) INT.get(s, OFF_CAPACITY);
      String why = magic != MAGIC ? "bad magic" : version != VERSION ? "version " + version
          : cap < MIN_ENTRIES || cap > MAX_ENTRIES || Integer.bitCount(cap) != 1 || size != HEADER + cap * ENTRY ? "capacity " + cap + " for " + size + " bytes"
          : (long) LONG.get(s, OFF_KEY) != hash64(engineKey) || (long) LONG.get(s, OFF_INCARNATION) != incarnation ? "another engine's board"
          : (long) LONG.get(s, OFF_BOOT) != hash64(me.bootId()) ? "made on another boot of the host"
          : (int) INT.getAcquire(s, OFF_STATE) != STATE_OPEN ? "closed" : null;
      if (why != null) throw new IllegalArgumentException(why);
      return new KvLandingBoard(p, false, arena, s, cap);
    } catch (IOException | RuntimeException e) {
      arena.close();
      log.debug("landing board {} not used: {}", p, e.toString());
      return null;
    }
  }

  /**
   * A sender: posts an entry naming sender {@code sender} (its id, {@link #hash64} of its engine key) in its
   * incarnation {@code incarnation}; false if the board is closed here or by its owner (the caller drops it). Never
   * blocks.
   */
  boolean post(int kind, long sender, long incarnation, long uid) {
    if (closed) return false;
    try {
      if ((int) INT.getOpaque(seg, OFF_STATE) != STATE_OPEN) return false;
      long pos = (long) LONG.getAndAdd(seg, OFF_HEAD, 1L);
      long at = HEADER + (pos & mask) * ENTRY;
      // "being written" first, ordered before the fields, so a reader that lapped sees the change and drops it
      LONG.setVolatile(seg, at, -(pos + 1));
      LONG.set(seg, at + 8, sender);
      LONG.set(seg, at + 16, uid);
      LONG.set(seg, at + 24, (long) kind);
      LONG.set(seg, at + 32, incarnation);
      LONG.setRelease(seg, at, pos + 1);
      return true;
    } catch (IllegalStateException e) {
      return false; // unmapped by a concurrent close
    }
  }

  /** A sender: whether the owner closed the board (then a new one may exist under the same name). */
  boolean ownerClosed() {
    if (closed) return true;
    try {
      return (int) INT.getOpaque(seg, OFF_STATE) != STATE_OPEN;
    } catch (IllegalStateException e) {
      return true;
    }
  }

  /** The owner's reader: hands every published entry to {@code r} in order; returns how many it read. */
  int drain(Reader r) {
    if (!owner) throw new IllegalStateException("only the board's owner reads it");
    int n = 0;
    while (!closed) {
      long at = HEADER + (next & mask) * ENTRY;
      long s1 = (long) LONG.getAcquire(seg, at);
      if (s1 == next + 1) {
        long sender = (long) LONG.get(seg, at + 8), uid = (long) LONG.get(seg, at + 16), kind = (long) LONG.get(seg, at + 24),
            incarnation = (long) LONG.get(seg, at + 32);
        VarHandle.loadLoadFence();
        long s2 = (long) LONG.getVolatile(seg, at);
        next++;
        stuckSince = 0;
        n++;
        if (s2 != s1) lost++; // overwritten while read
        else if (kind == KIND_LANDED || kind == KIND_ISSUED) r.entry((int) kind, sender, incarnation, uid);
        continue;
      }
      long head = (long) LONG.getAcquire(seg, OFF_HEAD);
      if (s1 > next + 1 && s1 <= head && ((s1 - 1 - next) & mask) == 0) {
        // lapped: a producer reused this slot; the oldest position that may survive is a ring behind it
        lost += s1 - capacity - next;
        next = s1 - capacity;
        continue;
      }
      if (head > next && head - next <= (long) capacity * 4) {
        // claimed, not published yet: wait a little, then skip a producer that died mid-entry
        long now = System.nanoTime();
        if (stuckSince == 0) stuckSince = now;
        else if (now - stuckSince > STUCK_NANOS) {
          next++;
          lost++;
          stuckSince = 0;
          continue;
        }
      } else {
        stuckSince = 0;
      }
      return n;
    }
    return n;
  }

  /** Entries the reader lost (lapped, overwritten mid-read, or skipped), for logs and tests. */
  long lost() {
    return lost;
  }

  /** The owner marks the board closed, unmaps and unlinks it; a sender only unmaps its view. */
  @Override
  public void close() {
    if (closed) return;
    closed = true;
    if (owner) {
      try {
        INT.setRelease(seg, OFF_STATE, STATE_CLOSED);
      } catch (IllegalStateException ignored) {
        // already unmapped
      }
    }
    arena.close();
    if (owner) {
      try {
        Files.deleteIfExists(path);
      } catch (IOException e) {
        log.warn("could not remove landing board {}: {}", path, e.toString());
      }
    }
  }

  /**
   * Removes boards in {@code dir} left by processes that are gone: made on another boot, or by a process of this
   * host and PID namespace that no longer runs. Files it cannot read and that are older than a minute go as well.
   */
  static void cleanStale(Path dir) {
    XgmiHost me = XgmiHost.local();
    long boot = hash64(me.bootId()), ns = hash64(me.pidNamespace());
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, PREFIX + "*")) {
      for (Path f : files) {
        try {
          ByteBuffer h = ByteBuffer.allocate((int) HEADER).order(ByteOrder.nativeOrder());
          try (FileChannel fc = FileChannel.open(f, StandardOpenOption.READ)) {
            fc.read(h, 0);
          }
          h.flip();
          boolean stale;
          if (h.remaining() < 64 || h.getLong((int) OFF_MAGIC) != MAGIC) {
            stale = Files.getLastModifiedTime(f).toMillis() < System.currentTimeMillis() - 60_000;
          } else {
            long pid = h.getLong((int) OFF_PID);
            stale = h.getLong((int) OFF_BOOT) != boot
                || (h.getLong((int) OFF_PIDNS) == ns && ProcessHandle.of(pid).map(ph -> !ph.isAlive()).orElse(true));
          }
          if (stale && Files.deleteIfExists(f)) log.debug("removed stale landing board {}", f);
        } catch (IOException | RuntimeException e) {
          // another user's board, or one removed meanwhile: not ours to judge
        }
      }
    } catch (IOException | RuntimeException e) {
      log.debug("could not list {} for stale landing boards: {}", dir, e.toString());
    }
  }

  private static FileAttribute<?>[] ownerOnly(Path dir) {
    try {
      if (Files.getFileStore(dir).supportsFileAttributeView("posix"))
        return new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))};
    } catch (IOException ignored) {
      // no file store information: the default permissions (umask) apply
    }
    return new FileAttribute<?>[0];
  }

  @Override
  public String toString() {
    return "KvLandingBoard[" + path + (owner ? ", owner" : "") + ", " + capacity + " entries]";
  }
}
