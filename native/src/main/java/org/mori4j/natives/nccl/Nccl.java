package org.mori4j.natives.nccl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.NativeLibrary;
import org.mori4j.natives.gpu.FunctionTable;

/**
 * NVIDIA's NCCL ({@code libnccl.so.2}) through FFM, for one purpose: the baseline the shmem collectives are
 * measured against, called the way an application would call it. It binds the version, unique ids,
 * communicator creation and destruction, {@code ncclAllReduce}, groups and the error strings; the owner of a
 * communicator is {@link NcclCommunicator}.
 *
 * <p>The library is found, in order, at {@code -Dmori4j.nccl.library} or {@code MORI4J_NCCL_LIB}, by bare
 * name on the loader path, next to the CUDA libraries ({@code /usr/lib/x86_64-linux-gnu},
 * {@code $CUDA_HOME/lib64}, {@code /usr/local/cuda/lib64}), and in the Python packages where PyTorch's
 * dependency {@code nvidia-nccl-cu*} puts it ({@code <site-packages>/nvidia/nccl/lib}). Opening it never
 * fails class loading: a missing library fails the first call with a {@link NativeException} naming every
 * path tried. Every failed call throws a {@link NativeException} whose code name is the {@code ncclResult_t}
 * enumerator (e.g. {@code ncclInvalidArgument}) and whose message has {@code ncclGetErrorString}'s text.
 *
 * <p>NCCL's calls take the CUDA device from the calling thread's current context: {@link NcclCommunicator}
 * sets it around the calls that need it.
 */
public final class Nccl {
  private Nccl() {}

  /** The environment variable that names the library file. */
  public static final String LIBRARY_ENV = "MORI4J_NCCL_LIB";
  /** The system property that names the library file (wins over the environment). */
  public static final String LIBRARY_PROPERTY = "mori4j.nccl.library";

  public static final int ncclSuccess = 0;
  public static final int ncclUnhandledCudaError = 1;
  public static final int ncclSystemError = 2;
  public static final int ncclInternalError = 3;
  public static final int ncclInvalidArgument = 4;
  public static final int ncclInvalidUsage = 5;
  public static final int ncclRemoteError = 6;
  public static final int ncclInProgress = 7;

  /** The names of {@code ncclResult_t}'s values 0..7, the codes every NCCL 2.x release has. */
  private static final String[] RESULT_NAMES = {"ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
      "ncclInvalidArgument", "ncclInvalidUsage", "ncclRemoteError", "ncclInProgress"};

  /** {@code ncclUniqueId}: a struct of 128 chars, passed by value to {@code ncclCommInitRank}. */
  public static final StructLayout UNIQUE_ID = MemoryLayout.structLayout(
      MemoryLayout.sequenceLayout(NcclUniqueId.BYTES, JAVA_BYTE).withName("internal")).withName("ncclUniqueId");

  private static final FunctionTable FUNCTIONS = new FunctionTable(NativeLibrary.open("nccl", candidates()));

