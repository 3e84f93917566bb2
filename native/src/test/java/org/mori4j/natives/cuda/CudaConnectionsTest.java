package org.mori4j.natives.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.junit.jupiter.api.Test;

class CudaConnectionsTest {
  @Test
  void anUnsetVariableIsRaisedInTheCEnvironmentThatCuInitReads() throws Throwable {
    assumeTrue(System.getenv(CudaConnections.VARIABLE) == null, CudaConnections.VARIABLE + " is set in this environment: kept as it is");
    assertEquals("32", CudaConnections.apply().orElseThrow());
    Linker linker = Linker.nativeLinker();
    MethodHandle getenv = linker.downcallHandle(linker.defaultLookup().find("getenv").orElseThrow(), FunctionDescriptor.of(ADDRESS, ADDRESS));
    try (Arena a = Arena.ofConfined()) {
      MemorySegment v = (MemorySegment) getenv.invokeExact(a.allocateFrom(CudaConnections.VARIABLE));
      assertEquals("32", v.reinterpret(16).getString(0));
    }
    // a second call (a second runtime opened) keeps what is there
    assertEquals("32", CudaConnections.apply().orElse("32"));
  }
}
