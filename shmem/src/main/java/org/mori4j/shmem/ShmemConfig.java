package org.mori4j.shmem;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * The settings of one PE, read once from {@code mori4j.shmem} in {@code reference.conf} (where MORI's
 * environment variables {@code MORI_SHMEM_HEAP_SIZE}, {@code MORI_DISABLE_P2P} and {@code MORI_RDMA_DEVICES}
 * land) or built in code for tests. {@link #parseSize} and {@link #parseEnabled} read values the way MORI does,
 * so a value that works for MORI means the same here.
 *
 * @param heapSize bytes of every PE's symmetric heap
 * @param disableP2p no direct peer mappings at all ({@code MORI_DISABLE_P2P})
 * @param rdmaDevices MORI's NIC selection, kept for the RDMA path
 * @param gpuRuntime {@code auto}, {@code cuda}, {@code hip}, or a name registered with {@code GpuRuntimes.register}
 * @param device GPU ordinal, or -1 for rank modulo the visible GPUs
 * @param bootstrapHost where rank 0 listens for the unique-id bootstrap
 * @param timeout longest wait of a collective host call
 * @param deviceWaitTimeout longest device-side wait before the kernel traps; zero waits for ever
 * @param clusterRole the role of the cluster members that form the PE group
 * @param numQpPerPe GPU-initiated endpoints per peer without a direct path (1..{@link GpuStates#MAX_QP_PER_PE})
 */
public record ShmemConfig(long heapSize, boolean disableP2p, String rdmaDevices, String gpuRuntime, int device, String bootstrapHost,
                          Duration timeout, Duration deviceWaitTimeout, String clusterRole, int numQpPerPe) {
  /** The smallest heap: the library's own words take the first {@link SymmetricHeap#INTERNAL_BYTES}. */
  public static final long MIN_HEAP_SIZE = 1 << 20;

  public ShmemConfig {
    if (heapSize < MIN_HEAP_SIZE) throw new IllegalArgumentException("heap size " + heapSize + " is below the minimum " + MIN_HEAP_SIZE + " bytes");
    Objects.requireNonNull(rdmaDevices, "rdmaDevices");
    Objects.requireNonNull(gpuRuntime, "gpuRuntime");
    if (device < -1) throw new IllegalArgumentException("device " + device + " is not a GPU ordinal or -1");
    if (bootstrapHost == null || bootstrapHost.isBlank()) throw new IllegalArgumentException("bootstrap host '" + bootstrapHost + "' is empty");
    if (timeout == null || timeout.isNegative() || timeout.isZero()) throw new IllegalArgumentException("timeout " + timeout + " must be positive");
    if (deviceWaitTimeout == null || deviceWaitTimeout.isNegative())
      throw new IllegalArgumentException("device wait timeout " + deviceWaitTimeout + " must be zero or positive");
    Objects.requireNonNull(clusterRole, "clusterRole");
    if (numQpPerPe < 1 || numQpPerPe > GpuStates.MAX_QP_PER_PE)
      throw new IllegalArgumentException("num-qp-per-pe " + numQpPerPe + " is out of range 1.." + GpuStates.MAX_QP_PER_PE);
  }

  /** The settings without {@code numQpPerPe} (1 endpoint per peer). */
  public ShmemConfig(long heapSize, boolean disableP2p, String rdmaDevices, String gpuRuntime, int device, String bootstrapHost, Duration timeout,
                     Duration deviceWaitTimeout, String clusterRole) {
    this(heapSize, disableP2p, rdmaDevices, gpuRuntime, device, bootstrapHost, timeout, deviceWaitTimeout, clusterRole, 1);
  }

  public ShmemConfig withNumQpPerPe(int n) {
    return new ShmemConfig(heapSize, disableP2p, rdmaDevices, gpuRuntime, device, bootstrapHost, timeout, deviceWaitTimeout, clusterRole, n);
  }

  /** The settings of {@code ConfigFactory.load()} (reference.conf with the environment). */
  public static ShmemConfig load() {
    return from(ConfigFactory.load());
  }

  /** The settings under {@code mori4j.shmem} of {@code config}. */
  public static ShmemConfig from(Config config) {
    Config c = config.getConfig("mori4j.shmem");
    return new ShmemConfig(parseSize(c.getString("heap-size"), "mori4j.shmem.heap-size (MORI_SHMEM_HEAP_SIZE)"),
        parseEnabled(c.getString("disable-p2p")), c.getString("rdma-devices"), c.getString("gpu-runtime"), c.getInt("device"),
        c.getString("bootstrap-host"), c.getDuration("timeout"), c.getDuration("device-wait-timeout"), c.getString("cluster-role"),
        c.getInt("num-qp-per-pe"));
  }

  public ShmemConfig withHeapSize(long bytes) {
    return new ShmemConfig(bytes, disableP2p, rdmaDevices, gpuRuntime, device, bootstrapHost, timeout, deviceWaitTimeout, clusterRole, numQpPerPe);
  }

  public ShmemConfig withDisableP2p(boolean disable) {
    return new ShmemConfig(heapSize, disable, rdmaDevices, gpuRuntime, device, bootstrapHost, timeout, deviceWaitTimeout, clusterRole, numQpPerPe);
  }

  public ShmemConfig withGpuRuntime(String runtime) {
    return new ShmemConfig(heapSize, disableP2p, rdmaDevices, runtime, device, bootstrapHost, timeout, deviceWaitTimeout, clusterRole, numQpPerPe);
  }

  public ShmemConfig withDevice(int ordinal) {
    return new ShmemConfig(heapSize, disableP2p, rdmaDevices, gpuRuntime, ordinal, bootstrapHost, timeout, deviceWaitTimeout, clusterRole, numQpPerPe);
  }

  public ShmemConfig withTimeout(Duration d) {
    return new ShmemConfig(heapSize, disableP2p, rdmaDevices, gpuRuntime, device, bootstrapHost, d, deviceWaitTimeout, clusterRole, numQpPerPe);
  }

  public ShmemConfig withDeviceWaitTimeout(Duration d) {
    return new ShmemConfig(heapSize, disableP2p, rdmaDevices, gpuRuntime, device, bootstrapHost, timeout, d, clusterRole, numQpPerPe);
  }

  public ShmemConfig withBootstrapHost(String host) {
    return new ShmemConfig(heapSize, disableP2p, rdmaDevices, gpuRuntime, device, host, timeout, deviceWaitTimeout, clusterRole, numQpPerPe);
  }

  public ShmemConfig withClusterRole(String role) {
    return new ShmemConfig(heapSize, disableP2p, rdmaDevices, gpuRuntime, device, bootstrapHost, timeout, deviceWaitTimeout, role, numQpPerPe);
  }

  /**
   * A size in MORI's syntax: digits with an optional suffix {@code K}, {@code M}, {@code G} (also {@code KB},
   * {@code MB}, {@code GB} and {@code KiB}, {@code MiB}, {@code GiB}, any case), every one a power of 1024.
   * {@code what} names the setting in the error for anything else (MORI's parser would throw too).
   */
  public static long parseSize(String text, String what) {
    String s = text == null ? "" : text.trim();
    String lower = s.toLowerCase(Locale.ROOT);
    long multiplier = 1;
    String digits = s;
    for (String[] suffix : new String[][] {{"kib", "10"}, {"mib", "20"}, {"gib", "30"}, {"kb", "10"}, {"mb", "20"}, {"gb", "30"},
        {"k", "10"}, {"m", "20"}, {"g", "30"}}) {
      if (lower.endsWith(suffix[0])) {
        multiplier = 1L << Integer.parseInt(suffix[1]);
        digits = s.substring(0, s.length() - suffix[0].length());
        break;
      }
    }
    if (digits.isEmpty() || !digits.chars().allMatch(Character::isDigit) || digits.length() > 18)
      throw new IllegalArgumentException(what + " '" + text + "' is not a size (digits with K, M, G, KB, MB, GB, KiB, MiB or GiB, e.g. 6G)");
    long n = Long.parseLong(digits);
    if (n > Long.MAX_VALUE / multiplier) throw new IllegalArgumentException(what + " '" + text + "' is too large");
    return n * multiplier;
  }

  /** MORI's reading of a switch: unset or empty, {@code 0}, {@code false}, {@code off}, {@code no} are off; anything else is on. */
  public static boolean parseEnabled(String value) {
    if (value == null || value.isBlank()) return false;
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "0", "false", "off", "no" -> false;
      default -> true;
    };
  }
}
