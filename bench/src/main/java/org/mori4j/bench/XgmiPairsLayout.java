package org.mori4j.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Where every byte of one {@code xgmi-pairs} row goes: which engine writes to which (the pattern), which blocks of
 * its source buffer each route carries, and where they land in the destination's buffer. Every engine moves the
 * same bytes per iteration, its shape: one contiguous range ({@code 256M}) or a batch of blocks every other slot
 * ({@code 4096x4K}: block {@code b} at {@code 2 b x 4 KiB}, so no two blocks are neighbours and the engine cannot
 * join them into one copy). In a ring engine {@code i} sends it all to {@code i+1 mod N}; in all-to-all it splits
 * it into {@code N-1} consecutive parts, part {@code k} to its {@code k}-th other engine. A destination gives each
 * of its sources a region of its own ({@link #regionBytes()}), in source order, and a block at source offset
 * {@code s} of part {@code [p0, p1)} lands at {@code region + s - p0}. The same layout is computed in every
 * process from the row's parameters, so the check at the destination needs nothing but them.
 */
public final class XgmiPairsLayout {
  /** Alignment of the parts a contiguous range is split into, and of destination regions. */
  static final long ALIGN = 4096;

  /** Who writes to whom. */
  public enum Pattern {
    RING, ALL_TO_ALL;

    public String label() {
      return this == RING ? "ring" : "all-to-all";
    }

    static Pattern parse(String s) {
      return switch (s.toLowerCase(Locale.ROOT)) {
        case "ring" -> RING;
        case "all-to-all", "alltoall", "a2a" -> ALL_TO_ALL;
        default -> null;
      };
    }
  }

  /**
   * What every engine moves per iteration: {@code blocks} blocks of {@code blockBytes}, block {@code b} at
   * {@code b x stride} of its source buffer; a contiguous range is one block.
   */
  public record Shape(long blockBytes, int blocks, long stride) {
    public Shape {
      if (blockBytes <= 0 || blocks <= 0 || stride < blockBytes) throw new IllegalArgumentException("bad shape " + blockBytes + " x " + blocks + " / " + stride);
    }

    /** One range of {@code bytes}. */
    public static Shape contiguous(long bytes) {
      return new Shape(bytes, 1, bytes);
    }

    /** {@code blocks} of {@code blockBytes}, every other slot (gather/scatter). */
    public static Shape batch(int blocks, long blockBytes) {
      return new Shape(blockBytes, blocks, 2 * blockBytes);
    }

    public boolean contiguous() {
      return blocks == 1;
    }

    /** Bytes each engine moves per iteration. */
    public long bytes() {
      return blockBytes * blocks;
    }

    /** Bytes of the source buffer the shape spans. */
    public long span() {
      return (blocks - 1) * stride + blockBytes;
    }

    public String label() {
      return contiguous() ? HumanSize.format(blockBytes) : blocks + " x " + HumanSize.format(blockBytes);
    }
  }

  /** One source -> destination pair of the pattern: its blocks' source offsets, destination offsets and sizes. */
  public record Route(int source, int destination, long[] sourceOffsets, long[] destinationOffsets, long[] sizes) {
    public long bytes() {
      long n = 0;
      for (long s : sizes) n += s;
      return n;
    }
  }

  private final Pattern pattern;
  private final int engines;
  private final Shape shape;
  private final List<Route> routes;
  private final long regionBytes;

  private XgmiPairsLayout(Pattern pattern, int engines, Shape shape, List<Route> routes, long regionBytes) {
    this.pattern = pattern;
    this.engines = engines;
    this.shape = shape;
    this.routes = List.copyOf(routes);
    this.regionBytes = regionBytes;
  }

  public static XgmiPairsLayout of(Pattern pattern, int engines, Shape shape) {
    if (engines < 2) throw new IllegalArgumentException("a pattern needs at least 2 engines, got " + engines);
    int parts = pattern == Pattern.RING ? 1 : engines - 1;
    if (!shape.contiguous() && shape.blocks() < parts)
      throw new IllegalArgumentException("a batch of " + shape.blocks() + " blocks cannot be split over " + parts + " destinations");
    if (shape.contiguous() && shape.bytes() < parts * ALIGN)
      throw new IllegalArgumentException(HumanSize.format(shape.bytes()) + " cannot be split into " + parts + " parts of whole 4 KiB pages");
    // part k of every source: [first block, last block] for a batch, [start, end) bytes for a range
    long[] partStart = new long[parts], partEnd = new long[parts];
    int[] firstBlock = new int[parts], endBlock = new int[parts];
    for (int k = 0; k < parts; k++) {
      if (shape.contiguous()) {
        partStart[k] = k == 0 ? 0 : shape.bytes() * k / parts / ALIGN * ALIGN;
        partEnd[k] = k == parts - 1 ? shape.bytes() : shape.bytes() * (k + 1) / parts / ALIGN * ALIGN;
      } else {
        firstBlock[k] = (int) ((long) shape.blocks() * k / parts);
        endBlock[k] = (int) ((long) shape.blocks() * (k + 1) / parts);
        partStart[k] = firstBlock[k] * shape.stride();
        partEnd[k] = (endBlock[k] - 1) * shape.stride() + shape.blockBytes();
      }
    }
    long region = 0;
    for (int k = 0; k < parts; k++) region = Math.max(region, partEnd[k] - partStart[k]);
    region = (region + ALIGN - 1) / ALIGN * ALIGN;
    List<Route> routes = new ArrayList<>();
    for (int i = 0; i < engines; i++) {
      for (int k = 0; k < parts; k++) {
        int j = pattern == Pattern.RING ? (i + 1) % engines : (i + 1 + k) % engines;
        long base = sourceRank(pattern, engines, j, i) * region;
        long[] src, dst, sizes;
        if (shape.contiguous()) {
          src = new long[] {partStart[k]};
          sizes = new long[] {partEnd[k] - partStart[k]};
        } else {
          int n = endBlock[k] - firstBlock[k];
          src = new long[n];
          sizes = new long[n];
          for (int b = 0; b < n; b++) {
            src[b] = (firstBlock[k] + b) * shape.stride();
            sizes[b] = shape.blockBytes();
          }
        }
        dst = new long[src.length];
        for (int b = 0; b < src.length; b++) dst[b] = base + src[b] - partStart[k];
        routes.add(new Route(i, j, src, dst, sizes));
      }
    }
    return new XgmiPairsLayout(pattern, engines, shape, routes, region);
  }

  /** The place of {@code source} among {@code destination}'s sources: which region of its buffer is the source's. */
  private static int sourceRank(Pattern pattern, int engines, int destination, int source) {
    if (pattern == Pattern.RING) return 0;
    return source < destination ? source : source - 1;
  }

  public Pattern pattern() {
    return pattern;
  }

  public int engines() {
    return engines;
  }

  public Shape shape() {
    return shape;
  }

  public List<Route> routes() {
    return routes;
  }

  /** Bytes of a destination buffer each source writes into. */
  public long regionBytes() {
    return regionBytes;
  }

  /** Bytes every destination buffer needs: one region per source. */
  public long destinationBytes() {
    return (pattern == Pattern.RING ? 1 : engines - 1) * regionBytes;
  }

  /** Bytes every source buffer needs. */
  public long sourceBytes() {
    return shape.span();
  }

  /** The routes engine {@code i} issues. */
  public List<Route> from(int i) {
    return routes.stream().filter(r -> r.source() == i).toList();
  }

  /** The routes that land in engine {@code j}: what its check compares. */
  public List<Route> into(int j) {
    return routes.stream().filter(r -> r.destination() == j).toList();
  }

  /** Bytes all engines move per iteration. */
  public long totalBytes() {
    return shape.bytes() * engines;
  }

  /** The layout with route {@code source} sent to {@code wrongDestination} instead: how a test shows the check catches a wrong route. */
  XgmiPairsLayout misrouted(int source, int wrongDestination) {
    List<Route> changed = new ArrayList<>();
    for (Route r : routes) changed.add(r.source() == source ? new Route(source, wrongDestination, r.sourceOffsets(), r.destinationOffsets(), r.sizes()) : r);
    return new XgmiPairsLayout(pattern, engines, shape, changed, regionBytes);
  }

  /** The seed of engine {@code i}'s source bytes in a row of {@code rowSeed}: every source has its own pattern. */
  public static long seed(long rowSeed, int i) {
    return rowSeed * 0x2545F4914F6CDD1DL + (i + 1) * 0x9E3779B97F4A7C15L;
  }
}
