package org.mori4j.bench.kv;

import java.util.ArrayList;
import java.util.List;
import org.mori4j.natives.gpu.GpuRuntime;

/**
 * Which prefill engine pushes to which decode engine in a kv-bench run of several pairs (issue 16, item 3): over
 * XGMI pair {@code i} is {@code --prefill-gpus[i] -> --decode-gpus[i]}, so both lists must have the same length (a
 * run with fewer decode than prefill GPUs is refused rather than given a many-to-one mapping of its own: the
 * figures would then mix two kinds of contention); over TCP {@code --pairs N} pairs of CPU-memory engines. A
 * device may repeat in the lists (several engines on one GPU, so that the run fits one GPU); {@link #sharesDevice}
 * says so, and such figures say nothing about NVLink/XGMI between GPUs.
 */
record KvPairs(List<Pair> pairs, boolean xgmi) {
  /** Most pairs one run starts (each has two engines, one JVM for its decode side unless single-process). */
  static final int MAX_PAIRS = 16;

  /** Pair {@code index}: prefill engine on {@code prefill} to decode engine on {@code decode} (devices; -1 over TCP). */
  record Pair(int index, int prefill, int decode) {
    String route() {
      return prefill < 0 ? "prefill " + index + " -> decode " + index + " (CPU)" : "GPU" + prefill + " -> GPU" + decode;
    }
  }

  int size() {
    return pairs.size();
  }

  /**
   * Whether a GPU carries two engines of one side (it repeats in the prefill or in the decode list) or a pair stays
   * within one GPU: then copies share a device's memory bandwidth instead of using the links between GPUs. GPU0 ->
   * GPU1 and GPU1 -> GPU0 at once is not sharing: each GPU sends once and receives once, as in a 4-GPU run.
   */
  boolean sharesDevice() {
    if (!xgmi) return false;
    List<Integer> p = pairs.stream().map(Pair::prefill).toList(), d = pairs.stream().map(Pair::decode).toList();
    return p.stream().distinct().count() < p.size() || d.stream().distinct().count() < d.size() || pairs.stream().anyMatch(x -> x.prefill == x.decode);
  }

  /**
   * The pairs the options ask for, or null for a run of one pair the old way (no list and no {@code --pairs}).
   * Throws {@link IllegalArgumentException} naming the option and value when they do not fit together.
   */
  static KvPairs of(String backend, String prefillGpus, String decodeGpus, Integer pairs) {
    boolean xgmi = backend.equals("xgmi");
    if (prefillGpus == null && decodeGpus == null) {
      if (pairs == null) return null;
      if (pairs < 1 || pairs > MAX_PAIRS) throw new IllegalArgumentException("--pairs must be in 1.." + MAX_PAIRS + ": " + pairs);
      if (xgmi) throw new IllegalArgumentException("--pairs " + pairs + " with --backend xgmi: name the devices with --prefill-gpus and --decode-gpus instead");
      List<Pair> out = new ArrayList<>();
      for (int i = 0; i < pairs; i++) out.add(new Pair(i, -1, -1));
      return new KvPairs(List.copyOf(out), false);
    }
    if (!xgmi) throw new IllegalArgumentException("--prefill-gpus and --decode-gpus need --backend xgmi (over tcp: --pairs N): " + backend);
    if (prefillGpus == null || decodeGpus == null)
      throw new IllegalArgumentException(prefillGpus == null ? "--decode-gpus " + decodeGpus + " needs --prefill-gpus as well"
          : "--prefill-gpus " + prefillGpus + " needs --decode-gpus as well");
    int[] p = devices("--prefill-gpus", prefillGpus), d = devices("--decode-gpus", decodeGpus);
    if (p.length != d.length)
      throw new IllegalArgumentException("--prefill-gpus " + prefillGpus + " has " + p.length + " device(s) and --decode-gpus " + decodeGpus + " has " + d.length
          + ": pair i is prefill i -> decode i, so the counts must match (repeat a device to put two engines on it)");
    if (p.length > MAX_PAIRS) throw new IllegalArgumentException("--prefill-gpus " + prefillGpus + ": at most " + MAX_PAIRS + " pairs, not " + p.length);
    if (pairs != null && pairs != p.length)
      throw new IllegalArgumentException("--pairs " + pairs + " but --prefill-gpus " + prefillGpus + " makes " + p.length + " pair(s)");
    List<Pair> out = new ArrayList<>();
    for (int i = 0; i < p.length; i++) out.add(new Pair(i, p[i], d[i]));
    return new KvPairs(List.copyOf(out), true);
  }

  private static int[] devices(String option, String list) {
    String[] f = list.split(",", -1);
    int[] out = new int[f.length];
    for (int i = 0; i < f.length; i++) {
      try {
        out[i] = Integer.parseInt(f[i].trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(option + " '" + list + "': '" + f[i] + "' is not a device index");
      }
      if (out[i] < 0) throw new IllegalArgumentException(option + " " + list + ": device " + out[i] + " is negative");
    }
    return out;
  }

  /** Null when every device exists and every pair of two devices has peer access, else why not, naming the option. */
  String gpuProblem(GpuRuntime gpu) {
    if (!gpu.available()) return "--backend xgmi needs a GPU runtime: " + gpu.version();
    int n = gpu.deviceCount();
    for (Pair p : pairs) {
      if (p.prefill >= n) return "--prefill-gpus: device " + p.prefill + " does not exist; this machine has " + n + " " + gpu.name() + " device(s)";
      if (p.decode >= n) return "--decode-gpus: device " + p.decode + " does not exist; this machine has " + n + " " + gpu.name() + " device(s)";
      if (p.prefill != p.decode && !gpu.canAccessPeer(p.prefill, p.decode))
        return "pair " + p.index + " (" + p.route() + ") needs peer access, which this machine's devices lack (canAccessPeer false)";
    }
    return null;
  }
}
