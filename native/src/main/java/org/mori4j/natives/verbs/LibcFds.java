package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.mori4j.natives.verbs.CLayout.offset;
import static org.mori4j.natives.verbs.CLayout.struct;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.mori4j.natives.NativeException;

/**
 * The few libc calls a verbs completion channel needs to be waited on with a timeout and woken from another
 * thread: {@code ppoll(2)} over the channel's descriptor and an {@code eventfd(2)}, {@code read}/{@code write}
 * of the eventfd's counter, {@code fcntl(2)} to make a descriptor non-blocking, and {@code close}. They are
 * looked up in the JVM's default symbol lookup (libc). The data-carrying calls take a caller-owned errno
 * capture segment ({@link Errno#captureState}) so that waiting allocates nothing; expected outcomes of a
 * non-blocking descriptor ({@code EINTR}, {@code EAGAIN}) come back as -1, anything else as a
 * {@link NativeException} naming the function and the errno. {@code struct pollfd}, {@code struct timespec}
 * and every constant here are checked against glibc's headers by {@code VerbsAbiConformanceTest}.
 */
public final class LibcFds {
  /** The library name exceptions carry. */
  public static final String LIBRARY = "libc";

  /** {@code struct pollfd} of {@code <poll.h>}. */
  public static final StructLayout POLLFD =
      struct("pollfd", JAVA_INT.withName("fd"), JAVA_SHORT.withName("events"), JAVA_SHORT.withName("revents"));

  /** {@code struct timespec} ({@code time_t tv_sec; long tv_nsec}, LP64). */
  public static final StructLayout TIMESPEC =
      struct("timespec", JAVA_LONG.withName("tv_sec"), JAVA_LONG.withName("tv_nsec"));

  /** Every layout above, for the conformance test. */
  public static final List<MemoryLayout> ALL = List.of(POLLFD, TIMESPEC);

  /** {@code poll} event bits ({@code <poll.h>}). */
  public static final int POLLIN = 0x001;
  public static final int POLLERR = 0x008;
  public static final int POLLHUP = 0x010;
  public static final int POLLNVAL = 0x020;

  /** {@code eventfd} flags ({@code <sys/eventfd.h>}). */
  public static final int EFD_SEMAPHORE = 1;
  public static final int EFD_NONBLOCK = 04000;
  public static final int EFD_CLOEXEC = 02000000;

  /** {@code fcntl} commands and the status flag this class sets ({@code <fcntl.h>}). */
  public static final int F_GETFL = 3;
  public static final int F_SETFL = 4;
  public static final int O_NONBLOCK = 04000;

  // Offsets stay private: the conformance test treats every public static long here as a header constant.
  private static final long POLLFD_FD = offset(POLLFD, "fd");
  private static final long POLLFD_EVENTS = offset(POLLFD, "events");
  private static final long POLLFD_REVENTS = offset(POLLFD, "revents");
  private static final long TS_SEC = offset(TIMESPEC, "tv_sec");
  private static final long TS_NSEC = offset(TIMESPEC, "tv_nsec");

  private static final Linker LINKER = Linker.nativeLinker();
  private static final List<String> BOUND = new ArrayList<>();

