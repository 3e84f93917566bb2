package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Map;

/**
 * Linux {@code errno}: capturing it across a downcall, its symbolic name ({@code ENODEV}) and its text from
 * libc's {@code strerror}. libibverbs and librdmacm report failures either as a returned errno value or as
 * NULL/-1 with {@code errno} set, and our exceptions carry both the number and its name.
 */
public final class Errno {
  private static final Linker LINKER = Linker.nativeLinker();

  /** The linker option that makes a downcall handle take a leading capture-state segment. */
  public static final Linker.Option CAPTURE = Linker.Option.captureCallState("errno");

  private static final VarHandle ERRNO = Linker.Option.captureStateLayout()
      .varHandle(PathElement.groupElement("errno"));

  private static final MethodHandle STRERROR = LINKER.defaultLookup().find("strerror")
      .map(a -> LINKER.downcallHandle(a, FunctionDescriptor.of(ADDRESS, JAVA_INT)))
      .orElse(null);

  // Names of the errno values the verbs and CM calls return; values checked against <errno.h> by the probe.
  public static final int EPERM = 1;
  public static final int ENOENT = 2;
  public static final int EINTR = 4;
  public static final int EIO = 5;
  public static final int ENXIO = 6;
  public static final int EAGAIN = 11;
  public static final int ENOMEM = 12;
  public static final int EACCES = 13;
  public static final int EFAULT = 14;
  public static final int EBUSY = 16;
  public static final int EEXIST = 17;
  public static final int ENODEV = 19;
  public static final int EINVAL = 22;
  public static final int ENOSPC = 28;
  public static final int ENOSYS = 38;
  public static final int EPROTONOSUPPORT = 93;
  public static final int EOPNOTSUPP = 95;
  public static final int EADDRINUSE = 98;
  public static final int EADDRNOTAVAIL = 99;
  public static final int ENETUNREACH = 101;
  public static final int ECONNABORTED = 103;
  public static final int ECONNRESET = 104;
  public static final int ETIMEDOUT = 110;
  public static final int ECONNREFUSED = 111;
  public static final int EHOSTUNREACH = 113;
  public static final int EALREADY = 114;
  public static final int EINPROGRESS = 115;

  private static final Map<Integer, String> NAMES = Map.ofEntries(
      Map.entry(EPERM, "EPERM"), Map.entry(ENOENT, "ENOENT"), Map.entry(EINTR, "EINTR"), Map.entry(EIO, "EIO"),
      Map.entry(ENXIO, "ENXIO"), Map.entry(EAGAIN, "EAGAIN"), Map.entry(ENOMEM, "ENOMEM"),
      Map.entry(EACCES, "EACCES"), Map.entry(EFAULT, "EFAULT"), Map.entry(EBUSY, "EBUSY"),
      Map.entry(EEXIST, "EEXIST"), Map.entry(ENODEV, "ENODEV"), Map.entry(EINVAL, "EINVAL"),
      Map.entry(ENOSPC, "ENOSPC"), Map.entry(ENOSYS, "ENOSYS"), Map.entry(EPROTONOSUPPORT, "EPROTONOSUPPORT"),
      Map.entry(EOPNOTSUPP, "EOPNOTSUPP"), Map.entry(EADDRINUSE, "EADDRINUSE"),
      Map.entry(EADDRNOTAVAIL, "EADDRNOTAVAIL"), Map.entry(ENETUNREACH, "ENETUNREACH"),
      Map.entry(ECONNABORTED, "ECONNABORTED"), Map.entry(ECONNRESET, "ECONNRESET"),
      Map.entry(ETIMEDOUT, "ETIMEDOUT"), Map.entry(ECONNREFUSED, "ECONNREFUSED"),
      Map.entry(EHOSTUNREACH, "EHOSTUNREACH"), Map.entry(EALREADY, "EALREADY"),
      Map.entry(EINPROGRESS, "EINPROGRESS"));

  private Errno() {}

  /** A fresh capture-state segment for one call with a {@link #CAPTURE} handle. */
  public static MemorySegment captureState(Arena arena) {
    return arena.allocate(Linker.Option.captureStateLayout());
  }

  /** The errno a {@link #CAPTURE} handle stored in {@code state}. */
  public static int read(MemorySegment state) {
    return (int) ERRNO.get(state, 0L);
  }

  /** {@code ENODEV} for 19; {@code errno 4242} for a value we do not name. */
  public static String name(int errno) {
    if (errno <= 0) return "no errno (rc " + errno + ")";
    String n = NAMES.get(errno);
    return n != null ? n : "errno " + errno;
  }

  /** libc's {@code strerror} text for {@code errno} (the name alone when libc cannot be reached). */
  public static String describe(int errno) {
    if (STRERROR == null) return name(errno);
    try {
      MemorySegment s = (MemorySegment) STRERROR.invokeExact(errno);
      return s.equals(MemorySegment.NULL) ? name(errno) : s.reinterpret(Long.MAX_VALUE).getString(0);
    } catch (Throwable t) {
      return name(errno);
    }
  }
}
