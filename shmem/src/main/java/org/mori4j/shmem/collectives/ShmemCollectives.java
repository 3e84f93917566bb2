package org.mori4j.shmem.collectives;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.KernelArgs;
import org.mori4j.shmem.GpuStates;
import org.mori4j.shmem.Shmem;

/**
 * Collectives over the symmetric heap of a {@link Shmem} group, as GPU kernels that use the shmem device
 * library ({@code kernels/collectives.cu}): in-place all-reduce (sum of bf16, fp16 or fp32, accumulated in fp32
 * in PE order, so every PE gets the same bits), broadcast and all-gather. Every call is collective: all PEs make
 * the same calls in the same order with the same arguments, each on a stream of its own GPU, and a call returns
 * once its kernel is queued. Calls of one PE must be ordered (one stream, or streams the caller orders): each
 * kernel starts after the PE's previous collective has finished. The buffer must be symmetric heap memory
 * ({@link Shmem#malloc}). Kernel A ({@link AllReduceAlgorithm#P2P_READ}), broadcast and all-gather reach the
 * peers' copies through their heap mappings and need a direct (P2P) path to every PE; kernel B
 * ({@link AllReduceAlgorithm#PUT_SIGNAL}) also runs over the device API's GPU-initiated endpoints, so a group
 * where some peer has no direct path (another host, {@code MORI_DISABLE_P2P}) all-reduces with kernel B.
 *
 * <p>It owns, in the symmetric heap, the signal words of the kernels' barriers and the scratch area of the
 * put-and-signal all-reduce, and the compiled module; {@link #create} and {@link #close} are collective.
 * All-reduce picks its kernel by size ({@link AllReduceAlgorithm#AUTO}) or takes the one it is told.
 */
public final class ShmemCollectives implements AutoCloseable {
  /** The kernels' source, compiled with the device library. */
  public static final String SOURCE_RESOURCE = "/org/mori4j/shmem/kernels/collectives.cu";
  /** {@code MORI4J_COLL_THREADS}: threads per block of every kernel (its launch bound). */
  static final int THREADS = 512;
  /** {@code MORI4J_COLL_MAX_BLOCKS}: blocks the signal area has slots for. */
  static final int MAX_BLOCKS = 256;
  /** {@code MORI4J_COLL_PHASES}: start, end, and kernel B's chunk signals. */
  static final int PHASES = 3;
  /** Bytes of signal words: one 8-byte slot per phase, block and source PE. */
  static final long SIGNAL_BYTES = (long) PHASES * MAX_BLOCKS * GpuStates.MAX_PES * 8;
  /** Longs each PE publishes at create (its block limit and settings), so that all PEs agree. */
  static final int AGREEMENT_LONGS = 4;
  /** Kernel B's chunk signals carry the chunk's index in their low 24 bits. */
  static final long MAX_CHUNKS_PER_BLOCK = (1L << 24) - 2;
  static final long MIN_CHUNK_BYTES = 8 << 10;
  static final long MAX_CHUNK_BYTES = 256 << 10;

  /**
   * What a group of collectives is made with; every PE must pass the same.
   *
   * @param putScratchBytes  bytes of kernel B's scratch slot per other PE (the largest message it takes); 0 leaves
   *                         kernel B out and saves (n - 1) times that much heap
   * @param putSignalMaxBytes with {@link AllReduceAlgorithm#AUTO}: messages up to this many bytes use kernel B,
   *                          larger ones kernel A (0: always kernel A)
   * @param maxBlocks        blocks per kernel, at most {@value #MAX_BLOCKS}; 0 picks the GPU's SM count divided by
   *                         the PEs that share it (all PEs' kernels must fit the GPU at once), the smallest over
   *                         all PEs
   */
  public record Settings(long putScratchBytes, long putSignalMaxBytes, int maxBlocks) {
    public Settings {
      if (putScratchBytes < 0 || putScratchBytes % 256 != 0)
        throw new IllegalArgumentException("putScratchBytes must be a non-negative multiple of 256: " + putScratchBytes);
      if (putSignalMaxBytes < 0) throw new IllegalArgumentException("putSignalMaxBytes must not be negative: " + putSignalMaxBytes);
      if (putSignalMaxBytes > putScratchBytes)
        throw new IllegalArgumentException("putSignalMaxBytes " + putSignalMaxBytes + " exceeds the scratch slot of " + putScratchBytes + " bytes");
      if (maxBlocks < 0 || maxBlocks > MAX_BLOCKS) throw new IllegalArgumentException("maxBlocks must be in [0, " + MAX_BLOCKS + "]: " + maxBlocks);
    }

