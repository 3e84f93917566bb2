package org.mori4j.io.kv;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The transfers that move blocks {@code srcBlocks[i] -> dstBlocks[i]} of layers {@code [fromLayer, toLayer)} between
 * two caches: one batch per (source buffer, destination buffer) pair, whose entries are runs of slots contiguous on
 * both sides joined into one (so a request whose blocks are consecutive on both sides becomes a handful of large
 * copies, and a scattered one stays one batch: one kernel launch on XGMI, one request on TCP). Everything is checked
 * before any transfer exists: layouts that cannot exchange blocks, block ids out of range, a destination block
 * named twice and an empty or out-of-range layer range throw {@link IllegalArgumentException} naming the value.
 */
public final class KvTransferPlan {
  /** One batch: {@code count} entries of {@code sizes[j]} bytes at {@code srcOffsets[j]} / {@code dstOffsets[j]}. */
  public record Batch(int srcBuffer, int dstBuffer, long[] srcOffsets, long[] dstOffsets, long[] sizes, long bytes) {
    public int count() {
      return sizes.length;
    }
  }

  private final List<Batch> batches;
  private final long bytes;
  private final int transfers;
  private final int blockSlots;

  private KvTransferPlan(List<Batch> batches, int blockSlots) {
    this.batches = List.copyOf(batches);
    long b = 0;
    int t = 0;
    for (Batch x : batches) {
      b += x.bytes;
      t += x.count();
    }
    this.bytes = b;
    this.transfers = t;
    this.blockSlots = blockSlots;
  }

  /** The batches, one per buffer pair, in layer order. */
  public List<Batch> batches() {
    return batches;
  }

  /**
   * Gives every batch's arrays to {@code pool}; only for a plan built with that pool, once its batch call returned
   * (the engine then no longer reads the caller's arrays) and never again after: the plan must not be used any more.
   */
  void release(KvPlanArrays pool) {
    for (Batch b : batches) {
      pool.give(b.srcOffsets);
      pool.give(b.dstOffsets);
      pool.give(b.sizes);
    }
  }

  /** Bytes moved. */
  public long bytes() {
    return bytes;
  }

  /** Entries over every batch after coalescing. */
  public int transfers() {
    return transfers;
  }

  /** (layer, tensor, block) slots moved: the entries a per-block loop would issue. */
  public int blockSlots() {
    return blockSlots;
  }

  /**
   * The same bytes with every batch of at least {@code 2 * minPartBytes} cut into up to {@code parts} batches of
   * about equal bytes, each at least {@code minPartBytes}, in order (an entry that straddles a cut is split in
   * two): on TCP each batch is one request
   * on one connection, so a layer cut in as many parts as the engine has connections to the peer uses all of them
   * instead of queueing on one. {@code parts <= 1} returns this plan.
   */
  public KvTransferPlan split(int parts, long minPartBytes) {
    if (minPartBytes < 1) throw new IllegalArgumentException("minPartBytes must be at least 1: " + minPartBytes);
    if (parts <= 1) return this;
    List<Batch> out = new ArrayList<>(batches.size() * parts);
    boolean changed = false;
    for (Batch b : batches) {
      int k = (int) Math.min(parts, b.bytes / minPartBytes);
      if (k <= 1) {
        out.add(b);
        continue;
      }
      changed = true;
      // k - 1 parts of floor(bytes / k), the last one with the remainder: every part has at least minPartBytes
      long per = b.bytes / k;
      int made = 0;
      Builder cur = new Builder(b.srcBuffer, b.dstBuffer);
      for (int j = 0; j < b.count(); j++) {
        long so = b.srcOffsets[j], d = b.dstOffsets[j], left = b.sizes[j];
        while (left > 0) {
          long take = made == k - 1 ? left : Math.min(left, per - cur.bytes);
          cur.add(so, d, take);
          so += take;
          d += take;
          left -= take;
          if (made < k - 1 && cur.bytes == per) {
            out.add(cur.finish());
            made++;
            cur = new Builder(b.srcBuffer, b.dstBuffer);
          }
        }
      }
      out.add(cur.finish());
    }
    return changed ? new KvTransferPlan(out, blockSlots) : this;
  }

