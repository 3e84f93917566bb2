package org.mori4j.natives.rdmacm;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemoryLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.AbiProbe;
import org.mori4j.natives.verbs.LayoutConformance;
import org.mori4j.natives.verbs.VerbsLayouts;

/**
 * The CM layouts and constants agree with the real {@code <rdma/rdma_cma.h>} (rdma-core 44 from Debian's
 * librdmacm-dev in CI) and glibc's socket headers: every size, field offset, field size and constant value,
 * all differences listed in one failure. The verbs structs the CM structs embed are checked again here.
 */
class RdmaCmAbiConformanceTest {

  static List<MemoryLayout> layouts() {
    List<MemoryLayout> all = new ArrayList<>(RdmaCmLayouts.ALL);
    all.addAll(List.of(VerbsLayouts.IBV_GID, VerbsLayouts.IBV_GLOBAL_ROUTE, VerbsLayouts.IBV_AH_ATTR));
    return all;
  }

  @Test
  void everyLayoutAndConstantMatchesTheHeader() {
    Map<String, Long> probe = AbiProbe.compileAndRun("/abi/rdmacm_probe.c");
    AbiProbe.assumeAvailable(probe != null, AbiProbe.lastFailure);

    LayoutConformance conformance = new LayoutConformance(probe, layouts(), List.of(RdmaCmConstants.class));
    List<String> mismatches = conformance.mismatches();

    assertTrue(mismatches.isEmpty(), mismatches.size() + " ABI mismatch(es) against <rdma/rdma_cma.h>:\n  "
        + String.join("\n  ", mismatches));
    assertTrue(conformance.checked() > 200, "the probe compared only " + conformance.checked() + " numbers");
    System.out.println("rdmacm ABI: " + conformance.checked() + " numbers agree with <rdma/rdma_cma.h>");
  }
}
