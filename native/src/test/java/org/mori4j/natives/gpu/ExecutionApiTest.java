package org.mori4j.natives.gpu;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mori4j.natives.gpu.ExecutionApi.symbol;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.NativeLibrary;
import org.mori4j.natives.gpu.ExecutionApi.Function;

/**
 * The code CUDA and HIP share, driven through real downcalls without a GPU: libc's {@code abs} stands in for a
 * query, record or destroy (on LP64 its {@code int} argument is the low half of the pointer register, so the
 * "handle" chooses the status code the call returns), and every other function is bound to a symbol libc lacks.
 */
class ExecutionApiTest {
  private static final int NOT_READY = 600;
  private static final StatusCalls CALLS = new StatusCalls("test", 0, code -> "E" + code, code -> "text of " + code);

  /** Every function bound to a symbol libc lacks, except those in {@code toAbs}, which are bound to {@code abs}. */
  private static ExecutionApi onLibc(FunctionTable table, Function... toAbs) {
    List<ExecutionApi.Symbol> symbols = new ArrayList<>();
    for (Function f : Function.values()) {
      boolean abs = List.of(toAbs).contains(f);
      symbols.add(abs ? symbol(f, "test" + f, "abs") : symbol(f, "test" + f, "mori4jAbsent" + f));
    }
    return new ExecutionApi(table, CALLS, new ExecutionApi.Codes(NOT_READY, 1, 0, 2), symbols.toArray(ExecutionApi.Symbol[]::new));
  }

  private static MemorySegment returning(int code) {
    return MemorySegment.ofAddress(code);
  }

  @Test
  void notReadyIsAQueryAnswerAndAnyOtherCodeAFailureNamingTheApi() {
    ExecutionApi api = onLibc(new FunctionTable(NativeLibrary.open("c", "libc.so.6")), Function.STREAM_QUERY, Function.EVENT_QUERY);

    assertTrue(api.streamQuery(returning(0)));
    assertFalse(api.streamQuery(returning(NOT_READY)));
    assertFalse(api.eventQuery(returning(-NOT_READY)), "abs: the code is what the call returns");
    NativeException e = assertThrows(NativeException.class, () -> api.eventQuery(returning(5)));
    assertEquals("testEVENT_QUERY failed: E5 (text of 5)", e.getMessage());
    assertEquals("test", e.library());
    assertEquals("testEVENT_QUERY", e.function());
    assertEquals(5, e.code());
    assertEquals("E5", e.codeName());
  }

  @Test
  void recordAndDestroyCheckTheirCode() {
    ExecutionApi api = onLibc(new FunctionTable(NativeLibrary.open("c", "libc.so.6")), Function.EVENT_RECORD, Function.STREAM_DESTROY);

    api.eventRecord(returning(0), returning(7));
    api.streamDestroy(returning(0));
    assertEquals(NOT_READY, assertThrows(NativeException.class, () -> api.eventRecord(returning(NOT_READY), MemorySegment.NULL)).code(),
        "not ready is an answer only for the queries");
    assertEquals("testSTREAM_DESTROY", assertThrows(NativeException.class, () -> api.streamDestroy(returning(3))).function());
  }

  @Test
  void aMissingSymbolOrLibraryFailsTheFirstCallNotTheBinding() {
    FunctionTable libc = new FunctionTable(NativeLibrary.open("c", "libc.so.6"));
    ExecutionApi api = onLibc(libc);
    NativeException symbol = assertThrows(NativeException.class, () -> api.eventQuery(MemorySegment.NULL));
    assertEquals("SYMBOL_NOT_FOUND", symbol.codeName());
    assertTrue(symbol.getMessage().contains("mori4jAbsentEVENT_QUERY"), symbol.getMessage());
    assertEquals(Function.values().length, libc.symbols().size(), "every function is listed for the ABI tests");

    ExecutionApi absent = onLibc(new FunctionTable(NativeLibrary.open("nothing", "libmori4j-absent.so.3")));
    NativeException library = assertThrows(NativeException.class, () -> absent.streamCreate(0));
    assertEquals("LIBRARY_NOT_FOUND", library.codeName());
    assertTrue(library.getMessage().contains("libmori4j-absent.so.3"), library.getMessage());
  }

  @Test
  void everyFunctionIsNamedExactlyOnce() {
    FunctionTable table = new FunctionTable(NativeLibrary.open("nothing", "libmori4j-absent.so.3"));
    ExecutionApi.Codes codes = new ExecutionApi.Codes(NOT_READY, 1, 0, 2);

    IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
        () -> new ExecutionApi(table, CALLS, codes, symbol(Function.STREAM_CREATE, "a")));
    assertTrue(missing.getMessage().contains("LAUNCH_KERNEL"), missing.getMessage());
    IllegalArgumentException twice = assertThrows(IllegalArgumentException.class,
        () -> new ExecutionApi(table, CALLS, codes, symbol(Function.STREAM_CREATE, "a"), symbol(Function.STREAM_CREATE, "b")));
    assertTrue(twice.getMessage().contains("STREAM_CREATE"), twice.getMessage());
  }

  @Test
  void statusCallsReadOutCellsAndNameFailuresWithOrWithoutADescription() {
    assertEquals(42, CALLS.outInt("fill", out -> {
      out.set(JAVA_INT, 0, 42);
      return 0;
    }));
    assertEquals(1L << 40, CALLS.outLong("fill", out -> {
      out.set(JAVA_LONG, 0, 1L << 40);
      return 0;
    }));
    NativeException e = assertThrows(NativeException.class, () -> CALLS.outFloat("fill", out -> 9));
    assertEquals("fill failed: E9 (text of 9)", e.getMessage());

    StatusCalls nameOnly = new StatusCalls("rtc", 0, code -> "RTC_" + code, null);
    assertEquals("rtcCompile failed: RTC_6", nameOnly.failure(6, "rtcCompile").getMessage());
    assertEquals(6, nameOnly.invoke(() -> 6), "invoke hands the raw code back");
  }

  @Test
  void aNamingFunctionThatCannotBeCalledGivesTheFallback() {
    FunctionTable absent = new FunctionTable(NativeLibrary.open("nothing", "libmori4j-absent.so.3"));
    MethodHandle name = absent.bind("absentGetErrorName", FunctionDescriptor.of(ADDRESS, JAVA_INT));
    assertEquals("absentResult 700", StatusCalls.text(name, 700, "absentResult"));
  }
}