  /** Builds the plan; see the class comment for what is refused. */
  public static KvTransferPlan build(KvCacheLayout src, int[] srcBlocks, KvCacheLayout dst, int[] dstBlocks, int fromLayer, int toLayer) {
    return prepare(src, srcBlocks, dst, dstBlocks).plan(fromLayer, toLayer);
  }

  /**
   * Checks the layouts and block lists and sorts the blocks once, for plans of any layer range after: a stream
   * builds one plan per {@code sendLayers}, inside the time it exposes, so that work is not repeated there.
   */
  public static Prepared prepare(KvCacheLayout src, int[] srcBlocks, KvCacheLayout dst, int[] dstBlocks) {
    return prepare(src, srcBlocks, dst, dstBlocks, false);
  }

  /**
   * {@link #prepare}; {@code blocksChecked}: the caller ran {@link #checkBlocks} on these lists already (the cache does,
   * before a migration exists), so the second pass over them (and its array of the destination's block count) is skipped.
   */
  static Prepared prepare(KvCacheLayout src, int[] srcBlocks, KvCacheLayout dst, int[] dstBlocks, boolean blocksChecked) {
    if (src == null || dst == null) throw new IllegalArgumentException("layouts must not be null");
    String mismatch = src.mismatch(dst);
    if (mismatch != null) throw new IllegalArgumentException("layouts do not match: " + mismatch);
    if (!blocksChecked) checkBlocks(src, srcBlocks, dst, dstBlocks);
    int n = srcBlocks.length;
    // sorted by source block: a request listed in any order still finds its runs
    long[] pairs = new long[n];
    for (int i = 0; i < n; i++) pairs[i] = ((long) srcBlocks[i] << 32) | dstBlocks[i];
    Arrays.sort(pairs); // block ids are non-negative ints: the high half orders by source block
    int[] sb = new int[n], db = new int[n];
    for (int i = 0; i < n; i++) {
      sb[i] = (int) (pairs[i] >>> 32);
      db[i] = (int) pairs[i];
    }
    return new Prepared(src, dst, sb, db);
  }

  /** Checked, sorted block pairs of two layouts; {@link #plan} builds the plan of a layer range. */
  public static final class Prepared {
    private final KvCacheLayout src, dst;
    private final int[] sb, db;

    private Prepared(KvCacheLayout src, KvCacheLayout dst, int[] sb, int[] db) {
      this.src = src;
      this.dst = dst;
      this.sb = sb;
      this.db = db;
    }

    /**
     * Layers a plan of part of a range must start and end on a multiple of, so that no buffer pair is cut in two
     * (its batches, and their coalesced runs, are then exactly those of a plan of the whole range): both layouts'
     * layers per buffer. A layout with every layer in one buffer gives the layer count (one plan for everything).
     */
    public int layerUnit() {
      int a = src.layersPerBuffer(), b = dst.layersPerBuffer();
      int g = a;
      for (int r = b; r != 0; ) {
        int t = g % r;
        g = r;
        r = t;
      }
      return Math.min(src.layers(), a / g * b);
    }

    /** The plan of layers {@code [fromLayer, toLayer)}; an empty or out-of-range range throws {@link IllegalArgumentException}. */
    public KvTransferPlan plan(int fromLayer, int toLayer) {
      return plan(fromLayer, toLayer, null);
    }

