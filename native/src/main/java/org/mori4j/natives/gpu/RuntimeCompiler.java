package org.mori4j.natives.gpu;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.List;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.NativeLibrary;

/**
 * A run-time compiler of GPU C++ (NVRTC, hiprtc), written once: both libraries have the same program API under
 * their own prefix ({@code nvrtcCreateProgram} and {@code hiprtcCreateProgram}, then {@code CompileProgram},
 * {@code GetProgramLogSize}/{@code GetProgramLog}, {@code DestroyProgram}, {@code Version},
 * {@code GetErrorString}, with the same arguments), and differ only in what a compile hands back: NVRTC a cubin
 * when the options name a real architecture and PTX otherwise, hiprtc a code object. So a compiler is data: its
 * {@link FunctionTable}, its prefix (which is also the library tag its failures carry) and the {@link Output}s to
 * try in order. A failure names the function and the library's own name for the code ({@code GetErrorString});
 * a failed compile carries the compile log.
 */
public final class RuntimeCompiler {
  /**
   * One form a compile can be read back in: the function giving its size and the one copying it out. Every output
   * but the last is passed over when its size call fails or answers 0 (NVRTC has no cubin for a virtual architecture).
   */
  public record Output(String sizeFunction, String getFunction) {}

  /** An output with its two functions bound. */
  private record Bound(Output output, MethodHandle size, MethodHandle get) {}

  private static final FunctionDescriptor ON_PROGRAM = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS);

  private final FunctionTable table;
  private final String prefix;
  private final int success;
  private final StatusCalls calls;
  private final MethodHandle version;
  private final MethodHandle createProgram;
  private final MethodHandle compileProgram;
  private final MethodHandle destroyProgram;
  private final MethodHandle logSize;
  private final MethodHandle log;
  private final List<Bound> outputs;
  private final MethodHandle getErrorString;

  /**
   * Binds {@code prefix}'s program functions and {@code outputs} in {@code table}; {@code success} is the result code
   * of a call that worked. As everywhere, a missing library or symbol fails the first call that needs it, not this.
   */
  public RuntimeCompiler(FunctionTable table, String prefix, int success, Output... outputs) {
    if (outputs.length == 0) throw new IllegalArgumentException("a compiler with no output to read back");
    this.table = table;
    this.prefix = prefix;
    this.success = success;
    this.calls = new StatusCalls(prefix, success, this::errorString, null);
    this.version = table.bind(prefix + "Version", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    this.createProgram = table.bind(prefix + "CreateProgram", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS));
    this.compileProgram = table.bind(prefix + "CompileProgram", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
    this.destroyProgram = table.bind(prefix + "DestroyProgram", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    this.logSize = table.bind(prefix + "GetProgramLogSize", ON_PROGRAM);
    this.log = table.bind(prefix + "GetProgramLog", ON_PROGRAM);
    this.outputs = List.of(outputs).stream().map(o -> new Bound(o, table.bind(o.sizeFunction(), ON_PROGRAM), table.bind(o.getFunction(), ON_PROGRAM)))
        .toList();
    this.getErrorString = table.bind(prefix + "GetErrorString", FunctionDescriptor.of(ADDRESS, JAVA_INT));
  }

  /** The library as opened (or the reasons it could not be). */
  public NativeLibrary library() {
    return table.library();
  }

  /** Every bound API and the symbol bound for it (for the ABI tests). */
  public FunctionTable functions() {
    return table;
  }

  /** The compiler's version as {major, minor}. */
  public int[] version() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment major = arena.allocate(JAVA_INT);
      MemorySegment minor = arena.allocate(JAVA_INT);
      calls.call(prefix + "Version", () -> (int) version.invokeExact(major, minor));
      return new int[] {major.get(JAVA_INT, 0), minor.get(JAVA_INT, 0)};
    }
  }

  /**
   * Compiles {@code source} (named {@code name} in diagnostics) with {@code options} and returns the first output
   * that is there. A compile error throws a {@link NativeException} whose message holds the options and the log.
   */
  public byte[] compile(String source, String name, String... options) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment programCell = arena.allocate(ADDRESS);
      calls.call(prefix + "CreateProgram", () -> (int) createProgram.invokeExact(programCell, arena.allocateFrom(source), arena.allocateFrom(name), 0,
          MemorySegment.NULL, MemorySegment.NULL));
      MemorySegment program = programCell.get(ADDRESS, 0);
      try {
        MemorySegment optionArray = arena.allocate(ADDRESS, Math.max(options.length, 1));
        for (int i = 0; i < options.length; i++) optionArray.setAtIndex(ADDRESS, i, arena.allocateFrom(options[i]));
        int rc = calls.invoke(() -> (int) compileProgram.invokeExact(program, options.length, optionArray));
        if (rc != success) {
          String function = prefix + "CompileProgram";
          String errorName = errorString(rc);
          throw new NativeException(prefix, function, rc, errorName, function + " failed for " + name + ": " + errorName
              + " (options " + String.join(" ", options) + ")\n" + log(program));
        }
        return readBack(arena, program);
      } finally {
        calls.invoke(() -> (int) destroyProgram.invokeExact(programCell));
      }
    }
  }

  private byte[] readBack(Arena arena, MemorySegment program) {
    MemorySegment size = arena.allocate(JAVA_LONG);
    for (Bound optional : outputs.subList(0, outputs.size() - 1)) {
      int rc = calls.invoke(() -> (int) optional.size().invokeExact(program, size));
      if (rc == success && size.get(JAVA_LONG, 0) > 0) return copyOut(arena, program, optional, size.get(JAVA_LONG, 0));
    }
    Bound last = outputs.getLast();
    calls.call(last.output().sizeFunction(), () -> (int) last.size().invokeExact(program, size));
    return copyOut(arena, program, last, size.get(JAVA_LONG, 0));
  }

  private byte[] copyOut(Arena arena, MemorySegment program, Bound output, long bytes) {
    MemorySegment out = arena.allocate(Math.max(bytes, 1));
    calls.call(output.output().getFunction(), () -> (int) output.get().invokeExact(program, out));
    return out.asSlice(0, bytes).toArray(JAVA_BYTE);
  }

  /** {@code <prefix>GetErrorString}: the library's name for a result code (e.g. {@code NVRTC_ERROR_COMPILATION}). */
  public String errorString(int code) {
    return StatusCalls.text(getErrorString, code, prefix + "Result");
  }

  private String log(MemorySegment program) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment size = arena.allocate(JAVA_LONG);
      if (calls.invoke(() -> (int) logSize.invokeExact(program, size)) != success) return "(no compile log)";
      // One zeroed byte more than the size: ROCm 5.2's hiprtc counts no terminating NUL in it (NVRTC does).
      MemorySegment text = arena.allocate(size.get(JAVA_LONG, 0) + 1);
      if (calls.invoke(() -> (int) log.invokeExact(program, text)) != success) return "(no compile log)";
      return text.getString(0);
    }
  }
}
