package org.mori4j.io.kv;

import java.nio.ByteBuffer;
import org.mori4j.io.internal.DescriptorCodec;

/**
 * Where every block of a paged KV cache lives. A cache has {@code layers} layers, each with {@code tensorsPerLayer}
 * tensors (2 for separate K and V, 1 for a combined KV tensor or MLA's single latent tensor), and {@code blocks}
 * blocks of {@code blockBytes} bytes per tensor. Layers are spread over buffers, {@code layersPerBuffer} to a
 * buffer; the block {@code b} of tensor {@code t} of layer {@code l} starts in buffer {@code l / layersPerBuffer}
 * at {@code (l % layersPerBuffer) * layerStride + t * tensorStride + b * blockStride}. With {@code tensorBuffers}
 * each tensor has buffers of its own instead (SGLang's per-layer {@code k_buffer}/{@code v_buffer} pools): the
 * slot is in buffer {@code (l / layersPerBuffer) * tensorsPerLayer + t} at {@code (l % layersPerBuffer) * layerStride
 * + b * blockStride}, and {@code tensorStride} must be 0. The factories cover the layouts serving engines use:
 * vLLM's one {@code [tensors, blocks, ...]} buffer per layer ({@link #perLayer}), one buffer per layer and tensor
 * ({@link #perLayerTensor}), one layer-major buffer for all layers ({@link #singleBuffer}) and one block-major
 * buffer ({@link #blockMajor}).
 * The three dimensions must nest (each stride at least the extent of the smaller ones), which rules out overlaps;
 * a layout that breaks this, or has a non-positive size, is refused with a message naming the value.
 */
public final class KvCacheLayout {
  private static final int MAGIC = 0x4d344b4c; // "M4KL"
  private static final int VERSION = 2;
  private static final int FLAG_TENSOR_BUFFERS = 1;

  private final int layers;
  private final int tensorsPerLayer;
  private final int blocks;
  private final long blockBytes;
  private final int layersPerBuffer;
  private final long layerStride;
  private final long tensorStride;
  private final long blockStride;
  private final boolean tensorBuffers;
  private final long bufferBytes;

  /** The general form with a layer's tensors side by side in its buffer; see the class comment for the strides. */
  public KvCacheLayout(int layers, int tensorsPerLayer, int blocks, long blockBytes, int layersPerBuffer,
                       long layerStride, long tensorStride, long blockStride) {
    this(layers, tensorsPerLayer, blocks, blockBytes, layersPerBuffer, layerStride, tensorStride, blockStride, false);
  }

  /**
   * The general form; {@code tensorBuffers} gives each tensor buffers of its own (then {@code tensorStride} must
   * be 0). See the class comment for the meaning of each stride.
   */
  public KvCacheLayout(int layers, int tensorsPerLayer, int blocks, long blockBytes, int layersPerBuffer,
                       long layerStride, long tensorStride, long blockStride, boolean tensorBuffers) {
    if (layers < 1) throw bad("layers must be at least 1: " + layers);
    if (tensorsPerLayer < 1) throw bad("tensorsPerLayer must be at least 1: " + tensorsPerLayer);
    if (blocks < 1) throw bad("blocks must be at least 1: " + blocks);
    if (blockBytes < 1) throw bad("blockBytes must be positive: " + blockBytes);
    if (layersPerBuffer < 1 || layersPerBuffer > layers || layers % layersPerBuffer != 0)
      throw bad("layersPerBuffer must divide layers (" + layers + "): " + layersPerBuffer);
    if (layerStride < 0 || tensorStride < 0 || blockStride < 0)
      throw bad("strides must not be negative: layerStride " + layerStride + ", tensorStride " + tensorStride + ", blockStride " + blockStride);
    if (tensorBuffers && tensorStride != 0)
      throw bad("tensorStride must be 0 when each tensor has its own buffers (tensorBuffers): " + tensorStride);
    this.layers = layers;
    this.tensorsPerLayer = tensorsPerLayer;
    this.blocks = blocks;
    this.blockBytes = blockBytes;
    this.layersPerBuffer = layersPerBuffer;
    this.layerStride = layerStride;
    this.tensorStride = tensorStride;
    this.blockStride = blockStride;
    this.tensorBuffers = tensorBuffers;
    this.bufferBytes = checkNesting();
  }