    /**
     * {@link #plan(int, int)} with its batches' arrays taken from {@code pool} (null: allocated), for a caller that
     * gives them back with {@link KvTransferPlan#release} once nothing reads them (a layer-major source only; a
     * block-major one grows its arrays as before).
     */
    KvTransferPlan plan(int fromLayer, int toLayer, KvPlanArrays pool) {
      if (fromLayer < 0 || toLayer > src.layers() || fromLayer >= toLayer)
        throw new IllegalArgumentException("layer range [" + fromLayer + ", " + toLayer + ") is empty or outside [0, " + src.layers() + ")");
      int n = sb.length;
      int tensors = src.tensorsPerLayer();
      // block-major sources keep a block's layers together; everything else walks layer by layer
      boolean blockOuter = src.layersPerBuffer() > 1 && src.blockStride() > src.layerStride();
      Pairs byPair = new Pairs(blockOuter ? null : pool); // block-major batches grow their arrays: not pooled
      if (blockOuter) {
        for (int i = 0; i < n; i++)
          for (int l = fromLayer; l < toLayer; l++)
            for (int t = 0; t < tensors; t++) byPair.add(src, dst, l, t, sb[i], db[i]);
      } else {
        // the plan is on the caller's path in front of the first byte (a Llama-3-70B migration of 4,096 tokens: 40,960
        // slots; kv-gap results): each batch's arrays are sized once for the scattered case (growing them by copies was
        // a sixth of the call's samples on the VM), and a block's offset is its (layer, tensor)'s base plus block x
        // stride, in one loop over locals
        long ss = src.blockStride(), ds = dst.blockStride(), bb = src.blockBytes();
        for (int l = fromLayer; l < toLayer; l++)
          for (int t = 0; t < tensors; t++) byPair.of(src.bufferOf(l, t), dst.bufferOf(l, t)).slots += n;
        for (Builder b : byPair.all.values()) b.reserve(b.slots);
        for (int l = fromLayer; l < toLayer; l++)
          for (int t = 0; t < tensors; t++)
            byPair.of(src.bufferOf(l, t), dst.bufferOf(l, t)).addAll(sb, src.offset(l, t, 0), ss, db, dst.offset(l, t, 0), ds, bb);
      }
      List<Batch> out = new ArrayList<>(byPair.all.size());
      for (Builder b : byPair.all.values()) out.add(b.finish());
      return new KvTransferPlan(out, n * (toLayer - fromLayer) * tensors);
    }
  }

  /** The builders by (source buffer, destination buffer), in first-use order; the last one used is looked up first. */
  private static final class Pairs {
    final Map<Long, Builder> all = new LinkedHashMap<>();
    final KvPlanArrays pool;
    Builder last;

    Pairs(KvPlanArrays pool) {
      this.pool = pool;
    }

    Builder of(int sBuf, int dBuf) {
      if (last != null && last.srcBuffer == sBuf && last.dstBuffer == dBuf) return last;
      return last = all.computeIfAbsent(((long) sBuf << 32) | dBuf, k -> new Builder(sBuf, dBuf, pool));
    }

    void add(KvCacheLayout src, KvCacheLayout dst, int l, int t, int s, int d) {
      of(src.bufferOf(l, t), dst.bufferOf(l, t)).add(src.offset(l, t, s), dst.offset(l, t, d), src.blockBytes());
    }
  }

  static void checkBlocks(KvCacheLayout src, int[] srcBlocks, KvCacheLayout dst, int[] dstBlocks) {
    if (srcBlocks == null || dstBlocks == null) throw new IllegalArgumentException("srcBlocks and dstBlocks must not be null");
    if (srcBlocks.length != dstBlocks.length)
      throw new IllegalArgumentException("srcBlocks (" + srcBlocks.length + ") and dstBlocks (" + dstBlocks.length + ") must have the same length");
    if (srcBlocks.length == 0) throw new IllegalArgumentException("no blocks to move");
    boolean[] seen = new boolean[dst.blocks()];
    for (int i = 0; i < srcBlocks.length; i++) {
      if (srcBlocks[i] < 0 || srcBlocks[i] >= src.blocks())
        throw new IllegalArgumentException("srcBlocks[" + i + "] = " + srcBlocks[i] + " is outside the source's blocks [0, " + src.blocks() + ")");
      int d = dstBlocks[i];
      if (d < 0 || d >= dst.blocks())
        throw new IllegalArgumentException("dstBlocks[" + i + "] = " + d + " is outside the destination's blocks [0, " + dst.blocks() + ")");
      if (seen[d]) throw new IllegalArgumentException("dstBlocks[" + i + "] = " + d + " appears twice: two blocks would land on one");
      seen[d] = true;
    }
  }

