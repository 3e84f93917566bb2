package org.mori4j.transport.xgmi;

import java.util.List;

/**
 * A batch shape {@link GatherKernelProbe} times: {@code blocks} blocks of {@code blockSize} bytes moved in
 * {@code launches} equal launches (the KV case: one launch per layer tensor), named on the command line.
 */
record ProbeShape(String name, String label, int blocks, long blockSize, int launches) {
  static final List<String> NAMES = List.of("4k", "16k", "kv-layers", "kv-one", "256m");

  static ProbeShape of(String name) {
    return switch (name) {
      case "4k" -> new ProbeShape(name, "4,096 x 4 KiB", 4096, 4096, 1);
      case "16k" -> new ProbeShape(name, "1,024 x 16 KiB", 1024, 16384, 1);
      // Llama-3-70B, 4,096 tokens in 16-token blocks: 80 layers x K and V = 160 tensors of 256 blocks of 32 KiB
      case "kv-layers" -> new ProbeShape(name, "40,960 x 32 KiB in 160 launches of 256", 40960, 32768, 160);
      case "kv-one" -> new ProbeShape(name, "40,960 x 32 KiB in one launch", 40960, 32768, 1);
      case "256m" -> new ProbeShape(name, "1 x 256 MiB", 1, 256L << 20, 1);
      // not in NAMES: a few blocks in several launches, for GatherKernelProbeSmokeTest on the in-memory device
      case "smoke" -> new ProbeShape(name, "64 x 4 KiB in 4 launches (test shape)", 64, 4096, 4);
      default -> throw new IllegalArgumentException("--shapes: unknown '" + name + "' (known: " + String.join(",", NAMES) + ")");
    };
  }

  int perLaunch() {
    return blocks / launches;
  }

  long bytes() {
    return (long) blocks * blockSize;
  }

  /** Timed iterations: {@code base} for batches up to 64 MiB, fewer for bigger ones, at least 20. */
  int iters(int base) {
    return (int) Math.max(20, Math.min(base, base * (64L << 20) / bytes()));
  }
}
