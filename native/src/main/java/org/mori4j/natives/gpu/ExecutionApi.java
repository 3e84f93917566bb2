package org.mori4j.natives.gpu;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Streams, events, modules and kernel launches, written once for CUDA and HIP. For each of these the two APIs
 * take the same arguments in the same order ({@code cuEventRecord(CUevent, CUstream)} and
 * {@code hipEventRecord(hipEvent_t, hipStream_t)}; handles are opaque pointers, sizes {@code size_t}, device
 * pointers 64 bits in both, as each ABI test checks against its header), so a runtime is data here: the symbol
 * each {@link Function} is exported as ({@link Symbol}), the few enum values the shared code passes or tests for
 * ({@link Codes}), and its {@link StatusCalls}. Each binding class makes one over its own {@link FunctionTable},
 * where the ABI and symbol tests see every bound name.
 *
 * <p>The queries that pollers call in a loop ({@link #streamQuery}, {@link #eventQuery}) return a boolean, since
 * "not ready" is their normal answer rather than a failure; they, {@link #eventRecord} and {@link #launchKernel}
 * call {@code invokeExact} directly and allocate nothing.
 */
public final class ExecutionApi {
  /** The functions both runtimes have, with the C signature they share (every one returns a status code). */
  public enum Function {
    /** {@code (stream*, unsigned flags)}: {@code cuStreamCreate}, {@code hipStreamCreateWithFlags}. */
    STREAM_CREATE(ADDRESS, JAVA_INT),
    STREAM_DESTROY(ADDRESS),
    STREAM_SYNCHRONIZE(ADDRESS),
    STREAM_QUERY(ADDRESS),
    /** {@code (event*, unsigned flags)}: {@code cuEventCreate}, {@code hipEventCreateWithFlags}. */
    EVENT_CREATE(ADDRESS, JAVA_INT),
    EVENT_DESTROY(ADDRESS),
    /** {@code (event, stream)}. */
    EVENT_RECORD(ADDRESS, ADDRESS),
    EVENT_QUERY(ADDRESS),
    EVENT_SYNCHRONIZE(ADDRESS),
    /** {@code (float* ms, start, end)}. */
    EVENT_ELAPSED_TIME(ADDRESS, ADDRESS, ADDRESS),
    /** {@code (module*, const void* image)}. */
    MODULE_LOAD_DATA(ADDRESS, ADDRESS),
    MODULE_UNLOAD(ADDRESS),
    /** {@code (function*, module, const char* name)}. */
    MODULE_GET_FUNCTION(ADDRESS, ADDRESS, ADDRESS),
    /** {@code (devptr* address, size_t* size, module, const char* name)}. */
    MODULE_GET_GLOBAL(ADDRESS, ADDRESS, ADDRESS, ADDRESS),
    /** {@code (function, grid x y z, block x y z, unsigned shared bytes, stream, void** params, void** extra)}. */
    LAUNCH_KERNEL(ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, ADDRESS);

    private final FunctionDescriptor descriptor;

    Function(MemoryLayout... arguments) {
      this.descriptor = FunctionDescriptor.of(JAVA_INT, arguments);
    }
  }

  /**
   * Where one runtime exports {@code function}: the API name as C code spells it (and as failures name it), the
   * symbol its header maps that name to, and older symbols with the same signature tried when a library predates it.
   */
  public record Symbol(Function function, String api, String symbol, String... fallbacks) {
    public Symbol {
      fallbacks = fallbacks.clone();
    }

    @Override
    public String[] fallbacks() {
      return fallbacks.clone();
    }
  }

  /** {@code function} exported under its API name. */
  public static Symbol symbol(Function function, String api) {
    return new Symbol(function, api, api);
  }

  /** {@code function} exported as {@code symbol} (a {@code _v2} the header maps {@code api} to), else as a fallback. */
  public static Symbol symbol(Function function, String api, String symbol, String... fallbacks) {
    return new Symbol(function, api, symbol, fallbacks);
  }

  /**
   * The runtime's values for the shared code: the status a query answers while work is pending, the flag that
   * makes a stream not wait on the legacy default stream, and the event flags with and without timing.
   */
  public record Codes(int notReady, int nonBlockingStream, int timedEvent, int untimedEvent) {}

  /** One bound function: the API name for messages and its downcall handle. */
  private record Bound(String api, MethodHandle handle) {}

  private final StatusCalls calls;
  private final Codes codes;
  private final Bound streamCreate;
  private final Bound streamDestroy;
  private final Bound streamSynchronize;
  private final Bound streamQuery;
  private final Bound eventCreate;
  private final Bound eventDestroy;
  private final Bound eventRecord;
  private final Bound eventQuery;
  private final Bound eventSynchronize;
  private final Bound eventElapsedTime;
  private final Bound moduleLoadData;
  private final Bound moduleUnload;
  private final Bound moduleGetFunction;
  private final Bound moduleGetGlobal;
  private final Bound launchKernel;

  /**
   * Binds each of {@code symbols} in {@code table}, in the order given; every {@link Function} must be named
   * exactly once. A symbol the library lacks fails when it is first called, never here ({@link FunctionTable}).
   */
  public ExecutionApi(FunctionTable table, StatusCalls calls, Codes codes, Symbol... symbols) {
    this.calls = calls;
    this.codes = codes;
    Map<Function, Bound> bound = new EnumMap<>(Function.class);
    for (Symbol s : symbols) {
      MethodHandle handle = table.bind(s.api(), s.symbol(), s.function().descriptor, s.fallbacks());
      if (bound.put(s.function(), new Bound(s.api(), handle)) != null) {
        throw new IllegalArgumentException(s.function() + " is named twice (again as " + s.api() + ")");
      }
    }
    List<Function> missing = List.of(Function.values()).stream().filter(f -> !bound.containsKey(f)).toList();
    if (!missing.isEmpty()) throw new IllegalArgumentException("no symbol given for " + missing);
    streamCreate = bound.get(Function.STREAM_CREATE);
    streamDestroy = bound.get(Function.STREAM_DESTROY);
    streamSynchronize = bound.get(Function.STREAM_SYNCHRONIZE);
    streamQuery = bound.get(Function.STREAM_QUERY);
    eventCreate = bound.get(Function.EVENT_CREATE);
    eventDestroy = bound.get(Function.EVENT_DESTROY);
    eventRecord = bound.get(Function.EVENT_RECORD);
    eventQuery = bound.get(Function.EVENT_QUERY);
    eventSynchronize = bound.get(Function.EVENT_SYNCHRONIZE);
    eventElapsedTime = bound.get(Function.EVENT_ELAPSED_TIME);
    moduleLoadData = bound.get(Function.MODULE_LOAD_DATA);
    moduleUnload = bound.get(Function.MODULE_UNLOAD);
    moduleGetFunction = bound.get(Function.MODULE_GET_FUNCTION);
    moduleGetGlobal = bound.get(Function.MODULE_GET_GLOBAL);
    launchKernel = bound.get(Function.LAUNCH_KERNEL);
  }

  public StatusCalls calls() {
    return calls;
  }

  public Codes codes() {
    return codes;
  }

  /** A stream on the calling thread's current device or context; {@code flags} are the runtime's stream flags. */
  public MemorySegment streamCreate(int flags) {
    return calls.outHandle(streamCreate.api, out -> (int) streamCreate.handle.invokeExact(out, flags));
  }

  public void streamDestroy(MemorySegment stream) {
    onHandle(streamDestroy, stream);
  }

  public void streamSynchronize(MemorySegment stream) {
    onHandle(streamSynchronize, stream);
  }

  /** True when all work on {@code stream} has finished. */
  public boolean streamQuery(MemorySegment stream) {
    return query(streamQuery, stream);
  }

  /** An event on the calling thread's current device or context; {@code flags} are the runtime's event flags. */
  public MemorySegment eventCreate(int flags) {
    return calls.outHandle(eventCreate.api, out -> (int) eventCreate.handle.invokeExact(out, flags));
  }

  public void eventDestroy(MemorySegment event) {
    onHandle(eventDestroy, event);
  }

  public void eventRecord(MemorySegment event, MemorySegment stream) {
    int rc;
    try {
      rc = (int) eventRecord.handle.invokeExact(event, stream);
    } catch (Throwable t) {
      throw FunctionTable.rethrow(t);
    }
    calls.check(rc, eventRecord.api);
  }

  /** True when the work before the event's last record has finished. */
  public boolean eventQuery(MemorySegment event) {
    return query(eventQuery, event);
  }

  public void eventSynchronize(MemorySegment event) {
    onHandle(eventSynchronize, event);
  }

  /** Milliseconds between two recorded, completed timing events. */
  public float eventElapsedTime(MemorySegment start, MemorySegment end) {
    return calls.outFloat(eventElapsedTime.api, out -> (int) eventElapsedTime.handle.invokeExact(out, start, end));
  }

  /** Loads a cubin, fatbin, HIP code object or NUL-terminated PTX image on the current device or context. */
  public MemorySegment moduleLoadData(byte[] image) {
    try (Arena arena = Arena.ofConfined()) {
      // PTX must be NUL-terminated; one extra zero byte is harmless for binary images.
      MemorySegment copy = arena.allocate(image.length + 1L, 16);
      MemorySegment.copy(image, 0, copy, JAVA_BYTE, 0, image.length);
      return calls.outHandle(moduleLoadData.api, out -> (int) moduleLoadData.handle.invokeExact(out, copy));
    }
  }

  public void moduleUnload(MemorySegment module) {
    onHandle(moduleUnload, module);
  }

  /** The kernel {@code name} of {@code module}; a failure names the kernel with the function. */
  public MemorySegment moduleGetFunction(MemorySegment module, String name) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment cName = arena.allocateFrom(name);
      return calls.outHandle(moduleGetFunction.api + "(" + name + ")", out -> (int) moduleGetFunction.handle.invokeExact(out, module, cName));
    }
  }

  /** The address and size of the module's {@code __device__} variable {@code name}: {address, size}. */
  public long[] moduleGetGlobal(MemorySegment module, String name) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment cName = arena.allocateFrom(name);
      MemorySegment address = arena.allocate(JAVA_LONG);
      MemorySegment size = arena.allocate(JAVA_LONG);
      calls.call(moduleGetGlobal.api + "(" + name + ")", () -> (int) moduleGetGlobal.handle.invokeExact(address, size, module, cName));
      return new long[] {address.get(JAVA_LONG, 0), size.get(JAVA_LONG, 0)};
    }
  }

  /**
   * Launches {@code function} with {@code kernelParams} (a {@code void**} with one pointer per parameter, see
   * {@link KernelArgs}) on {@code stream} ({@link MemorySegment#NULL}: the legacy default stream). Returns once
   * queued; launch-time errors surface here, execution errors at the next synchronisation.
   */
  public void launchKernel(MemorySegment function, int gridX, int gridY, int gridZ, int blockX, int blockY, int blockZ,
      int sharedMemBytes, MemorySegment stream, MemorySegment kernelParams) {
    int rc;
    try {
      rc = (int) launchKernel.handle.invokeExact(function, gridX, gridY, gridZ, blockX, blockY, blockZ, sharedMemBytes, stream, kernelParams,
          MemorySegment.NULL);
    } catch (Throwable t) {
      throw FunctionTable.rethrow(t);
    }
    calls.check(rc, launchKernel.api);
  }

  private void onHandle(Bound function, MemorySegment target) {
    int rc;
    try {
      rc = (int) function.handle.invokeExact(target);
    } catch (Throwable t) {
      throw FunctionTable.rethrow(t);
    }
    calls.check(rc, function.api);
  }

  private boolean query(Bound function, MemorySegment target) {
    int rc;
    try {
      rc = (int) function.handle.invokeExact(target);
    } catch (Throwable t) {
      throw FunctionTable.rethrow(t);
    }
    if (rc == codes.notReady()) return false;
    calls.check(rc, function.api);
    return true;
  }
}