  private static final class Builder {
    private static final long[] NONE = new long[0];
    final int srcBuffer, dstBuffer;
    /** Where the first reservation and the final exact-length arrays come from, or null. */
    private final KvPlanArrays pool;
    long[] so = NONE, dof = NONE, sz = NONE;
    int n;
    /** Slots this batch will be given (counted before {@link #addAll}, so its arrays are allocated once). */
    int slots;
    long bytes;

    Builder(int srcBuffer, int dstBuffer) {
      this(srcBuffer, dstBuffer, null);
    }

    Builder(int srcBuffer, int dstBuffer, KvPlanArrays pool) {
      this.srcBuffer = srcBuffer;
      this.dstBuffer = dstBuffer;
      this.pool = pool;
    }

    void add(long s, long d, long size) {
      bytes += size;
      if (n > 0 && so[n - 1] + sz[n - 1] == s && dof[n - 1] + sz[n - 1] == d) {
        sz[n - 1] += size;
        return;
      }
      if (n == so.length) {
        int cap = Math.max(16, n * 2);
        so = Arrays.copyOf(so, cap);
        dof = Arrays.copyOf(dof, cap);
        sz = Arrays.copyOf(sz, cap);
      }
      so[n] = s;
      dof[n] = d;
      sz[n] = size;
      n++;
    }

    /**
     * Adds block {@code sb[i]} at {@code sBase + sb[i] * sStride} to block {@code db[i]} at {@code dBase + db[i] * dStride},
     * {@code size} bytes each, for every {@code i}, joining runs as {@link #add} does; one tight loop over locals.
     */
    void addAll(int[] sb, long sBase, long sStride, int[] db, long dBase, long dStride, long size) {
      int m = sb.length;
      reserve(m); // a no-op when the caller reserved every slot first
      long[] so = this.so, dof = this.dof, sz = this.sz;
      int k = n;
      for (int i = 0; i < m; i++) {
        long s = sBase + sb[i] * sStride, d = dBase + db[i] * dStride;
        if (k > 0 && so[k - 1] + sz[k - 1] == s && dof[k - 1] + sz[k - 1] == d) {
          sz[k - 1] += size;
        } else {
          so[k] = s;
          dof[k] = d;
          sz[k] = size;
          k++;
        }
      }
      n = k;
      bytes += size * m;
    }

    void reserve(int more) {
      if (n + more <= so.length) return;
      if (pool != null && so.length == 0) {
        // the one reservation of a counted batch: exactly its slots, which a scattered batch fills (handed over as is)
        so = pool.take(more);
        dof = pool.take(more);
        sz = pool.take(more);
        return;
      }
      int cap = so.length == 0 ? n + more : Math.max(n + more, so.length * 2);
      so = Arrays.copyOf(so, cap);
      dof = Arrays.copyOf(dof, cap);
      sz = Arrays.copyOf(sz, cap);
    }

    Batch finish() {
      // the arrays are this builder's own and it is not used again: a full one is handed over without a copy
      if (n == so.length) return new Batch(srcBuffer, dstBuffer, so, dof, sz, bytes);
      if (pool != null) {
        // runs joined: exact-length arrays from the pool too, and the reserved ones back to it
        long[] a = pool.take(n), b = pool.take(n), c = pool.take(n);
        System.arraycopy(so, 0, a, 0, n);
        System.arraycopy(dof, 0, b, 0, n);
        System.arraycopy(sz, 0, c, 0, n);
        pool.give(so);
        pool.give(dof);
        pool.give(sz);
        return new Batch(srcBuffer, dstBuffer, a, b, c, bytes);
      }
      return new Batch(srcBuffer, dstBuffer, Arrays.copyOf(so, n), Arrays.copyOf(dof, n), Arrays.copyOf(sz, n), bytes);
    }
  }
}