  private static final MethodHandle GET_VERSION = FUNCTIONS.bind("ncclGetVersion", FunctionDescriptor.of(JAVA_INT, ADDRESS));
  private static final MethodHandle GET_UNIQUE_ID = FUNCTIONS.bind("ncclGetUniqueId", FunctionDescriptor.of(JAVA_INT, ADDRESS));
  private static final MethodHandle COMM_INIT_RANK = FUNCTIONS.bind("ncclCommInitRank",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, UNIQUE_ID, JAVA_INT));
  private static final MethodHandle COMM_DESTROY = FUNCTIONS.bind("ncclCommDestroy", FunctionDescriptor.of(JAVA_INT, ADDRESS));
  private static final MethodHandle COMM_ABORT = FUNCTIONS.bind("ncclCommAbort", FunctionDescriptor.of(JAVA_INT, ADDRESS));
  private static final MethodHandle COMM_CU_DEVICE = FUNCTIONS.bind("ncclCommCuDevice", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
  private static final MethodHandle COMM_COUNT = FUNCTIONS.bind("ncclCommCount", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
  private static final MethodHandle COMM_USER_RANK = FUNCTIONS.bind("ncclCommUserRank", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
  private static final MethodHandle COMM_GET_ASYNC_ERROR = FUNCTIONS.bind("ncclCommGetAsyncError", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
  private static final MethodHandle ALL_REDUCE = FUNCTIONS.bind("ncclAllReduce",
      FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
  private static final MethodHandle GROUP_START = FUNCTIONS.bind("ncclGroupStart", FunctionDescriptor.of(JAVA_INT));
  private static final MethodHandle GROUP_END = FUNCTIONS.bind("ncclGroupEnd", FunctionDescriptor.of(JAVA_INT));
  private static final MethodHandle GET_ERROR_STRING = FUNCTIONS.bind("ncclGetErrorString", FunctionDescriptor.of(ADDRESS, JAVA_INT));
  private static final MethodHandle GET_LAST_ERROR = FUNCTIONS.bind("ncclGetLastError", FunctionDescriptor.of(ADDRESS, ADDRESS));

  /** The library names and paths tried, in order, for this process's environment. */
  static String[] candidates() {
    String explicit = System.getProperty(LIBRARY_PROPERTY, System.getenv(LIBRARY_ENV));
    List<Path> python = new ArrayList<>();
    for (String pattern : List.of("/usr/local/lib/python3*/dist-packages", "/usr/lib/python3/dist-packages", "/usr/local/lib/python3*/site-packages",
        "/usr/lib/python3*/site-packages", "/opt/conda/lib/python3*/site-packages")) python.addAll(expand(pattern));
    for (String env : List.of("VIRTUAL_ENV", "CONDA_PREFIX")) {
      String prefix = System.getenv(env);
      if (prefix != null && !prefix.isBlank()) python.addAll(expand(prefix + "/lib/python3*/site-packages"));
    }
    String home = System.getProperty("user.home");
    if (home != null) python.addAll(expand(home + "/.local/lib/python3*/site-packages"));
    return candidates(explicit, System.getenv("CUDA_HOME"), python).toArray(String[]::new);
  }

  /**
   * The search order for an explicit file (may be null), a CUDA install (may be null) and Python package
   * directories (site-packages or dist-packages, most preferred first).
   */
  static List<String> candidates(String explicit, String cudaHome, List<Path> pythonPackages) {
    Set<String> names = new LinkedHashSet<>();
    if (explicit != null && !explicit.isBlank()) names.add(explicit);
    names.add("libnccl.so.2");
    names.add("/usr/lib/x86_64-linux-gnu/libnccl.so.2");
    names.add("/usr/lib/aarch64-linux-gnu/libnccl.so.2");
    for (String cuda : cudaHome == null || cudaHome.isBlank() ? List.of("/usr/local/cuda") : List.of(cudaHome, "/usr/local/cuda")) {
      names.add(cuda + "/lib64/libnccl.so.2");
      names.add(cuda + "/targets/x86_64-linux/lib/libnccl.so.2");
    }
    for (Path p : pythonPackages) names.add(p.resolve("nvidia/nccl/lib/libnccl.so.2").toString());
    return List.copyOf(names);
  }

  /** The existing directories matching {@code pattern}, whose last-but-one or last element may hold one {@code *}; newest name first. */
  private static List<Path> expand(String pattern) {
    int star = pattern.indexOf('*');
    if (star < 0) return Files.isDirectory(Path.of(pattern)) ? List.of(Path.of(pattern)) : List.of();
    int slash = pattern.lastIndexOf('/', star);
    Path parent = Path.of(pattern.substring(0, slash));
    int next = pattern.indexOf('/', star);
    String glob = next < 0 ? pattern.substring(slash + 1) : pattern.substring(slash + 1, next);
    String rest = next < 0 ? "" : pattern.substring(next + 1);
    List<Path> out = new ArrayList<>();
    if (!Files.isDirectory(parent)) return out;
    try (DirectoryStream<Path> dirs = Files.newDirectoryStream(parent, glob)) {
      for (Path d : dirs) {
        Path full = rest.isEmpty() ? d : d.resolve(rest);
        if (Files.isDirectory(full)) out.add(full);
      }
    } catch (IOException e) {
      // an unreadable directory holds no library we could load either
    }
    out.sort(Comparator.comparing(Path::toString).reversed());
    return out;
  }

  public static NativeLibrary library() {
    return FUNCTIONS.library();
  }

  /**
   * Throws, when the library could not be opened, a {@link NativeException} ({@code LIBRARY_NOT_FOUND}) naming
   * every path tried and how to point at the file.
   */
  public static void require() {
    NativeLibrary lib = FUNCTIONS.library();
    if (!lib.available())
      throw new NativeException("nccl", -1, "LIBRARY_NOT_FOUND", "NCCL (libnccl.so.2) is not available; set " + LIBRARY_ENV
          + " to its path (pip's nvidia-nccl-cu* wheel puts it in <site-packages>/nvidia/nccl/lib). " + lib.failure());
  }

  /** Every bound API and the symbol bound for it (for the ABI tests). */
  public static FunctionTable functions() {
    return FUNCTIONS;
  }

  /** {@code ncclGetVersion}: {@code major * 10000 + minor * 100 + patch} for NCCL 2.9 and later (e.g. 23007). */
  public static int version() {
    require();
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_INT);
      check(invoke(() -> (int) GET_VERSION.invokeExact(out)), "ncclGetVersion");
      return out.get(JAVA_INT, 0);
    }
  }

  /** The version as {@code "2.30.7"}. */
  public static String versionString() {
    int v = version();
    return v >= 10000 ? (v / 10000) + "." + (v / 100 % 100) + "." + (v % 100) : (v / 1000) + "." + (v / 100 % 10) + "." + (v % 100);
  }

  /** {@code ncclGetUniqueId}: a new id for one communicator (opens NCCL's bootstrap listener on this host). */
  public static NcclUniqueId uniqueId() {
    require();
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment id = arena.allocate(UNIQUE_ID);
      check(invoke(() -> (int) GET_UNIQUE_ID.invokeExact(id)), "ncclGetUniqueId");
      return NcclUniqueId.of(id.toArray(JAVA_BYTE));
    }
  }

  /** {@code ncclGroupStart}: the calls until {@link #groupEnd()} are issued together (one thread driving several ranks). */
  public static void groupStart() {
    require();
    check(invoke(() -> (int) GROUP_START.invokeExact()), "ncclGroupStart");
  }

  public static void groupEnd() {
    check(invoke(() -> (int) GROUP_END.invokeExact()), "ncclGroupEnd");
  }

  /** {@code ncclGetErrorString}: NCCL's text for a result code (never throws; a missing library gives the number). */
  public static String errorString(int code) {
    try {
      MemorySegment text = (MemorySegment) GET_ERROR_STRING.invokeExact(code);
      return text.equals(MemorySegment.NULL) ? "ncclResult_t " + code : text.reinterpret(4096).getString(0);
    } catch (Throwable t) {
      return "ncclResult_t " + code;
    }
  }

  /** The {@code ncclResult_t} enumerator's name for {@code code} ({@code ncclResult_t <n>} for codes newer than this binding). */
  public static String resultName(int code) {
    return code >= 0 && code < RESULT_NAMES.length ? RESULT_NAMES[code] : "ncclResult_t " + code;
  }

  // ---- per-communicator calls, used by NcclCommunicator ----

  static MemorySegment commInitRank(int nRanks, NcclUniqueId id, int rank) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      MemorySegment idValue = arena.allocate(UNIQUE_ID);
      idValue.copyFrom(MemorySegment.ofArray(id.bytes()));
      check(invoke(() -> (int) COMM_INIT_RANK.invokeExact(out, nRanks, idValue, rank)), "ncclCommInitRank", MemorySegment.NULL,
          " (rank " + rank + " of " + nRanks + ")");
      return out.get(ADDRESS, 0);
    }
  }

  static void commDestroy(MemorySegment comm) {
    check(invoke(() -> (int) COMM_DESTROY.invokeExact(comm)), "ncclCommDestroy", comm, "");
  }

  static void commAbort(MemorySegment comm) {
    check(invoke(() -> (int) COMM_ABORT.invokeExact(comm)), "ncclCommAbort", comm, "");
  }

  static int commCuDevice(MemorySegment comm) {
    return outInt("ncclCommCuDevice", comm, out -> (int) COMM_CU_DEVICE.invokeExact(comm, out));
  }

  static int commCount(MemorySegment comm) {
    return outInt("ncclCommCount", comm, out -> (int) COMM_COUNT.invokeExact(comm, out));
  }

  static int commUserRank(MemorySegment comm) {
    return outInt("ncclCommUserRank", comm, out -> (int) COMM_USER_RANK.invokeExact(comm, out));
  }

  /** The communicator's asynchronous error ({@link #ncclSuccess} when none, {@link #ncclInProgress} while it is still working). */
  static int commAsyncError(MemorySegment comm) {
    return outInt("ncclCommGetAsyncError", comm, out -> (int) COMM_GET_ASYNC_ERROR.invokeExact(comm, out));
  }

  static void allReduce(long send, long recv, long count, NcclDataType type, NcclRedOp op, MemorySegment comm, MemorySegment stream) {
    int t = type.value(), o = op.value();
    check(invoke(() -> (int) ALL_REDUCE.invokeExact(send, recv, count, t, o, comm, stream)), "ncclAllReduce", comm,
        " (" + count + " x " + type.cName() + ", " + op.cName() + ")");
  }

  private interface OutCall {
    int invoke(MemorySegment out) throws Throwable;
  }

  private static int outInt(String function, MemorySegment comm, OutCall call) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_INT);
      check(invoke(() -> call.invoke(out)), function, comm, "");
      return out.get(JAVA_INT, 0);
    }
  }

  private static void check(int rc, String function) {
    check(rc, function, MemorySegment.NULL, "");
  }

  /** Throws for any result but success, with NCCL's text for the code and, given a communicator, its last error message. */
  private static void check(int rc, String function, MemorySegment comm, String detail) {
    if (rc == ncclSuccess) return;
    String last = lastError(comm);
    throw new NativeException("nccl", function, rc, resultName(rc), function + " failed" + detail + ": " + resultName(rc) + " ("
        + errorString(rc) + ")" + (last.isEmpty() ? "" : ": " + last));
  }

  /** {@code ncclGetLastError}: NCCL's most recent error message (empty when it has none or the symbol is absent). */
  private static String lastError(MemorySegment comm) {
    try {
      MemorySegment text = (MemorySegment) GET_LAST_ERROR.invokeExact(comm);
      return text.equals(MemorySegment.NULL) ? "" : text.reinterpret(4096).getString(0).strip();
    } catch (Throwable t) {
      return "";
    }
  }

  @FunctionalInterface
  private interface Call {
    int invoke() throws Throwable;
  }

  private static int invoke(Call call) {
    try {
      return call.invoke();
    } catch (Throwable t) {
      throw FunctionTable.rethrow(t);
    }
  }
}