  private static final MethodHandle PPOLL = bind("ppoll",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS), Errno.CAPTURE);
  private static final MethodHandle EVENTFD =
      bind("eventfd", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), Errno.CAPTURE);
  private static final MethodHandle READ =
      bind("read", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), Errno.CAPTURE);
  private static final MethodHandle WRITE =
      bind("write", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), Errno.CAPTURE);
  /** The same {@code write} without errno capture, for wake-ups from any thread (no shared capture segment). */
  private static final MethodHandle WRITE_PLAIN = LINKER.downcallHandle(
      LINKER.defaultLookup().find("write").orElseThrow(),
      FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
  private static final MethodHandle FCNTL_GET =
      bind("fcntl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), Errno.CAPTURE);
  // fcntl is variadic: its third argument must be passed as a variadic one (x86_64 sets %al for it).
  private static final MethodHandle FCNTL_SET = bind("fcntl",
      FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), Errno.CAPTURE, Linker.Option.firstVariadicArg(2));
  private static final MethodHandle CLOSE = bind("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT), Errno.CAPTURE);

  private LibcFds() {}

  /** The libc symbols bound here (the symbols test checks each resolves). */
  public static List<String> boundSymbols() {
    return Collections.unmodifiableList(BOUND);
  }

  /** {@code eventfd(initialValue, flags)}: a new descriptor the caller owns and must {@link #close}. */
  public static int eventfd(int initialValue, int flags) {
    try (var a = Arena.ofConfined()) {
      MemorySegment errno = Errno.captureState(a);
      int fd = (int) EVENTFD.invokeExact(errno, initialValue, flags);
      if (fd < 0) throw failure("eventfd", Errno.read(errno));
      return fd;
    } catch (Throwable t) {
      throw IbVerbs.rethrow(t);
    }
  }

  /** Sets {@code O_NONBLOCK} on {@code fd} ({@code fcntl F_GETFL}, then {@code F_SETFL}). */
  public static void setNonBlocking(int fd) {
    try (var a = Arena.ofConfined()) {
      MemorySegment errno = Errno.captureState(a);
      int flags = (int) FCNTL_GET.invokeExact(errno, fd, F_GETFL);
      if (flags < 0) throw failure("fcntl(F_GETFL)", Errno.read(errno));
      if ((flags & O_NONBLOCK) != 0) return;
      int rc = (int) FCNTL_SET.invokeExact(errno, fd, F_SETFL, flags | O_NONBLOCK);
      if (rc < 0) throw failure("fcntl(F_SETFL)", Errno.read(errno));
    } catch (Throwable t) {
      throw IbVerbs.rethrow(t);
    }
  }

  /** Whether {@code O_NONBLOCK} is set on {@code fd}. */
  public static boolean isNonBlocking(int fd) {
    try (var a = Arena.ofConfined()) {
      MemorySegment errno = Errno.captureState(a);
      int flags = (int) FCNTL_GET.invokeExact(errno, fd, F_GETFL);
      if (flags < 0) throw failure("fcntl(F_GETFL)", Errno.read(errno));
      return (flags & O_NONBLOCK) != 0;
    } catch (Throwable t) {
      throw IbVerbs.rethrow(t);
    }
  }

  /** {@code close(fd)}. */
  public static void close(int fd) {
    try (var a = Arena.ofConfined()) {
      MemorySegment errno = Errno.captureState(a);
      int rc = (int) CLOSE.invokeExact(errno, fd);
      if (rc < 0) throw failure("close", Errno.read(errno));
    } catch (Throwable t) {
      throw IbVerbs.rethrow(t);
    }
  }

  /**
   * {@code ppoll(fds, count, timeout, NULL)}: the number of entries of {@code fds} (a {@link #POLLFD} array)
   * with events, 0 when {@code timeout} (a {@link #TIMESPEC}, see {@link #setTimeout}) passed first, or -1
   * when a signal interrupted the wait ({@code EINTR}; wait again for what is left).
   */
  public static int ppoll(MemorySegment fds, long count, MemorySegment timeout, MemorySegment errnoState) {
    try {
      int n = (int) PPOLL.invokeExact(errnoState, fds, count, timeout, MemorySegment.NULL);
      if (n >= 0) return n;
      int errno = Errno.read(errnoState);
      if (errno == Errno.EINTR) return -1;
      throw failure("ppoll", errno);
    } catch (Throwable t) {
      throw IbVerbs.rethrow(t);
    }
  }

  /** Sets entry {@code index} of a {@link #POLLFD} array to wait for {@code events} on {@code fd}. */
  public static void setPollFd(MemorySegment fds, int index, int fd, int events) {
    long at = POLLFD.byteSize() * index;
    fds.set(JAVA_INT, at + POLLFD_FD, fd);
    fds.set(JAVA_SHORT, at + POLLFD_EVENTS, (short) events);
    fds.set(JAVA_SHORT, at + POLLFD_REVENTS, (short) 0);
  }

  /** The events {@code ppoll} reported for entry {@code index} of a {@link #POLLFD} array. */
  public static int returnedEvents(MemorySegment fds, int index) {
    return Short.toUnsignedInt(fds.get(JAVA_SHORT, POLLFD.byteSize() * index + POLLFD_REVENTS));
  }

  /** Writes {@code nanos} (clamped at 0) into a {@link #TIMESPEC}; ppoll's timeout has nanosecond resolution. */
  public static void setTimeout(MemorySegment timespec, long nanos) {
    long n = Math.max(0, nanos);
    timespec.set(JAVA_LONG, TS_SEC, n / 1_000_000_000L);
    timespec.set(JAVA_LONG, TS_NSEC, n % 1_000_000_000L);
  }

  /**
   * {@code read(fd, buffer, buffer.byteSize())}: the bytes read, or -1 when a non-blocking {@code fd} has
   * nothing ({@code EAGAIN}) or a signal interrupted it ({@code EINTR}).
   */
  public static long read(int fd, MemorySegment buffer, MemorySegment errnoState) {
    try {
      long n = (long) READ.invokeExact(errnoState, fd, buffer, buffer.byteSize());
      if (n >= 0) return n;
      int errno = Errno.read(errnoState);
      if (errno == Errno.EAGAIN || errno == Errno.EINTR) return -1;
      throw failure("read", errno);
    } catch (Throwable t) {
      throw IbVerbs.rethrow(t);
    }
  }

  /**
   * {@code write(fd, buffer, buffer.byteSize())}: the bytes written, or -1 when a non-blocking {@code fd}
   * cannot take them now ({@code EAGAIN}) or a signal interrupted it ({@code EINTR}).
   */
  public static long write(int fd, MemorySegment buffer, MemorySegment errnoState) {
    try {
      long n = (long) WRITE.invokeExact(errnoState, fd, buffer, buffer.byteSize());
      if (n >= 0) return n;
      int errno = Errno.read(errnoState);
      if (errno == Errno.EAGAIN || errno == Errno.EINTR) return -1;
      throw failure("write", errno);
    } catch (Throwable t) {
      throw IbVerbs.rethrow(t);
    }
  }

  /**
   * {@code write} whose result is returned as is (-1 on any failure, errno not kept): for signalling an
   * eventfd from any thread, where the only failure of a live descriptor, a full counter, already means
   * "signalled".
   */
  public static long writeUnchecked(int fd, MemorySegment buffer) {
    try {
      return (long) WRITE_PLAIN.invokeExact(fd, buffer, buffer.byteSize());
    } catch (Throwable t) {
      throw IbVerbs.rethrow(t);
    }
  }

  /** The exception for a failed libc call: function, errno, its name and text. */
  public static NativeException failure(String function, int errno) {
    return new NativeException(LIBRARY, function, errno, Errno.name(errno),
        function + " failed: " + Errno.name(errno) + " (" + Errno.describe(errno) + ")");
  }

  private static MethodHandle bind(String symbol, FunctionDescriptor fd, Linker.Option... options) {
    if (!BOUND.contains(symbol)) BOUND.add(symbol);
    // libc is always in the default lookup on Linux; a missing one would be a broken JVM, so fail loudly.
    MemorySegment address = LINKER.defaultLookup().find(symbol)
        .orElseThrow(() -> new IllegalStateException("libc symbol " + symbol + " not found in the default lookup"));
    return LINKER.downcallHandle(address, fd, options);
  }
}
