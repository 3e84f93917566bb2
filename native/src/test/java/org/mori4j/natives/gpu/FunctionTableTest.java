package org.mori4j.natives.gpu;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.NativeLibrary;

/** Bindings load on any machine and fail on first use, naming what is missing; kernel arguments are laid out as the driver reads them. */
class FunctionTableTest {

  @Test
  void aMissingLibraryFailsOnFirstCallNamingWhatWasTried() {
    FunctionTable table = new FunctionTable(NativeLibrary.open("nothing", "libmori4j-absent.so.7"));
    MethodHandle h = table.bind("absentCall", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));

    NativeException e = assertThrows(NativeException.class, () -> {
      int ignored = (int) h.invokeExact(1L);
    });
    assertEquals("LIBRARY_NOT_FOUND", e.codeName());
    assertTrue(e.getMessage().contains("libmori4j-absent.so.7"), e.getMessage());
    assertTrue(table.resolved().isEmpty());
  }

  @Test
  void aMissingSymbolFailsOnFirstCallNamingIt() throws Throwable {
    FunctionTable table = new FunctionTable(NativeLibrary.open("c", "libc.so.6"));
    MethodHandle strlen = table.bind("strlen", FunctionDescriptor.of(JAVA_LONG, ADDRESS));
    MethodHandle absent = table.bind("mori4jNoSuchFunction", "mori4jNoSuchFunction_v2", FunctionDescriptor.ofVoid(JAVA_INT));

    try (Arena arena = Arena.ofConfined()) {
      assertEquals(5L, (long) strlen.invokeExact(arena.allocateFrom("hello")));
    }
    NativeException e = assertThrows(NativeException.class, () -> {
      absent.invokeExact(1);
    });
    assertEquals("SYMBOL_NOT_FOUND", e.codeName());
    assertEquals("mori4jNoSuchFunction_v2", e.function());
    assertEquals("mori4jNoSuchFunction_v2", table.symbols().get("mori4jNoSuchFunction"));
  }

  @Test
  void anOlderSymbolIsUsedWhenTheHeadersOneIsAbsent() {
    FunctionTable table = new FunctionTable(NativeLibrary.open("c", "libc.so.6"));
    table.bind("mori4jLength", "mori4jLength_v2", FunctionDescriptor.of(JAVA_LONG, ADDRESS), "strlen");

    assertEquals("mori4jLength_v2", table.symbols().get("mori4jLength"));
    assertEquals("strlen", table.resolved().get("mori4jLength"));
  }

  @Test
  void kernelArgumentsAreOnePointerPerParameterToItsValue() {
    KernelArgs args = KernelArgs.of().pointer(0x7f00_0000_1000L).i32(-2).i64(1L << 40).f32(1.5f).f64(-0.25);
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment params = args.toNative(arena);
      assertEquals(5, args.count());
      assertEquals(0x7f00_0000_1000L, slot(params, 0).get(JAVA_LONG, 0));
      assertEquals(-2, slot(params, 1).get(JAVA_INT, 0));
      assertEquals(1L << 40, slot(params, 2).get(JAVA_LONG, 0));
      assertEquals(1.5f, slot(params, 3).get(java.lang.foreign.ValueLayout.JAVA_FLOAT, 0));
      assertEquals(-0.25, slot(params, 4).get(java.lang.foreign.ValueLayout.JAVA_DOUBLE, 0));
    }
  }

  @Test
  void structArgumentsTakeTheirSizeAtTheirAlignmentBetweenScalars() {
    byte[] table = new byte[520];
    for (int i = 0; i < table.length; i++) table[i] = (byte) i;
    KernelArgs args = KernelArgs.of().i32(7).struct(table, 16).struct(new byte[] {1, 2, 3}, 1).i64(-1);
    assertEquals(4, args.count());
    assertEquals(0, args.offset(0));
    assertEquals(16, args.offset(1), "the struct is placed at its 16-byte alignment after the 8-byte slot");
    assertEquals(536, args.offset(2));
    assertEquals(544, args.offset(3), "the next scalar is 8-byte aligned again");
    assertEquals(552, args.totalBytes());
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment params = args.toNative(arena);
      MemorySegment struct = params.getAtIndex(ADDRESS, 1).reinterpret(520);
      assertEquals(0, struct.address() % 16);
      assertArrayEquals(table, struct.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
      assertArrayEquals(new byte[] {1, 2, 3}, params.getAtIndex(ADDRESS, 2).reinterpret(3).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
      assertEquals(-1L, slot(params, 3).get(JAVA_LONG, 0));
      assertEquals(7, slot(params, 0).get(JAVA_INT, 0));
    }
    assertArrayEquals(table, args.bytes(1));
    assertThrows(IllegalArgumentException.class, () -> KernelArgs.of().struct(new byte[8], 3));
    assertThrows(IllegalArgumentException.class, () -> KernelArgs.of().struct(new byte[0], 8));
    assertThrows(IllegalArgumentException.class, () -> KernelArgs.of().struct(new byte[KernelArgs.MAX_TOTAL_BYTES + 1], 8));
  }

  private static MemorySegment slot(MemorySegment params, int i) {
    return params.getAtIndex(ADDRESS, i).reinterpret(8);
  }
}
