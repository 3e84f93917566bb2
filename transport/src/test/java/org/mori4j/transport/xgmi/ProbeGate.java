package org.mori4j.transport.xgmi;

import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuModule.GpuFunction;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.KernelArgs;
import org.mori4j.natives.gpu.PinnedBuffer;

/**
 * Holds a sample's streams shut while the host issues its work, so that {@link GatherKernelProbe}'s GPU time is the
 * GPU's alone. Without it the start event, recorded on an idle stream, fires at once and the sample also counts the
 * host's launch call (several microseconds, and more for some launch paths than for others). A one-thread kernel on
 * each stream spins on a flag in page-locked host memory mapped into the device; the host raises the flag after
 * the last event is recorded, and every stream starts together. The spin gives up after about 0.2 s (clock cycles at
 * 2 GHz) so that a host that dies mid-sample cannot hang the GPU. Needs a runtime that maps page-locked memory
 * ({@link GpuRuntime#mappedPointer}); {@link #open} returns null where it cannot.
 */
final class ProbeGate implements AutoCloseable {
  static final String SOURCE = """
      typedef unsigned long long u64;
      extern "C" __global__ void probe_gate(const volatile unsigned int* flag, u64 maxCycles) {
        const long long t0 = clock64();
        while (*flag == 0u && (u64) (clock64() - t0) < maxCycles) { }
      }
      """;
  private static final long MAX_CYCLES = 400_000_000L;
  private final GpuRuntime gpu;
  private final GpuModule module;
  private final GpuFunction gate;
  private final PinnedBuffer flag;
  private final long flagOnDevice;

  private ProbeGate(GpuRuntime gpu, GpuModule module, PinnedBuffer flag, long flagOnDevice) {
    this.gpu = gpu;
    this.module = module;
    this.gate = module.function("probe_gate");
    this.flag = flag;
    this.flagOnDevice = flagOnDevice;
  }

  /** A gate for streams of {@code device}, or null (saying why on stdout) where the runtime cannot map host memory. */
  static ProbeGate open(GpuRuntime gpu, int device) {
    PinnedBuffer flag = gpu.allocPinned(64);
    long at = gpu.mappedPointer(flag, device);
    if (at == 0) {
      flag.close();
      System.out.println("(no gate: " + gpu.name() + " does not map page-locked memory into device " + device
          + "; GPU times include the host's issue time)");
      return null;
    }
    GpuModule m = null;
    try {
      m = gpu.loadModule(device, gpu.compile(device, SOURCE, "probe_gate.cu"));
      return new ProbeGate(gpu, m, flag, at);
    } catch (RuntimeException e) {
      if (m != null) m.close();
      flag.close();
      throw e;
    }
  }

  /**
   * Whether the gate holds a stream while the flag is down and lets it go when it is raised: an event before and one
   * after a gate on {@code stream}, the flag raised 5 ms later; between the events there must be 3 to 100 ms (a gate
   * that does not hold shows ~0, one that misses the flag the 0.2 s timeout). Says what it saw on stdout.
   */
  boolean works(GpuStream stream, org.mori4j.natives.gpu.GpuEvent before, org.mori4j.natives.gpu.GpuEvent after) {
    before.record(stream);
    shut(new GpuStream[] {stream}, 1);
    after.record(stream);
    try {
      Thread.sleep(5);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    open();
    after.synchronize();
    float ms = after.elapsedMillisSince(before);
    boolean ok = ms >= 3 && ms <= 100;
    System.out.printf(java.util.Locale.ROOT, "(gate check: held %.2f ms for a 5 ms host delay: %s)%n", ms, ok ? "ok" : "NOT ok, timing ungated");
    return ok;
  }

  /** Lowers the flag and puts a spinning gate at the head of the first {@code count} streams. */
  void shut(GpuStream[] streams, int count) {
    flag.segment().set(ValueLayout.JAVA_INT, 0, 0);
    VarHandle.fullFence();
    for (int s = 0; s < count; s++) {
      gpu.launch(gate, Dim3.of(1), Dim3.of(1), 0, streams[s], KernelArgs.of().pointer(flagOnDevice).i64(MAX_CYCLES));
    }
  }

  /** Raises the flag: every gated stream goes on. */
  void open() {
    VarHandle.fullFence();
    flag.segment().set(ValueLayout.JAVA_INT, 0, 1);
    VarHandle.fullFence();
  }

  @Override
  public void close() {
    module.close();
    flag.close();
  }
}
