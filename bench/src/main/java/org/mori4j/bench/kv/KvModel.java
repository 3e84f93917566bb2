package org.mori4j.bench.kv;

import org.mori4j.io.kv.KvCacheLayout;

/**
 * A model's KV-cache shape per token and layer: {@code tensors} tensors (K and V, or MLA's one latent) of
 * {@code width} bf16 values each, and the parameters a token passes through ({@code activeParams}, for the prefill
 * estimate of {@link #prefillNanosPerLayer}). Presets carry the published shapes: Llama-3-8B (32 layers, 8 KV heads
 * x 128, 8.0 B parameters), Llama-3-70B (80 layers, 8 x 128, 70.6 B), DeepSeek-V3 (61 layers, MLA latent of 512 +
 * 64 rope = 576, 37 B of its 671 B active per token).
 */
record KvModel(String name, int layers, int tensors, int width, double activeParams) {
  static final int BF16 = 2;

  static KvModel preset(String name) {
    return switch (name) {
      case "llama3-8b" -> new KvModel(name, 32, 2, 8 * 128, 8.03e9);
      case "llama3-70b" -> new KvModel(name, 80, 2, 8 * 128, 70.6e9);
      case "deepseek-v3" -> new KvModel(name, 61, 1, 576, 37e9);
      default -> throw new IllegalArgumentException("--model: unknown model '" + name + "' (llama3-8b, llama3-70b, deepseek-v3)");
    };
  }

  long blockBytes(int blockTokens) {
    return (long) blockTokens * width * BF16;
  }

  /** vLLM's layout: one {@code [tensors, blocks, blockTokens, width]} buffer per layer. */
  KvCacheLayout layout(int blockTokens, int blocks) {
    return KvCacheLayout.perLayer(layers, tensors, blocks, blockBytes(blockTokens));
  }

  /**
   * The time one layer of a {@code tokens}-token prefill computes on a GPU that sustains {@code tflops} bf16
   * TFLOP/s: 2 FLOPs per active parameter and token, the parameters spread evenly over the layers. Attention's
   * own {@code O(tokens^2)} term is left out (about 4% of a Llama-3-70B layer at 4,096 tokens), as are
   * embeddings: the estimate errs short, which makes streaming harder, not easier.
   */
  long prefillNanosPerLayer(int tokens, double tflops) {
    return (long) (2 * activeParams / layers * tokens / (tflops * 1e12) * 1e9);
  }
}
