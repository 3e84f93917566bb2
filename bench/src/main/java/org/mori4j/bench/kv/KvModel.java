package org.mori4j.bench.kv;

import org.mori4j.io.kv.KvCacheLayout;

/**
 * A model's KV-cache shape per token and layer: {@code tensors} tensors (K and V, or MLA's one latent) of
 * {@code width} bf16 values each. Presets carry the published shapes: Llama-3-8B (32 layers, 8 KV heads x 128),
 * Llama-3-70B (80 layers, 8 x 128), DeepSeek-V3 (61 layers, MLA latent of 512 + 64 rope = 576).
 */
record KvModel(String name, int layers, int tensors, int width) {
  static final int BF16 = 2;

  static KvModel preset(String name) {
    return switch (name) {
      case "llama3-8b" -> new KvModel(name, 32, 2, 8 * 128);
      case "llama3-70b" -> new KvModel(name, 80, 2, 8 * 128);
      case "deepseek-v3" -> new KvModel(name, 61, 1, 576);
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
}
