package org.mori4j.natives.nccl;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NCCL through FFM on real GPUs: the enum values the binding passes mean what their names say to the real
 * library, checked by what NCCL does with them (the header is not always on the GPU machine, so this is the
 * check that always runs there). With one GPU: a one-rank all-reduce of {@code count} elements of each type
 * moves exactly {@code count x width} bytes, which pins every type value to its width. With two GPUs: two ranks
 * in this process reduce known values, and SUM, PROD, MAX, MIN and AVG of fp32, bf16, fp16, int32 and uint8
 * give exactly what each op and type must. Also: two ranks on one GPU are refused before NCCL is called.
 * Run with {@code NCCL_NVLS_ENABLE=0} in the environment (the GPU machine has NVLink multicast off).
 */
@Tag("gpu")
class NcclGpuTest {
  private static final Logger LOG = LoggerFactory.getLogger(NcclGpuTest.class);
  private static GpuRuntime gpu;

  @BeforeAll
  static void open() {
    gpu = GpuRuntimes.select("cuda");
    Assumptions.assumeTrue(gpu.available(), "no CUDA GPU here");
    Assumptions.assumeTrue(Nccl.library().available(), "no NCCL here: " + Nccl.library().failure());
    LOG.info("NCCL {} from {}; {} GPU(s), NCCL_NVLS_ENABLE={}", Nccl.versionString(), Nccl.library().loadedName().orElse("?"),
        gpu.deviceCount(), System.getenv("NCCL_NVLS_ENABLE"));
  }

  @Test
  void aOneRankAllReduceMovesCountTimesTheWidthOfEachType() {
    int count = 1001;
    try (NcclCommunicator comm = NcclCommunicator.initAll(0).get(0); DeviceBuffer send = gpu.allocDevice(0, 8 * 2048);
         DeviceBuffer recv = gpu.allocDevice(0, 8 * 2048); Arena arena = Arena.ofConfined()) {
      assertEquals(1, comm.nRanks());
      MemorySegment host = arena.allocate(8 * 2048);
      for (int i = 0; i < host.byteSize(); i++) host.set(JAVA_BYTE, i, (byte) (i % 61 + 1)); // no zero byte, small finite values
      gpu.copyHostToDevice(send.address(), host, host.byteSize());
      for (NcclDataType t : NcclDataType.values()) {
        gpu.fill(recv.address(), (byte) 0, 8 * 2048);
        settle(List.of(recv, send));
        comm.allReduce(send.address(), recv.address(), count, t, NcclRedOp.SUM);
        comm.synchronize();
        MemorySegment back = arena.allocate(8 * 2048);
        gpu.copyDeviceToHost(back, recv.address(), back.byteSize());
        long moved = 0;
        while (moved < back.byteSize() && back.get(JAVA_BYTE, moved) != 0) moved++;
        assertEquals((long) count * t.bytes(), moved, t.cName() + " (value " + t.value() + ") moved the bytes of another width");
      }
    }
  }

  @Test
  void twoRanksReduceWithTheOpAndTypeTheirNamesSay() {
    Assumptions.assumeTrue(gpu.deviceCount() >= 2, "needs two GPUs (NCCL needs one GPU per rank); this machine has " + gpu.deviceCount());
    List<NcclCommunicator> comms = NcclCommunicator.initAll(0, 1);
    List<DeviceBuffer> buffers = new ArrayList<>();
    try (Arena arena = Arena.ofConfined()) {
      for (int r = 0; r < 2; r++) buffers.add(gpu.allocDevice(r, 64));
      // rank 0 holds 6, rank 1 holds 3: sum 9, prod 18, max 6, min 3, avg 4.5
      checkFloat(comms, buffers, arena, NcclRedOp.SUM, 9f);
      checkFloat(comms, buffers, arena, NcclRedOp.PROD, 18f);
      checkFloat(comms, buffers, arena, NcclRedOp.MAX, 6f);
      checkFloat(comms, buffers, arena, NcclRedOp.MIN, 3f);
      checkFloat(comms, buffers, arena, NcclRedOp.AVG, 4.5f);
      // bf16 6.0 = 0x40C0, 3.0 = 0x4040, 9.0 = 0x4110; fp16 6.0 = 0x4600, 3.0 = 0x4200, 9.0 = 0x4880
      checkShort(comms, buffers, arena, NcclDataType.BFLOAT16, (short) 0x40C0, (short) 0x4040, (short) 0x4110);
      checkShort(comms, buffers, arena, NcclDataType.FLOAT16, (short) 0x4600, (short) 0x4200, (short) 0x4880);
      // int32 -5 + 7 = 2 (an unsigned type would carry past 32 bits only in uint64); uint8 200 + 100 wraps to 44
      MemorySegment v = arena.allocate(4);
      v.set(JAVA_INT, 0, -5);
      gpu.copyHostToDevice(buffers.get(0).address(), v, 4);
      v.set(JAVA_INT, 0, 7);
      gpu.copyHostToDevice(buffers.get(1).address(), v, 4);
      run(comms, buffers, 1, NcclDataType.INT32, NcclRedOp.SUM);
      for (int r = 0; r < 2; r++) {
        gpu.copyDeviceToHost(v, buffers.get(r).address(), 4);
        assertEquals(2, v.get(JAVA_INT, 0), "int32 sum on rank " + r);
      }
      v.set(JAVA_BYTE, 0, (byte) 200);
      gpu.copyHostToDevice(buffers.get(0).address(), v, 1);
      v.set(JAVA_BYTE, 0, (byte) 100);
      gpu.copyHostToDevice(buffers.get(1).address(), v, 1);
      run(comms, buffers, 1, NcclDataType.UINT8, NcclRedOp.SUM);
      gpu.copyDeviceToHost(v, buffers.get(1).address(), 1);
      assertEquals(44, v.get(JAVA_BYTE, 0) & 0xFF, "uint8 sum wraps");
    } finally {
      for (NcclCommunicator c : comms) c.close();
      for (DeviceBuffer b : buffers) b.close();
    }
  }