    /** 64 MiB of scratch per other PE; the size split between the kernels as measured (see the README). */
    public static Settings defaults() {
      return new Settings(64L << 20, DEFAULT_PUT_SIGNAL_MAX_BYTES, 0);
    }
  }

  /**
   * With AUTO, kernel B up to this size. Measured with shmem-bench (bf16, p50 of 500 calls) on 1x H100 with two
   * PEs sharing the GPU (bench/results/20261124T1126Z-*-shmem-1xh100): B was 1-9 us faster from 14 KiB to
   * 448 KiB (except 28 KiB), A equal at 896 KiB and faster from 1 MiB (64 MiB: 133 us against 305 us). Two
   * GPUs over NVLink have not been measured yet; measure there and move this if the crossing moves.
   */
  static final long DEFAULT_PUT_SIGNAL_MAX_BYTES = 512L << 10;

  private final Shmem shmem;
  private final GpuRuntime gpu;
  private final Settings settings;
  private final int n;
  private final int me;
  private final int maxBlocks;
  private final long control;
  private final long scratch;
  private final GpuModule module;
  /** Every peer reached through a mapping. */
  private final boolean direct;
  private long epoch;
  private boolean closed;

  ShmemCollectives(Shmem shmem, Settings settings, int maxBlocks, long control, long scratch, GpuModule module) {
    this.shmem = shmem;
    this.gpu = shmem.gpu();
    this.settings = settings;
    this.n = shmem.nPes();
    this.me = shmem.myPe();
    this.maxBlocks = maxBlocks;
    this.control = control;
    this.scratch = scratch;
    this.module = module;
    this.direct = allDirect(shmem);
  }

  /** {@link #create(Shmem, Settings)} with {@link Settings#defaults()}. */
  public static ShmemCollectives create(Shmem shmem) {
    return create(shmem, Settings.defaults());
  }

  /**
   * Collective: allocates the signal words (and kernel B's scratch) in the symmetric heap, makes the PEs agree on
   * the grid size and settings, and compiles the kernels for this PE's GPU. Throws on every PE alike when the PEs
   * passed different settings. Peers without a direct path are allowed (kernel B reaches them through
   * endpoints); such a group needs kernel B's scratch ({@code putScratchBytes > 0}).
   */
  public static ShmemCollectives create(Shmem shmem, Settings settings) {
    return CollectivesSetup.create(shmem, settings);
  }

  /** Every kernel of collectives.cu and the argument count of its no-op launch. */
  static final java.util.Map<String, Integer> KERNELS = java.util.Map.of("mori4j_allreduce_p2p_bf16", 4, "mori4j_allreduce_p2p_fp16", 4,
      "mori4j_allreduce_p2p_fp32", 4, "mori4j_allreduce_put_bf16", 7, "mori4j_allreduce_put_fp16", 7, "mori4j_allreduce_put_fp32", 7,
      "mori4j_broadcast_bytes", 5, "mori4j_allgather_bytes", 4);