  /** vLLM's layout: one buffer per layer holding {@code [tensors][blocks][blockBytes]}. */
  public static KvCacheLayout perLayer(int layers, int tensorsPerLayer, int blocks, long blockBytes) {
    long tensorStride = Math.multiplyExact((long) blocks, blockBytes);
    return new KvCacheLayout(layers, tensorsPerLayer, blocks, blockBytes, 1, Math.multiplyExact(tensorStride, tensorsPerLayer), tensorStride, blockBytes);
  }

  /**
   * SGLang's layout: one buffer per layer and tensor ({@code k_buffer[l]}, {@code v_buffer[l]}), each
   * {@code [blocks][blockBytes]}; buffer {@code l * tensors + t} holds tensor {@code t} of layer {@code l}.
   */
  public static KvCacheLayout perLayerTensor(int layers, int tensorsPerLayer, int blocks, long blockBytes) {
    return new KvCacheLayout(layers, tensorsPerLayer, blocks, blockBytes, 1, 0, 0, blockBytes, true);
  }

  /** One buffer for every layer, layer-major: {@code [layers][tensors][blocks][blockBytes]}. */
  public static KvCacheLayout singleBuffer(int layers, int tensorsPerLayer, int blocks, long blockBytes) {
    long tensorStride = Math.multiplyExact((long) blocks, blockBytes);
    return new KvCacheLayout(layers, tensorsPerLayer, blocks, blockBytes, layers, Math.multiplyExact(tensorStride, tensorsPerLayer), tensorStride, blockBytes);
  }

  /** One buffer for every layer, block-major: {@code [blocks][layers][tensors][blockBytes]} (a block is one contiguous range). */
  public static KvCacheLayout blockMajor(int layers, int tensorsPerLayer, int blocks, long blockBytes) {
    long layerStride = Math.multiplyExact((long) tensorsPerLayer, blockBytes);
    return new KvCacheLayout(layers, tensorsPerLayer, blocks, blockBytes, layers, layerStride, blockBytes, Math.multiplyExact(layerStride, layers));
  }

  /**
   * Checks that (layer, tensor, block) slots never overlap and returns the bytes one buffer needs. Dimensions of
   * count 1 take no room, so their stride does not matter; the others, smallest stride first, must each start past
   * the extent of the ones below.
   */
  private long checkNesting() {
    // a tensor of its own buffers takes no room beside the others
    long[][] dims = {{layersPerBuffer, layerStride, 0}, {tensorBuffers ? 1 : tensorsPerLayer, tensorStride, 1}, {blocks, blockStride, 2}};
    java.util.Arrays.sort(dims, (a, b) -> Long.compare(a[1], b[1]));
    String[] names = {"layerStride", "tensorStride", "blockStride"};
    String[] counts = {"layersPerBuffer", "tensorsPerLayer", "blocks"};
    long extent = blockBytes;
    String below = "blockBytes " + blockBytes;
    for (long[] d : dims) {
      if (d[0] <= 1) continue;
      if (d[1] < extent)
        throw bad("strides overlap: " + names[(int) d[2]] + " " + d[1] + " is smaller than the extent of what it repeats (" + below
            + " = " + extent + " bytes), so " + counts[(int) d[2]] + " " + d[0] + " slots would overlap");
      try {
        extent = Math.addExact(Math.multiplyExact(d[1], d[0] - 1), extent);
      } catch (ArithmeticException e) {
        throw bad("layout larger than 2^63 bytes");
      }
      below = names[(int) d[2]] + " " + d[1] + " x " + counts[(int) d[2]] + " " + d[0];
    }
    return extent;
  }

  private static IllegalArgumentException bad(String msg) {
    return new IllegalArgumentException("KvCacheLayout: " + msg);
  }

  public int layers() { return layers; }

  public int tensorsPerLayer() { return tensorsPerLayer; }

  public int blocks() { return blocks; }

  public long blockBytes() { return blockBytes; }

  public int layersPerBuffer() { return layersPerBuffer; }

  public long layerStride() { return layerStride; }

  public long tensorStride() { return tensorStride; }

  public long blockStride() { return blockStride; }

  /** Whether each tensor has buffers of its own (see the class comment). */
  public boolean tensorBuffers() { return tensorBuffers; }

