package org.mori4j.natives.nccl;

/**
 * NCCL's built-in reduction operations ({@code ncclRedOp_t}) with the value {@code nccl.h} gives each,
 * checked against the real header by {@code NcclAbiConformanceTest}.
 */
public enum NcclRedOp {
  SUM("ncclSum", 0),
  PROD("ncclProd", 1),
  MAX("ncclMax", 2),
  MIN("ncclMin", 3),
  AVG("ncclAvg", 4);

  private final String cName;
  private final int value;

  NcclRedOp(String cName, int value) {
    this.cName = cName;
    this.value = value;
  }

  /** The enumerator's name in {@code nccl.h}. */
  public String cName() {
    return cName;
  }

  public int value() {
    return value;
  }
}
