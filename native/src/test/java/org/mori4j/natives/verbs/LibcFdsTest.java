package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.NativeException;

/**
 * The libc calls behind waiting on a completion channel, run for real on eventfds (no RDMA device needed):
 * ppoll times out after the asked nanoseconds and sees a signalled eventfd, read and write move the
 * counter, a non-blocking read of an empty eventfd says "nothing" instead of blocking, fcntl sets
 * O_NONBLOCK, and failures name the function and errno.
 */
class LibcFdsTest {

  @Test
  void everySymbolIsBound() {
    assertEquals(List.of("ppoll", "eventfd", "read", "write", "fcntl", "close"), LibcFds.boundSymbols());
  }

  @Test
  void ppollTimesOutThenSeesASignalledEventfd() {
    int fd = LibcFds.eventfd(0, LibcFds.EFD_NONBLOCK | LibcFds.EFD_CLOEXEC);
    try (Arena a = Arena.ofConfined()) {
      MemorySegment errno = Errno.captureState(a);
      MemorySegment fds = a.allocate(LibcFds.POLLFD, 1);
      MemorySegment timeout = a.allocate(LibcFds.TIMESPEC);
      MemorySegment value = a.allocate(JAVA_LONG);

      LibcFds.setPollFd(fds, 0, fd, LibcFds.POLLIN);
      LibcFds.setTimeout(timeout, 30_000_000L);
      long start = System.nanoTime();
      assertEquals(0, LibcFds.ppoll(fds, 1, timeout, errno));
      long waited = System.nanoTime() - start;
      assertTrue(waited >= 25_000_000L, "ppoll returned after " + waited + " ns, asked 30 ms");
      assertEquals(0, LibcFds.returnedEvents(fds, 0));

      // Nothing to read yet: -1 (EAGAIN), not a block or an exception.
      assertEquals(-1, LibcFds.read(fd, value, errno));

      value.set(JAVA_LONG, 0, 3);
      assertEquals(8, LibcFds.write(fd, value, errno));
      assertEquals(8, LibcFds.writeUnchecked(fd, value));
      LibcFds.setPollFd(fds, 0, fd, LibcFds.POLLIN);
      LibcFds.setTimeout(timeout, 5_000_000_000L);
      assertEquals(1, LibcFds.ppoll(fds, 1, timeout, errno));
      assertTrue((LibcFds.returnedEvents(fds, 0) & LibcFds.POLLIN) != 0);
      value.set(JAVA_LONG, 0, 0);
      assertEquals(8, LibcFds.read(fd, value, errno));
      assertEquals(6, value.get(JAVA_LONG, 0), "an eventfd read returns the counter's sum and resets it");
      assertEquals(-1, LibcFds.read(fd, value, errno));
    } finally {
      LibcFds.close(fd);
    }
  }

  @Test
  void fcntlMakesADescriptorNonBlocking() {
    int fd = LibcFds.eventfd(0, LibcFds.EFD_CLOEXEC);
    try {
      assertFalse(LibcFds.isNonBlocking(fd));
      LibcFds.setNonBlocking(fd);
      assertTrue(LibcFds.isNonBlocking(fd));
      LibcFds.setNonBlocking(fd); // already set: unchanged
      assertTrue(LibcFds.isNonBlocking(fd));
      try (Arena a = Arena.ofConfined()) {
        // Had O_NONBLOCK not been set this read of an empty eventfd would block the test forever.
        assertEquals(-1, LibcFds.read(fd, a.allocate(JAVA_LONG), Errno.captureState(a)));
      }
    } finally {
      LibcFds.close(fd);
    }
  }

  @Test
  void aSemaphoreEventfdHandsOutOneEventPerRead() {
    int fd = LibcFds.eventfd(2, LibcFds.EFD_SEMAPHORE | LibcFds.EFD_NONBLOCK | LibcFds.EFD_CLOEXEC);
    try (Arena a = Arena.ofConfined()) {
      MemorySegment errno = Errno.captureState(a);
      MemorySegment value = a.allocate(JAVA_LONG);
      assertEquals(8, LibcFds.read(fd, value, errno));
      assertEquals(1, value.get(JAVA_LONG, 0));
      assertEquals(8, LibcFds.read(fd, value, errno));
      assertEquals(-1, LibcFds.read(fd, value, errno));
    } finally {
      LibcFds.close(fd);
    }
  }

  @Test
  void failuresNameTheFunctionAndErrno() {
    int fd = LibcFds.eventfd(0, LibcFds.EFD_CLOEXEC);
    LibcFds.close(fd);
    NativeException e = assertThrows(NativeException.class, () -> LibcFds.close(fd));
    assertEquals("close", e.function());
    assertEquals(9, e.code(), "EBADF");
    assertEquals(LibcFds.LIBRARY, e.library());
    assertTrue(e.getMessage().startsWith("close failed: errno 9 (Bad file descriptor)"), e.getMessage());
    assertThrows(NativeException.class, () -> LibcFds.setNonBlocking(fd));
    NativeException bad = assertThrows(NativeException.class, () -> LibcFds.eventfd(0, -1));
    assertEquals("eventfd", bad.function());
    assertEquals(Errno.EINVAL, bad.code());
  }
}
