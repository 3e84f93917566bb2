package org.mori4j.natives.hip;

import org.mori4j.natives.NativeLibrary;
import org.mori4j.natives.gpu.FunctionTable;
import org.mori4j.natives.gpu.RuntimeCompiler;

/**
 * hiprtc, AMD's run-time HIP C++ compiler, through FFM: create a program, compile it (with options such as
 * {@code --offload-arch=gfx942}; without an architecture hiprtc targets the calling thread's current device), read
 * back the code object ({@code hiprtcGetCode}) that {@code hipModuleLoadData} loads, with the compile log in the
 * exception when compilation fails. Where it lives depends on the ROCm release: ROCm 6 ships it as
 * {@code libhiprtc.so.6}; ROCm 5.2 (Debian 12's {@code libamdhip64-5}) exports the {@code hiprtc*} symbols
 * from {@code libamdhip64.so.5} itself, so that is tried last. All of it is the {@link RuntimeCompiler} shared with
 * NVRTC; this class says where hiprtc is and what it is called.
 */
public final class Hiprtc {
  private Hiprtc() {}

  /** The program API shared with NVRTC, on hiprtc's names; it reads back one code object. */
  public static final RuntimeCompiler COMPILER = new RuntimeCompiler(
      new FunctionTable(NativeLibrary.open("hiprtc", "libhiprtc.so.6", "libhiprtc.so", "libamdhip64.so.5", "libamdhip64.so")), "hiprtc",
      HipConstants.HIPRTC_SUCCESS, new RuntimeCompiler.Output("hiprtcGetCodeSize", "hiprtcGetCode"));
}
