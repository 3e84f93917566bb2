package org.mori4j.natives.verbs;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemoryLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.AbiProbe;

/**
 * The verbs layouts and constants agree with the real {@code <infiniband/verbs.h>} (rdma-core 44 in CI), and
 * the libc structs and constants of waiting on a completion channel ({@link LibcFds}: {@code struct pollfd},
 * {@code struct timespec}, {@code POLL*}, {@code EFD_*}, {@code F_*}, {@code O_NONBLOCK}) with glibc's
 * headers: every size, field offset, field size and constant value, all differences listed in one failure.
 */
class VerbsAbiConformanceTest {

  static List<MemoryLayout> layouts() {
    List<MemoryLayout> all = new ArrayList<>(VerbsLayouts.ALL);
    all.addAll(WorkRequestLayouts.ALL);
    all.addAll(LibcFds.ALL);
    return all;
  }

  @Test
  void everyLayoutAndConstantMatchesTheHeader() {
    Map<String, Long> probe = AbiProbe.compileAndRun("/abi/verbs_probe.c");
    AbiProbe.assumeAvailable(probe != null, AbiProbe.lastFailure);

    LayoutConformance conformance =
        new LayoutConformance(probe, layouts(), List.of(VerbsConstants.class, Errno.class, LibcFds.class));
    List<String> mismatches = conformance.mismatches();

    assertTrue(mismatches.isEmpty(), mismatches.size() + " ABI mismatch(es) against <infiniband/verbs.h> and glibc:\n  "
        + String.join("\n  ", mismatches));
    assertTrue(conformance.checked() > 700, "the probe compared only " + conformance.checked() + " numbers");
  }
}