  /**
   * Launches each kernel once with all-zero arguments (which its code treats as "nothing to do") and waits. CUDA
   * loads a module's kernels lazily, at their first launch, and a load may wait until the kernels running on
   * the device have finished: a PE whose kernel spins in a barrier for a PE that is still loading the same
   * kernel (two PEs on one GPU in one process, say) would wait for ever. Loading everything first avoids that.
   * Every kernel in {@code kernels} must return at once when its arguments are all zero.
   */
  public static void preload(Shmem shmem, GpuModule module, java.util.Map<String, Integer> kernels) {
    GpuRuntime gpu = shmem.gpu();
    GpuStream stream = gpu.createStream(shmem.device());
    try {
      for (var k : kernels.entrySet()) {
        KernelArgs zeros = KernelArgs.of();
        for (int i = 0; i < k.getValue(); i++) zeros.i64(0);
        gpu.launch(module.function(k.getKey()), Dim3.of(1), Dim3.of(THREADS), 0, stream, zeros);
      }
      stream.synchronize();
    } finally {
      stream.close();
    }
  }

  /** The kernels' source text. */
  public static String source() {
    try (InputStream in = ShmemCollectives.class.getResourceAsStream(SOURCE_RESOURCE)) {
      if (in == null) throw new IllegalStateException("resource " + SOURCE_RESOURCE + " is missing from the class path");
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Whether every peer's heap is mapped here (else some are reached through GPU-initiated endpoints). */
  static boolean allDirect(Shmem shmem) {
    for (int p = 0; p < shmem.nPes(); p++) if (!shmem.hasDirectPath(p)) return false;
    return true;
  }

  /** Blocks per kernel that all PEs agreed on. */
  public int maxBlocks() {
    return maxBlocks;
  }

  public Settings settings() {
    return settings;
  }

  /** The kernel {@link AllReduceAlgorithm#AUTO} runs for a message of {@code bytes}. */
  public AllReduceAlgorithm allReduceAlgorithmFor(long bytes) {
    if (!direct) return AllReduceAlgorithm.PUT_SIGNAL; // kernel A needs P2P mappings of every peer
    return scratch != 0 && bytes <= settings.putSignalMaxBytes() ? AllReduceAlgorithm.PUT_SIGNAL : AllReduceAlgorithm.P2P_READ;
  }

  /** {@link #allReduce(long, long, ShmemDataType, ShmemReduceOp, GpuStream, AllReduceAlgorithm)} with the kernel picked by size. */
  public void allReduce(long buffer, long count, ShmemDataType type, ShmemReduceOp op, GpuStream stream) {
    allReduce(buffer, count, type, op, stream, AllReduceAlgorithm.AUTO);
  }

  /**
   * In-place all-reduce of {@code count} elements of {@code type} at {@code buffer} (symmetric heap memory of this
   * PE): afterwards every PE's buffer holds the element-wise sum over all PEs, accumulated in fp32 in PE order and
   * rounded once to {@code type}. Queued on {@code stream}; {@code count} 0 queues nothing.
   */
  public synchronized void allReduce(long buffer, long count, ShmemDataType type, ShmemReduceOp op, GpuStream stream, AllReduceAlgorithm algorithm) {
    checkOpen();
    if (type == null || !type.reducible())
      throw new IllegalArgumentException("allReduce: type " + type + " is not supported; all-reduce takes BFLOAT16, FLOAT16 or FLOAT32");
    if (op == null || !op.supported()) throw new IllegalArgumentException("allReduce: op " + op + " is not supported; the kernels implement SUM");
    if (algorithm == null) throw new IllegalArgumentException("allReduce: algorithm must not be null");
    long bytes = bytes("allReduce", count, type);
    checkStream("allReduce", stream);
    checkBuffer("allReduce", buffer, bytes, type);
    if (count == 0) return;
    AllReduceAlgorithm use = algorithm == AllReduceAlgorithm.AUTO ? allReduceAlgorithmFor(bytes) : algorithm;
    if (use == AllReduceAlgorithm.P2P_READ && !direct)
      throw new IllegalArgumentException("allReduce: P2P_READ reads the peers' buffers through P2P mappings, and PE " + me + " has no direct path to "
          + "some peer (another host, or MORI_DISABLE_P2P); use PUT_SIGNAL or AUTO, which run over the GPU-initiated endpoints");
    long e = ++epoch;
    if (use == AllReduceAlgorithm.PUT_SIGNAL) {
      if (scratch == 0 || bytes > settings.putScratchBytes())
        throw new IllegalArgumentException("allReduce: PUT_SIGNAL needs a scratch slot of " + bytes + " bytes per peer; these collectives have "
            + (scratch == 0 ? "none" : settings.putScratchBytes() + " bytes") + " (Settings.putScratchBytes)");
      long chunkBytes = chunkBytes(bytes, maxBlocks);
      long chunks = (bytes + chunkBytes - 1) / chunkBytes;
      int blocks = (int) Math.min(maxBlocks, chunks);
      gpu.launch(module.function("mori4j_allreduce_put_" + type.kernelSuffix()), Dim3.of(blocks), Dim3.of(THREADS), 0, stream,
          KernelArgs.of().pointer(buffer).pointer(scratch).i64(count).i64(settings.putScratchBytes() / type.bytes()).i64(chunkBytes / type.bytes())
              .pointer(control).i64(e));
    } else {
      long units = buffer % 16 == 0 ? ceilDiv(count * type.bytes() / 16, n) : ceilDiv(count, n);
      gpu.launch(module.function("mori4j_allreduce_p2p_" + type.kernelSuffix()), Dim3.of(blocks(units)), Dim3.of(THREADS), 0, stream,
          KernelArgs.of().pointer(buffer).i64(count).pointer(control).i64(e));
    }
  }

  /**
   * Copies {@code count} elements of {@code type} at {@code buffer} on PE {@code root} into {@code buffer} of
   * every other PE. The root's kernel ends once every PE has read its data.
   */
  public synchronized void broadcast(long buffer, long count, ShmemDataType type, int root, GpuStream stream) {
    checkOpen();
    if (type == null) throw new IllegalArgumentException("broadcast: type must not be null");
    if (root < 0 || root >= n) throw new IllegalArgumentException("broadcast: root " + root + " is out of range 0.." + (n - 1));
    requireDirect("broadcast");
    long bytes = bytes("broadcast", count, type);
    checkStream("broadcast", stream);
    checkBuffer("broadcast", buffer, bytes, type);
    if (count == 0) return;
    long e = ++epoch;
    gpu.launch(module.function("mori4j_broadcast_bytes"), Dim3.of(blocks(ceilDiv(bytes, 16))), Dim3.of(THREADS), 0, stream,
        KernelArgs.of().pointer(buffer).i64(bytes).i32(root).pointer(control).i64(e));
  }

  /**
   * All-gather in place: {@code buffer} holds {@code nPes * countPerPe} elements of {@code type}, PE p's own
   * contribution at element {@code p * countPerPe}; afterwards every PE's buffer holds every PE's contribution.
   */
  public synchronized void allGather(long buffer, long countPerPe, ShmemDataType type, GpuStream stream) {
    checkOpen();
    if (type == null) throw new IllegalArgumentException("allGather: type must not be null");
    requireDirect("allGather");
    long slice = bytes("allGather", countPerPe, type);
    long bytes;
    try {
      bytes = Math.multiplyExact(slice, (long) n);
    } catch (ArithmeticException ex) {
      throw new IllegalArgumentException("allGather: countPerPe " + countPerPe + " x " + n + " PEs overflows", ex);
    }
    checkStream("allGather", stream);
    checkBuffer("allGather", buffer, bytes, type);
    if (countPerPe == 0) return;
    long e = ++epoch;
    gpu.launch(module.function("mori4j_allgather_bytes"), Dim3.of(blocks(ceilDiv(slice, 16))), Dim3.of(THREADS), 0, stream,
        KernelArgs.of().pointer(buffer).i64(slice).pointer(control).i64(e));
  }

  /** Blocks for {@code units} pieces of work of one thread each (16-byte vectors, or elements). */
  private int blocks(long units) {
    return (int) Math.clamp(ceilDiv(units, THREADS), 1, maxBlocks);
  }

  /** Kernel B's chunk: the message over the grid, 16-byte multiples between 8 KiB and 256 KiB. */
  static long chunkBytes(long bytes, int blocks) {
    long per = ceilDiv(bytes, blocks);
    long chunk = Math.clamp(ceilDiv(per, 4096) * 4096, MIN_CHUNK_BYTES, MAX_CHUNK_BYTES);
    if (ceilDiv(ceilDiv(bytes, chunk), blocks) > MAX_CHUNKS_PER_BLOCK) throw new IllegalArgumentException("message of " + bytes + " bytes has too many chunks");
    return chunk;
  }

  private static long ceilDiv(long a, long b) {
    return (a + b - 1) / b;
  }

  private static long bytes(String op, long count, ShmemDataType type) {
    if (count < 0) throw new IllegalArgumentException(op + ": count must not be negative: " + count);
    try {
      return Math.multiplyExact(count, (long) type.bytes());
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(op + ": count " + count + " x " + type.bytes() + " bytes overflows", e);
    }
  }

  private void checkStream(String op, GpuStream stream) {
    if (stream == null) throw new IllegalArgumentException(op + ": stream must not be null");
    if (stream.device() != shmem.device())
      throw new IllegalArgumentException(op + ": the stream is on GPU " + stream.device() + ", this PE (" + me + ") on GPU " + shmem.device());
  }

  /** The buffer must be this PE's symmetric heap memory, aligned to its element, clear of this object's own memory. */
  private void checkBuffer(String op, long buffer, long bytes, ShmemDataType type) {
    long base = shmem.heapBase(), end = base + shmem.heapSize();
    if (buffer < base || buffer > end || bytes > end - buffer)
      throw new IllegalArgumentException(String.format(Locale.ROOT, "%s: buffer 0x%x + %d bytes is not inside PE %d's symmetric heap [0x%x, 0x%x); "
          + "allocate it with Shmem.malloc", op, buffer, bytes, me, base, end));
    if (buffer % type.bytes() != 0)
      throw new IllegalArgumentException(String.format(Locale.ROOT, "%s: buffer 0x%x is not aligned to its %s elements (%d bytes)", op, buffer, type,
          type.bytes()));
    long controlEnd = control + SIGNAL_BYTES + (long) GpuStates.MAX_PES * AGREEMENT_LONGS * 8;
    if (bytes > 0 && buffer < controlEnd && buffer + bytes > control)
      throw new IllegalArgumentException(String.format(Locale.ROOT, "%s: buffer 0x%x + %d bytes overlaps the collectives' signal words at 0x%x", op, buffer, bytes, control));
    long scratchEnd = scratch + settings.putScratchBytes() * (n - 1);
    if (scratch != 0 && bytes > 0 && buffer < scratchEnd && buffer + bytes > scratch)
      throw new IllegalArgumentException(String.format(Locale.ROOT, "%s: buffer 0x%x + %d bytes overlaps the collectives' scratch area at 0x%x", op, buffer, bytes, scratch));
  }

  /** Broadcast and all-gather copy through the peers' mappings; over endpoints they are not written yet. */
  private void requireDirect(String op) {
    if (!direct)
      throw new IllegalStateException(op + " needs a direct (P2P) path to every PE, and PE " + me + " has none to some peer (another host, or "
          + "MORI_DISABLE_P2P); only all-reduce (kernel B) runs over the GPU-initiated endpoints so far");
  }

  private void checkOpen() {
    if (closed) throw new IllegalStateException("these ShmemCollectives are closed");
    if (shmem.isFinalized()) throw new IllegalStateException("the shmem PE " + me + " of these collectives is finalized");
  }

  /**
   * Collective: frees the signal words and the scratch area and unloads the kernels. Synchronize the streams of
   * the calls first: a kernel still running would use freed memory. Idempotent.
   */
  @Override
  public synchronized void close() {
    if (closed) return;
    closed = true;
    try {
      module.close();
    } finally {
      if (!shmem.isFinalized()) {
        if (scratch != 0) shmem.free(scratch);
        shmem.free(control);
      }
    }
  }
}