  @Test
  void twoRanksOnOneGpuAreRefusedBeforeNcclIsCalled() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NcclCommunicator.initAll(0, 0));
    assertTrue(e.getMessage().contains("one GPU per rank"), e.getMessage());
  }

  @Test
  void aFailedCallNamesTheNcclResult() {
    // a group end without a group start: NCCL refuses it as invalid usage
    NativeException e = assertThrows(NativeException.class, Nccl::groupEnd);
    assertEquals("nccl", e.library());
    assertEquals("ncclGroupEnd", e.function());
    assertEquals("ncclInvalidUsage", e.codeName(), e.getMessage());
    assertTrue(e.getMessage().contains(Nccl.errorString(Nccl.ncclInvalidUsage)), e.getMessage());
  }

  private static void checkFloat(List<NcclCommunicator> comms, List<DeviceBuffer> buffers, Arena arena, NcclRedOp op, float expected) {
    MemorySegment v = arena.allocate(4);
    v.set(JAVA_FLOAT, 0, 6f);
    gpu.copyHostToDevice(buffers.get(0).address(), v, 4);
    v.set(JAVA_FLOAT, 0, 3f);
    gpu.copyHostToDevice(buffers.get(1).address(), v, 4);
    run(comms, buffers, 1, NcclDataType.FLOAT32, op);
    for (int r = 0; r < 2; r++) {
      gpu.copyDeviceToHost(v, buffers.get(r).address(), 4);
      assertEquals(expected, v.get(JAVA_FLOAT, 0), op.cName() + " of fp32 6 and 3 on rank " + r);
    }
  }

  private static void checkShort(List<NcclCommunicator> comms, List<DeviceBuffer> buffers, Arena arena, NcclDataType t, short a, short b, short sum) {
    MemorySegment v = arena.allocate(2);
    v.set(JAVA_SHORT, 0, a);
    gpu.copyHostToDevice(buffers.get(0).address(), v, 2);
    v.set(JAVA_SHORT, 0, b);
    gpu.copyHostToDevice(buffers.get(1).address(), v, 2);
    run(comms, buffers, 1, t, NcclRedOp.SUM);
    for (int r = 0; r < 2; r++) {
      gpu.copyDeviceToHost(v, buffers.get(r).address(), 2);
      assertEquals(sum, v.get(JAVA_SHORT, 0), t.cName() + " 6 + 3 on rank " + r);
    }
  }

  /**
   * Waits for the uploads and fills issued on the legacy default stream, which NCCL's non-blocking streams do not
   * order against: a synchronous read back returns only after everything before it on that stream is done.
   */
  private static void settle(List<DeviceBuffer> buffers) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment one = arena.allocate(1);
      for (DeviceBuffer b : buffers) gpu.copyDeviceToHost(one, b.address(), 1);
    }
  }

  /** Both ranks from this thread: NCCL needs the two calls grouped, or the first would wait for the second for ever. */
  private static void run(List<NcclCommunicator> comms, List<DeviceBuffer> buffers, long count, NcclDataType t, NcclRedOp op) {
    settle(buffers);
    Nccl.groupStart();
    try {
      for (int r = 0; r < comms.size(); r++) comms.get(r).allReduce(buffers.get(r).address(), buffers.get(r).address(), count, t, op);
    } finally {
      Nccl.groupEnd();
    }
    for (NcclCommunicator c : comms) c.synchronize();
  }
}
