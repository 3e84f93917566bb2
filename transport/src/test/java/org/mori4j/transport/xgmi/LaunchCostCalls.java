package org.mori4j.transport.xgmi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.mori4j.natives.cuda.CudaConstants;
import org.mori4j.natives.cuda.CudaDriver;
import org.mori4j.natives.cuda.CudaExecutionApi;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuEvent;
import org.mori4j.natives.gpu.GpuModule.GpuFunction;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.KernelArgs;

/**
 * The calls one implementation of {@link LaunchCostProbe} makes (launch, event record, event query, drain); the
 * probe's loops are the same for all. {@link #of} picks one by its {@code --impls} name: {@code java} (the engine's
 * path through {@link GpuRuntime}) or {@code java-raw} / {@code java-critical} (the CUDA driver's calls directly).
 */
interface LaunchCostCalls extends AutoCloseable {
  void launch();

  void record(int event);

  /** One query; true when the event's work is complete. */
  boolean query(int event);

  void drain();

  @Override
  void close();

  static LaunchCostCalls of(String impl, GpuRuntime gpu, GpuFunction f, int device, long table, long src, long dst) {
    return switch (impl) {
      case "java" -> new EngineCalls(gpu, f, device, table, src, dst);
      case "java-raw" -> new RawCalls(gpu, f, device, table, src, dst, false);
      case "java-critical" -> new RawCalls(gpu, f, device, table, src, dst, true);
      default -> throw new IllegalArgumentException("unknown implementation " + impl);
    };
  }

  /** The engine's path: the runtime's launch with arguments built per launch, its events. */
  final class EngineCalls implements LaunchCostCalls {
    private final GpuRuntime gpu;
    private final GpuFunction f;
    private final GpuStream stream;
    private final GpuEvent[] events = new GpuEvent[LaunchCostProbe.IN_FLIGHT_EVENTS];
    private final long table;
    private final long src;
    private final long dst;
    private final Dim3 grid = GatherKernel.grid(1, 1, LaunchCostProbe.BLOCK);

    EngineCalls(GpuRuntime gpu, GpuFunction f, int device, long table, long src, long dst) {
      this.gpu = gpu;
      this.f = f;
      this.table = table;
      this.src = src;
      this.dst = dst;
      this.stream = gpu.createStream(device);
      for (int i = 0; i < events.length; i++) events[i] = gpu.createEvent(device, false);
    }

    @Override
    public void launch() {
      gpu.launch(f, grid, Dim3.of(GatherKernel.THREADS), 0, stream,
          KernelArgs.of().pointer(table).i32(1).pointer(src).pointer(dst).i64(LaunchCostProbe.BLOCK).i64(GatherKernel.pieces(LaunchCostProbe.BLOCK)));
    }

    @Override
    public void record(int event) {
      events[event].record(stream);
    }

    @Override
    public boolean query(int event) {
      return events[event].isComplete();
    }

    @Override
    public void drain() {
      stream.synchronize();
    }

    @Override
    public void close() {
      stream.synchronize();
      for (GpuEvent e : events) e.close();
      stream.close();
    }
  }

  /**
   * The driver's calls with a parameter array built once, through the engine's handles or through handles linked
   * here as critical. Needs the device's context current on this thread, which the runtime's own stream creation
   * (done first) leaves so.
   */
  final class RawCalls implements LaunchCostCalls {
    private static final FunctionDescriptor LAUNCH_FD = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT,
        JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
    private final Arena arena = Arena.ofConfined();
    private final GpuStream owner;
    private final MemorySegment function;
    private final MemorySegment stream;
    private final MemorySegment[] events = new MemorySegment[LaunchCostProbe.IN_FLIGHT_EVENTS];
    private final MemorySegment params;
    private final MethodHandle launch;
    private final MethodHandle record;
    private final MethodHandle query;

    RawCalls(GpuRuntime gpu, GpuFunction f, int device, long table, long src, long dst, boolean critical) {
      owner = gpu.createStream(device); // makes the device's context current here
      function = MemorySegment.ofAddress(f.handle());
      stream = CudaExecutionApi.streamCreate(CudaConstants.CU_STREAM_NON_BLOCKING);
      for (int i = 0; i < events.length; i++) events[i] = CudaExecutionApi.eventCreate(CudaConstants.CU_EVENT_DISABLE_TIMING);
      MemorySegment values = arena.allocate(8 * 6, 8);
      long[] v = {table, 1, src, dst, LaunchCostProbe.BLOCK, GatherKernel.pieces(LaunchCostProbe.BLOCK)};
      params = arena.allocate(ADDRESS, 6);
      for (int i = 0; i < 6; i++) {
        values.setAtIndex(JAVA_LONG, i, v[i]); // little-endian: the int parameter n reads the low 4 bytes
        params.setAtIndex(ADDRESS, i, values.asSlice(8L * i, 8));
      }
      if (critical) {
        Linker linker = Linker.nativeLinker();
        Linker.Option c = Linker.Option.critical(false);
        launch = linker.downcallHandle(symbol("cuLaunchKernel"), LAUNCH_FD, c);
        record = linker.downcallHandle(symbol("cuEventRecord"), FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), c);
        query = linker.downcallHandle(symbol("cuEventQuery"), FunctionDescriptor.of(JAVA_INT, ADDRESS), c);
      } else {
        launch = record = query = null;
      }
    }

    private static MemorySegment symbol(String name) {
      return CudaDriver.library().find(name).orElseThrow(() -> new IllegalStateException(name + " not found in " + CudaDriver.library().what()));
    }

    @Override
    public void launch() {
      if (launch == null) {
        CudaExecutionApi.launchKernel(function, 1, 1, 1, GatherKernel.THREADS, 1, 1, 0, stream, params);
        return;
      }
      int rc;
      try {
        rc = (int) launch.invokeExact(function, 1, 1, 1, GatherKernel.THREADS, 1, 1, 0, stream, params, MemorySegment.NULL);
      } catch (Throwable t) {
        throw new IllegalStateException(t);
      }
      if (rc != 0) throw new IllegalStateException("cuLaunchKernel: " + rc);
    }

    @Override
    public void record(int event) {
      if (record == null) {
        CudaExecutionApi.eventRecord(events[event], stream);
        return;
      }
      int rc;
      try {
        rc = (int) record.invokeExact(events[event], stream);
      } catch (Throwable t) {
        throw new IllegalStateException(t);
      }
      if (rc != 0) throw new IllegalStateException("cuEventRecord: " + rc);
    }

    @Override
    public boolean query(int event) {
      if (query == null) return CudaExecutionApi.eventQuery(events[event]);
      int rc;
      try {
        rc = (int) query.invokeExact(events[event]);
      } catch (Throwable t) {
        throw new IllegalStateException(t);
      }
      if (rc != 0 && rc != CudaConstants.CUDA_ERROR_NOT_READY) throw new IllegalStateException("cuEventQuery: " + rc);
      return rc == 0;
    }

    @Override
    public void drain() {
      CudaExecutionApi.streamSynchronize(stream);
    }

    @Override
    public void close() {
      CudaExecutionApi.streamSynchronize(stream);
      for (MemorySegment e : events) CudaExecutionApi.eventDestroy(e);
      CudaExecutionApi.streamDestroy(stream);
      owner.close();
      arena.close();
    }
  }
}
