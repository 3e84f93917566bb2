package org.mori4j.natives.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Raises {@code CUDA_DEVICE_MAX_CONNECTIONS} (the number of hardware queues CUDA spreads a context's streams over;
 * 8 by default) in this process's C environment before {@code cuInit} reads it. With 8 queues, a staging or proxy
 * stream can share the queue of a kernel that spins until the host answers it (GPU-initiated transfers, shmem over
 * the host proxy) and then waits behind that kernel however non-blocking the stream is: a deadlock. A value the
 * user already set is kept; {@code -Dmori4j.cuda.max-connections=N} chooses another (0 leaves the variable alone).
 */
final class CudaConnections {
  private static final Logger log = LoggerFactory.getLogger(CudaConnections.class);
  static final String VARIABLE = "CUDA_DEVICE_MAX_CONNECTIONS";
  static final int DEFAULT = 32;

  private CudaConnections() {}

  /** Sets the variable unless it is set already or disabled; returns the value now in force, if any. */
  static Optional<String> apply() {
    String current = System.getenv(VARIABLE);
    if (current != null) return Optional.of(current);
    int wanted = Integer.getInteger("mori4j.cuda.max-connections", DEFAULT);
    if (wanted <= 0) return Optional.empty();
    if (wanted > 32) throw new IllegalArgumentException("mori4j.cuda.max-connections must be 0..32 (CUDA's range): " + wanted);
    Linker linker = Linker.nativeLinker();
    Optional<MemorySegment> setenv = linker.defaultLookup().find("setenv");
    if (setenv.isEmpty()) {
      log.warn("cannot set {}: no setenv in the C library; GPU-initiated kernels may stall behind shared hardware queues", VARIABLE);
      return Optional.empty();
    }
    MethodHandle h = linker.downcallHandle(setenv.get(), FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    try (Arena a = Arena.ofConfined()) {
      // overwrite = 0: a value another library set meanwhile wins
      int rc = (int) h.invokeExact(a.allocateFrom(VARIABLE), a.allocateFrom(Integer.toString(wanted)), 0);
      if (rc != 0) {
        log.warn("setenv({}) failed with {}", VARIABLE, rc);
        return Optional.empty();
      }
    } catch (Throwable t) {
      throw new IllegalStateException("setenv(" + VARIABLE + ") failed", t);
    }
    log.debug("{}={} set before cuInit", VARIABLE, wanted);
    return Optional.of(Integer.toString(wanted));
  }
}