  /** How many buffers the cache needs. */
  public int buffers() {
    return layers / layersPerBuffer * (tensorBuffers ? tensorsPerLayer : 1);
  }

  /** The bytes each buffer must have at least. */
  public long bufferBytes() {
    return bufferBytes;
  }

  /** Bytes of one block over every layer and tensor. */
  public long bytesPerBlock() {
    return blockBytes * tensorsPerLayer * layers;
  }

  /** The buffer holding tensor {@code tensor} of layer {@code layer}. */
  public int bufferOf(int layer, int tensor) {
    int group = layer / layersPerBuffer;
    return tensorBuffers ? group * tensorsPerLayer + tensor : group;
  }

  /** Offset, in its buffer ({@link #bufferOf}), of block {@code block} of tensor {@code tensor} of layer {@code layer}. */
  public long offset(int layer, int tensor, int block) {
    return (layer % layersPerBuffer) * layerStride + (tensorBuffers ? 0 : tensor * tensorStride) + block * blockStride;
  }

  /**
   * Null when blocks can move between this layout and {@code other} (same layer count, tensors per layer and block
   * bytes; block counts, strides and buffers may differ), else why not.
   */
  public String mismatch(KvCacheLayout other) {
    if (other == null) return "the other layout is null";
    if (layers != other.layers) return "layer count " + layers + " vs " + other.layers;
    if (tensorsPerLayer != other.tensorsPerLayer) return "tensors per layer " + tensorsPerLayer + " vs " + other.tensorsPerLayer;
    if (blockBytes != other.blockBytes) return "block bytes " + blockBytes + " vs " + other.blockBytes;
    return null;
  }

  void write(DescriptorCodec.Writer w) {
    w.i32(layers).i32(tensorsPerLayer).i32(blocks).i64(blockBytes).i32(layersPerBuffer).i64(layerStride).i64(tensorStride).i64(blockStride)
        .i32(tensorBuffers ? FLAG_TENSOR_BUFFERS : 0);
  }

  static KvCacheLayout read(ByteBuffer in) {
    DescriptorCodec.need(in, 5 * 4 + 8 * 4, "KvCacheLayout");
    int l = in.getInt(), t = in.getInt(), b = in.getInt();
    long bb = in.getLong();
    int lpb = in.getInt();
    long ls = in.getLong(), ts = in.getLong(), bs = in.getLong();
    int flags = in.getInt();
    if ((flags & ~FLAG_TENSOR_BUFFERS) != 0) throw new IllegalArgumentException("KvCacheLayout: unknown flags " + Integer.toHexString(flags));
    return new KvCacheLayout(l, t, b, bb, lpb, ls, ts, bs, (flags & FLAG_TENSOR_BUFFERS) != 0);
  }

  public byte[] toBytes() {
    DescriptorCodec.Writer w = new DescriptorCodec.Writer().header(MAGIC, VERSION);
    write(w);
    return w.toBytes();
  }

  /** Parses {@link #toBytes()}'s output; anything else throws {@link IllegalArgumentException}. */
  public static KvCacheLayout fromBytes(byte[] bytes) {
    return DescriptorCodec.decode("KvCacheLayout", () -> {
      ByteBuffer in = DescriptorCodec.open(bytes, MAGIC, VERSION, "KvCacheLayout");
      KvCacheLayout l = read(in);
      DescriptorCodec.expectEnd(in, "KvCacheLayout");
      return l;
    });
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof KvCacheLayout k && layers == k.layers && tensorsPerLayer == k.tensorsPerLayer && blocks == k.blocks
        && blockBytes == k.blockBytes && layersPerBuffer == k.layersPerBuffer && layerStride == k.layerStride
        && tensorStride == k.tensorStride && blockStride == k.blockStride && tensorBuffers == k.tensorBuffers;
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(layers, tensorsPerLayer, blocks, blockBytes, layersPerBuffer, layerStride, tensorStride, blockStride, tensorBuffers);
  }

  @Override
  public String toString() {
    return "KvCacheLayout[layers=" + layers + ", tensors=" + tensorsPerLayer + ", blocks=" + blocks + ", blockBytes=" + blockBytes
        + ", layersPerBuffer=" + layersPerBuffer + ", strides layer/tensor/block=" + layerStride + "/" + tensorStride + "/" + blockStride
        + (tensorBuffers ? ", a buffer per tensor" : "") + "]";
  }
}
