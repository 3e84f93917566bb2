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
 * 2 GHz) so that a host that dies mid-sample cannot hang the GPU. The gate writes what it did into the word after the
 * flag (holding, let go by the flag, or timed out), so that its self-check reads the answer instead of guessing it
 * from elapsed time, which a loaded host stretches. Needs a runtime that maps page-locked memory
 * ({@link GpuRuntime#mappedPointer}); {@link #open} returns null where it cannot.
 */
final class ProbeGate implements AutoCloseable {
  static final String SOURCE = """
      typedef unsigned long long u64;
      extern "C" __global__ void probe_gate(volatile unsigned int* flag, u64 maxCycles) {
        const long long t0 = clock64();
        if (*flag == 0u) { flag[1] = 1u; __threadfence_system(); }
        while (*flag == 0u && (u64) (clock64() - t0) < maxCycles) { }
        flag[1] = *flag != 0u ? (flag[1] == 1u ? 2u : 4u) : 3u;
        __threadfence_system();
      }
      """;
  /** The state word's values: {@code shut} writes IDLE; the gate HOLDING, then RELEASED, TIMED_OUT or NEVER_HELD. */
  static final int IDLE = 0, HOLDING = 1, RELEASED = 2, TIMED_OUT = 3, NEVER_HELD = 4;
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
   * Whether the gate holds a stream while the flag is down and lets it go when it is raised, as the gate itself
   * reports: a gate on {@code stream} between two events; once it says it is holding, the host waits 5 ms and raises
   * the flag; the gate must say it was let go by the flag (not by its timeout), and the events must span at least the
   * 5 ms. Says what it saw on stdout.
   */
  boolean works(GpuStream stream, org.mori4j.natives.gpu.GpuEvent before, org.mori4j.natives.gpu.GpuEvent after) {
    before.record(stream);
    shut(new GpuStream[] {stream}, 1);
    after.record(stream);
    long until = System.nanoTime() + 2_000_000_000L;
    while (state() == IDLE && System.nanoTime() < until) Thread.onSpinWait();
    int seen = state();
    sleep(5);
    open();
    after.synchronize();
    int end = state();
    float ms = after.elapsedMillisSince(before);
    boolean ok = seen == HOLDING && end == RELEASED && ms >= 4.5f;
    System.out.printf(java.util.Locale.ROOT, "(gate check: %s, then %s; held %.2f ms for a 5 ms host delay: %s)%n", name(seen),
        name(end), ms, ok ? "ok" : "NOT ok, timing ungated");
    return ok;
  }

  private int state() {
    return (int) STATE.getVolatile(flag.segment(), 4L);
  }

  private static final VarHandle STATE = ValueLayout.JAVA_INT.varHandle();

  private static String name(int state) {
    return switch (state) {
      case IDLE -> "not started";
      case HOLDING -> "holding";
      case RELEASED -> "let go by the flag";
      case TIMED_OUT -> "timed out";
      case NEVER_HELD -> "flag already up";
      default -> "state " + state;
    };
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Lowers the flag and puts a spinning gate at the head of the first {@code count} streams. */
  void shut(GpuStream[] streams, int count) {
    flag.segment().set(ValueLayout.JAVA_INT, 0, 0);
    flag.segment().set(ValueLayout.JAVA_INT, 4, IDLE);
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
