package org.mori4j.natives.gpu;

/** A grid or block shape for a kernel launch, as CUDA's {@code dim3}; every extent is at least 1. */
public record Dim3(int x, int y, int z) {
  public Dim3 {
    if (x < 1 || y < 1 || z < 1) throw new IllegalArgumentException("dim3 extents must be >= 1: " + x + "x" + y + "x" + z);
  }

  public static Dim3 of(int x) {
    return new Dim3(x, 1, 1);
  }
}
