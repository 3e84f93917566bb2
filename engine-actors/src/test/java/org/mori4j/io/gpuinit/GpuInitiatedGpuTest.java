package org.mori4j.io.gpuinit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.mori4j.io.gpuinit.GpuQueueLayout.*;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.gpuinit.GpuInitTestRig.Cqe;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.gpu.KernelArgs;

/**
 * The device library against the engine's host proxy, two engines in one JVM (engine A's endpoints on GPU 0,
 * engine B's on GPU 1, or GPU 0 too with one GPU), onGpu endpoints connected both ways: kernels post write, read,
 * write-with-immediate (+ receives) and send (+ receives) in thread, warp and block scope, ring, and poll the CQEs
 * in a kernel (status, opcode, byteLen, wrId, WQE index checked here); bytes are verified by a kernel on the
 * receiving GPU. Remote fetch-add and CAS from 256 threads onto one word; error completions (wrong rkey, out of
 * bounds, bad lkey, then flushes) seen by the kernel and by the host; a send queue of 8 taking 256 posts; MORI's
 * example sequence and a hand-built batch. Prints the round trip of a GPU-posted 8-byte write and the throughput of
 * 4 KiB writes posted by a full warp (recorded, not asserted). GPU machine only; skips elsewhere saying why.
 */
@Tag("gpu")
// a kernel that traps (a wait timed out) poisons this process's CUDA context for every later test: the atomics,
// which depend on the target's atomic kernel getting an SM while the posting kernel spins, run last
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GpuInitiatedGpuTest {
  static final int BUF = 1 << 20;
  static final int OP_WRITE = 0, OP_READ = 1, OP_WRITE_IMM = 2, OP_SEND = 3;
  static final String[] OPS = {"write", "read", "write_imm", "send"};
  static final String[] SCOPES = {"thread", "warp", "block"};

  static GpuRuntime gpu;
  static IoEngine engineA, engineB;
  static RdmaDeviceContext ctxA, ctxB;
  static GpuInitTestRig rigA, rigB;
  static int devA, devB;

  @BeforeAll
  static void start() {
    gpu = GpuRuntimes.select("auto");
    assumeTrue(gpu.available(), "no GPU runtime on this machine: " + gpu.version());
    devA = 0;
    devB = gpu.deviceCount() > 1 ? 1 : 0;
    engineA = IoEngine.create("gpuinit-a", IoEngineConfig.loopback());
    engineB = IoEngine.create("gpuinit-b", IoEngineConfig.loopback());
    engineA.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
    engineB.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
    engineA.registerRemoteEngine(EngineDesc.fromBytes(engineB.engineDesc().toBytes()));
    engineB.registerRemoteEngine(EngineDesc.fromBytes(engineA.engineDesc().toBytes()));
    ctxA = RdmaDeviceContext.open(engineA);
    ctxB = RdmaDeviceContext.open(engineB);
    rigA = new GpuInitTestRig(gpu, devA);
    rigB = new GpuInitTestRig(gpu, devB);
    System.out.printf(Locale.ROOT, "gpuinit: engine A on GPU %d, engine B on GPU %d (%s, %s); executor: the engines' host proxy over TCP%n", devA, devB,
        gpu.deviceName(devA), gpu.version());
  }

  @AfterAll
  static void stop() {
    if (rigA != null) rigA.close();
    if (rigB != null) rigB.close();
    if (ctxA != null) ctxA.close();
    if (ctxB != null) ctxB.close();
    if (engineA != null) engineA.close();
    if (engineB != null) engineB.close();
  }

  /** Two endpoints connected both ways, A's on devA and B's on devB, with buffers registered on both GPUs. */
  record Pair(RdmaEndpoint a, RdmaEndpoint b, DeviceBuffer bufA, DeviceBuffer bufB, RdmaMemoryRegion mrA, RdmaMemoryRegion mrB,
      RdmaMemoryRegion peerOfB) {}

  static Pair pair(int sq, int cq, int rq) {
    RdmaEndpoint a = ctxA.createEndpoint(new RdmaEndpointConfig(true, devA, sq, cq, rq));
    RdmaEndpoint b = ctxB.createEndpoint(new RdmaEndpointConfig(true, devB, sq, cq, rq));
    ctxA.connectEndpoint(a, EndpointHandle.fromBytes(b.handle().toBytes()));
    ctxB.connectEndpoint(b, EndpointHandle.fromBytes(a.handle().toBytes()));
    DeviceBuffer bufA = rigA.alloc(BUF), bufB = rigB.alloc(BUF);
    RdmaMemoryRegion mrA = ctxA.registerMemoryRegion(bufA.address(), BUF, devA, MemoryLocationType.GPU, ACCESS_ALL);
    RdmaMemoryRegion mrB = ctxB.registerMemoryRegion(bufB.address(), BUF, devB, MemoryLocationType.GPU, ACCESS_ALL);
    return new Pair(a, b, bufA, bufB, mrA, mrB, RdmaMemoryRegion.fromBytes(mrB.toBytes()));
  }

  static Pair pair() {
    return pair(RdmaEndpointConfig.DEFAULT_MAX_SEND_WR, RdmaEndpointConfig.DEFAULT_MAX_CQE, RdmaEndpointConfig.DEFAULT_MAX_RECV_WR);
  }

  static void close(Pair p) {
    p.a().close();
    p.b().close();
  }

  /** t_post on A's endpoint with 2 blocks of 64 threads; returns every thread's WQE index. */
  static long[] post(Pair p, int op, int scope, long laddr, int lkey, long raddr, int rkey, int bytes, int flags, int threads) throws Exception {
    DeviceBuffer idx = rigA.alloc(8L * threads);
    int blocks = threads >= 64 ? threads / 64 : 1, perBlock = Math.min(threads, 64);
    assertTrue(rigA.runAndWait("t_post", blocks, perBlock, KernelArgs.of().pointer(p.a().address()).i32(op).i32(scope).i64(laddr).i32(lkey)
        .i64(raddr).i32(rkey).i32(bytes).i32(flags).pointer(idx.address()), 30_000), "t_post did not finish in 30 s");
    return rigA.longs(idx.address(), threads);
  }

  /** t_poll of n CQEs on endpoint ep by a kernel of rig. */
  static List<Cqe> poll(GpuInitTestRig rig, RdmaEndpoint ep, int n) throws Exception {
    DeviceBuffer out = rig.alloc((long) CQE_BYTES * n), ok = rig.alloc(8);
    assertTrue(rig.runAndWait("t_poll", 1, 1, KernelArgs.of().pointer(ep.address()).i32(n).pointer(out.address()).pointer(ok.address()), 60_000),
        "t_poll of " + n + " CQEs did not finish in 60 s");
    return rig.cqes(out.address(), n);
  }

  @Test
  void everyOpInEveryScopeCompletesInTheKernelAndLandsExactly() throws Exception {
    final int threads = 128, bytes = 1000;
    int seed = 1;
    for (int op = 0; op < 4; op++) {
      for (int scope = 0; scope < 3; scope++, seed++) {
        String what = OPS[op] + "/" + SCOPES[scope];
        Pair p = pair();
        try {
          DeviceBuffer recv = null;
          RdmaMemoryRegion mrRecv = null;
          if (op == OP_READ) rigB.fill(p.bufB().address(), (long) threads * bytes, seed);
          else rigA.fill(p.bufA().address(), (long) threads * bytes, seed);
          if (op == OP_WRITE_IMM || op == OP_SEND) {
            recv = rigB.alloc((long) threads * bytes);
            mrRecv = ctxB.registerMemoryRegion(recv.address(), (long) threads * bytes, devB, MemoryLocationType.GPU, ACCESS_ALL);
            assertTrue(rigB.runAndWait("t_recv", 2, 64, KernelArgs.of().pointer(p.b().address()).i64(recv.address()).i32(mrRecv.lkey()).i32(bytes), 30_000));
          }
          long[] idx = post(p, op, scope, p.bufA().address(), p.mrA().lkey(), p.peerOfB().address(), p.peerOfB().rkey(), bytes, FLAG_SIGNALED, threads);
          List<Cqe> cqes = poll(rigA, p.a(), threads);
          int wcOp = switch (op) {
            case OP_READ -> WC_OP_RDMA_READ;
            case OP_SEND -> WC_OP_SEND;
            default -> WC_OP_RDMA_WRITE;
          };
          Set<Long> wrIds = new HashSet<>();
          for (Cqe c : cqes) {
            assertEquals(WC_SUCCESS, c.status(), what + ": " + c);
            assertEquals(wcOp, c.opcode(), what + ": " + c);
            assertEquals(bytes, c.byteLen(), what + ": " + c);
            int tid = (int) (c.wrId() - 0x1000);
            assertTrue(tid >= 0 && tid < threads && wrIds.add(c.wrId()), what + ": unexpected or repeated wrId " + c);
            assertEquals((int) idx[tid], c.wqeIndex(), what + ": the CQE's WQE index is the index the post returned");
          }
          long wrong;
          if (op == OP_READ) {
            wrong = rigA.check(p.bufA().address(), (long) threads * bytes, seed);
          } else {
            wrong = rigB.check(p.bufB().address(), op == OP_SEND ? 0 : (long) threads * bytes, seed);
          }
          if (op == OP_WRITE_IMM || op == OP_SEND) {
            List<Cqe> rc = poll(rigB, p.b(), threads);
            // the k-th send executed (sends go in WQE order) consumed receive k; receive k's slot is in its wrId
            long[] sortedIdx = idx.clone();
            Arrays.sort(sortedIdx);
            int[] srcSlice = new int[threads];
            Set<Integer> imms = new HashSet<>();
            for (Cqe c : rc) {
              assertEquals(WC_SUCCESS, c.status(), what + " receive: " + c);
              assertEquals(op == OP_SEND ? WC_OP_RECV : WC_OP_RECV_RDMA_WITH_IMM, c.opcode(), what + " receive: " + c);
              assertEquals(bytes, c.byteLen(), what + " receive: " + c);
              int slot = (int) (c.wrId() - 0x2000);
              assertTrue(slot >= 0 && slot < threads, what + " receive wrId: " + c);
              long sqIndex = sortedIdx[c.wqeIndex()];
              int sender = -1;
              for (int t = 0; t < threads; t++) if (idx[t] == sqIndex) sender = t;
              srcSlice[slot] = sender;
              if (op == OP_WRITE_IMM) {
                assertEquals(CQE_FLAG_HAS_IMM, c.flags() & CQE_FLAG_HAS_IMM, what + ": " + c);
                assertTrue(imms.add(c.imm()) && c.imm() - 0xABC00000 >= 0 && c.imm() - 0xABC00000 < threads, what + ": " + c);
              }
            }
            if (op == OP_SEND) wrong = rigB.checkSlices(recv.address(), bytes, srcSlice, seed);
          }
          assertEquals(0, wrong, what + ": bytes differ on the receiving GPU");
          assertTrue(p.a().errors().isEmpty(), what + ": " + p.a().errors());
          System.out.printf(Locale.ROOT, "gpuinit: %-15s %d WRs of %d B posted, %d CQEs polled in the kernel, bytes exact on GPU %d%n", what, threads, bytes,
              cqes.size(), op == OP_READ ? devA : devB);
          if (mrRecv != null) ctxB.deregisterMemoryRegion(mrRecv);
        } finally {
          close(p);
        }
      }
    }
  }

  @Test
  @Order(Integer.MAX_VALUE) // unannotated tests default to Integer.MAX_VALUE / 2
  void atomicsFrom256ThreadsOnOneWord() throws Exception {
    Pair p = pair();
    try {
      int n = 256;
      DeviceBuffer old = rigA.alloc(8L * n), st = rigA.alloc(4L * n);
      long word = p.peerOfB().address() + 64;
      assertTrue(rigA.runAndWait("t_atomics", 1, n, KernelArgs.of().pointer(p.a().address()).i64(word).i32(p.peerOfB().rkey()).i32(0)
          .pointer(old.address()).pointer(st.address()), 60_000));
      long[] olds = rigA.longs(old.address(), n);
      for (int s : rigA.ints(st.address(), n)) assertEquals(0, s);
      long[] sorted = olds.clone();
      Arrays.sort(sorted);
      for (int i = 0; i < n; i++) assertEquals(i, sorted[i], "fetch-add old values are a permutation of 0..255");
      assertEquals(n, rigB.longs(p.bufB().address() + 64, 1)[0]);
      assertTrue(rigA.runAndWait("t_atomics", 1, n, KernelArgs.of().pointer(p.a().address()).i64(word).i32(p.peerOfB().rkey()).i32(2)
          .pointer(old.address()).pointer(st.address()), 60_000));
      for (int s : rigA.ints(st.address(), n)) assertEquals(0, s);
      for (long v : rigA.longs(old.address(), n)) assertEquals(n, v, "a READ into the WQE's result cell brings the word");

      long word2 = word + 8;
      assertTrue(rigA.runAndWait("t_atomics", 1, n, KernelArgs.of().pointer(p.a().address()).i64(word2).i32(p.peerOfB().rkey()).i32(1)
          .pointer(old.address()).pointer(st.address()), 60_000));
      long[] cas = rigA.longs(old.address(), n);
      int winner = -1;
      for (int t = 0; t < n; t++) if (cas[t] == 0) {
        assertEquals(-1, winner, "two CAS from 0 succeeded");
        winner = t;
      }
      assertTrue(winner >= 0, "no CAS succeeded");
      for (int t = 0; t < n; t++) if (t != winner) assertEquals(winner + 1L, cas[t], "a failed CAS returns the winner's value");
      assertEquals(winner + 1L, rigB.longs(p.bufB().address() + 72, 1)[0]);
      System.out.printf(Locale.ROOT, "gpuinit: 256 fetch-adds: old values a permutation of 0..255, word 256, read back 256 times into result cells; 256 CAS 0->t+1: one winner (t=%d)%n", winner);
    } finally {
      close(p);
    }
  }

  @Test
  void errorCompletionsReachTheKernelAndTheHost() throws Exception {
    record Case(String name, int expected, boolean badLkey, int rkeyDelta, long raddrOffset) {}
    for (Case k : List.of(new Case("wrong rkey", WC_REM_ACCESS_ERR, false, 12345, 0), new Case("out of bounds", WC_REM_ACCESS_ERR, false, 0, BUF - 4),
        new Case("bad lkey", WC_LOC_PROT_ERR, true, 0, 0))) {
      Pair p = pair();
      try {
        post(p, OP_WRITE, 0, p.bufA().address(), k.badLkey() ? p.mrA().lkey() + 777 : p.mrA().lkey(), p.peerOfB().address() + k.raddrOffset(),
            p.peerOfB().rkey() + k.rkeyDelta(), 8, FLAG_SIGNALED, 1);
        Cqe first = poll(rigA, p.a(), 1).get(0);
        assertEquals(k.expected(), first.status(), k.name() + ": " + first);
        post(p, OP_WRITE, 0, p.bufA().address(), p.mrA().lkey(), p.peerOfB().address(), p.peerOfB().rkey(), 8, 0, 1);
        Cqe flushed = poll(rigA, p.a(), 1).get(0);
        assertEquals(WC_WR_FLUSH_ERR, flushed.status(), k.name() + ", the next WR (unsignaled, a CQE anyway): " + flushed);
        assertFalse(p.a().errors().isEmpty(), k.name() + ": the host sees the error");
        System.out.printf(Locale.ROOT, "gpuinit: %s -> kernel saw %s then %s; host: %s%n", k.name(), statusName(first.status()), statusName(flushed.status()),
            p.a().errors().get(0));
      } finally {
        close(p);
      }
    }
  }

  @Test
  void aSendQueueOf8Takes256PostsWithoutOverwriting() throws Exception {
    Pair p = pair(8, 16, 8);
    try {
      int n = 256, bytes = 512;
      rigA.fill(p.bufA().address(), (long) n * bytes, 77);
      DeviceBuffer out = rigA.alloc((long) CQE_BYTES * n), count = rigA.alloc(8);
      assertTrue(rigA.runAndWait("t_queue_full", 1, n + 32, KernelArgs.of().pointer(p.a().address()).i64(p.bufA().address()).i32(p.mrA().lkey())
          .i64(p.peerOfB().address()).i32(p.peerOfB().rkey()).i32(bytes).pointer(out.address()).pointer(count.address()), 120_000));
      assertEquals(n, rigA.ints(count.address(), 1)[0]);
      Set<Long> ids = new HashSet<>();
      for (Cqe c : rigA.cqes(out.address(), n)) {
        assertEquals(WC_SUCCESS, c.status(), c.toString());
        assertTrue(ids.add(c.wrId()) && c.wrId() >= 0x5000 && c.wrId() < 0x5000 + n, c.toString());
      }
      assertEquals(0, rigB.check(p.bufB().address(), (long) n * bytes, 77));
      System.out.println("gpuinit: SQ 8 / CQ 16: 256 posts from 256 threads (one more warp polls), 256 CQEs polled, bytes exact");
    } finally {
      close(p);
    }
  }

  @Test
  void morisSequenceAndAHandBuiltBatch() throws Exception {
    Pair p = pair();
    try {
      DeviceBuffer cqe = rigA.alloc(CQE_BYTES), wrong = rigB.alloc(8);
      assertTrue(rigA.runAndWait("t_mori_write", 1, 256, KernelArgs.of().pointer(p.a().address()).i64(p.bufA().address()).i32(p.mrA().lkey())
          .i64(p.peerOfB().address()).i32(p.peerOfB().rkey()).i32(1024).i32(42).pointer(cqe.address()), 30_000));
      Cqe c = rigA.cqes(cqe.address(), 1).get(0);
      assertEquals(WC_SUCCESS, c.status(), c.toString());
      assertTrue(rigB.runAndWait("t_verify", 4, 256, KernelArgs.of().pointer(p.bufB().address()).i32(1024).i32(42).pointer(wrong.address()), 10_000));
      assertEquals(0, rigB.ints(wrong.address(), 1)[0], "1024 bytes of 42 on the receiving GPU");

      rigA.fill(p.bufA().address(), 16 * 4096, 5);
      DeviceBuffer out = rigA.alloc(24);
      assertTrue(rigA.runAndWait("t_manual_batch", 1, 1, KernelArgs.of().pointer(p.a().address()).i64(p.bufA().address()).i32(p.mrA().lkey())
          .i64(p.peerOfB().address()).i32(p.peerOfB().rkey()).i32(4096).i32(16).pointer(out.address()), 30_000));
      long[] r = rigA.longs(out.address(), 3);
      assertEquals(0, r[1], "quiet's status");
      assertEquals(0, rigB.check(p.bufB().address(), 16 * 4096, 5));
      // the batch's last WQE was signaled: its CQE is there
      Cqe last = poll(rigA, p.a(), 1).get(0);
      assertEquals(0x4000 + 15, last.wrId());
    } finally {
      close(p);
    }
  }

  @Test
  void roundTripLatencyAndWarpThroughputArePrinted() throws Exception {
    Pair p = pair();
    try {
      int warm = 200, iters = 2000;
      DeviceBuffer ns = rigA.alloc(8L * (warm + iters)), st = rigA.alloc(8);
      assertTrue(rigA.runAndWait("t_latency", 1, 1, KernelArgs.of().pointer(p.a().address()).i64(p.bufA().address()).i32(p.mrA().lkey())
          .i64(p.peerOfB().address()).i32(p.peerOfB().rkey()).i32(warm + iters).pointer(ns.address()).pointer(st.address()), 120_000));
      assertEquals(0, rigA.ints(st.address(), 1)[0]);
      long[] all = rigA.longs(ns.address(), warm + iters);
      long[] t = Arrays.copyOfRange(all, warm, warm + iters);
      Arrays.sort(t);
      System.out.printf(Locale.ROOT, "gpuinit: GPU-posted 8-byte write, CQE polled in the kernel (host proxy, TCP, GPU %d -> GPU %d): round trip "
          + "min %.1f us, p50 %.1f us, p99 %.1f us, max %.1f us over %d%n", devA, devB, t[0] / 1e3, t[iters / 2] / 1e3, t[iters * 99 / 100] / 1e3,
          t[iters - 1] / 1e3, iters);

      int bytes = 4096, rounds = 512, slices = 256;
      DeviceBuffer out = rigA.alloc(16);
      assertTrue(rigA.runAndWait("t_warp_throughput", 1, 32, KernelArgs.of().pointer(p.a().address()).i64(p.bufA().address()).i32(p.mrA().lkey())
          .i64(p.peerOfB().address()).i32(p.peerOfB().rkey()).i32(bytes).i32(rounds).i32(slices).pointer(out.address()), 300_000));
      long[] r = rigA.longs(out.address(), 2);
      assertEquals(0, r[1], "quiet's status");
      long wrs = (long) rounds * 32;
      double sec = r[0] / 1e9;
      System.out.printf(Locale.ROOT, "gpuinit: one warp posting 4 KiB writes (warp scope, unsignaled, quiet at the end): %d WRs, %.1f MiB in %.3f s = "
          + "%.0f WR/s, %.3f GB/s (host proxy, TCP, GPU %d -> GPU %d)%n", wrs, wrs * bytes / 1048576.0, sec, wrs / sec, wrs * bytes / sec / 1e9, devA, devB);
    } finally {
      close(p);
    }
  }
}
