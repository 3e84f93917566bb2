package org.mori4j.shmem;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.KernelArgs;

/**
 * Every device function of {@code mori_shmem.cuh}, exercised by the kernels of {@code device_api_test.cu} on
 * a real GPU: every PE of the group runs this same sequence (collective calls in the same order) with
 * {@code peer} = the next PE, and checks what landed in its own memory. Returns the failed checks (empty when
 * all passed) instead of throwing, so that a PE whose check fails still takes part in the remaining
 * collective steps and the other PE does not wait for it in vain. When the peer has no direct path
 * ({@code MORI_DISABLE_P2P}) every call goes through the GPU-initiated endpoints and the host proxy: the same
 * checks, with smaller grids where the proxy executes one atomic at a time (compare-and-swap loops cost a
 * round trip per try).
 */
final class DeviceApiScenario {
  private static final long MIB = 1 << 20;
  private static final int THREADS = 256;

  private final Shmem pe;
  private final GpuStream stream;
  private final int me, n, peer, writer;
  /** The peer is reached through endpoints (no P2P mapping). */
  private final boolean proxied;
  private final List<String> failures = new ArrayList<>();
  private final List<String> passed = new ArrayList<>();
  private GpuModule module;

  DeviceApiScenario(Shmem pe, GpuStream stream) {
    this.pe = pe;
    this.stream = stream;
    this.me = pe.myPe();
    this.n = pe.nPes();
    this.peer = (me + 1) % n;
    this.writer = (me + n - 1) % n; // the PE whose puts land here
    this.proxied = !pe.hasDirectPath(peer);
  }

  static String source() {
    try (InputStream in = DeviceApiScenario.class.getResourceAsStream("/org/mori4j/shmem/device_api_test.cu")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The byte the kernels' {@code pattern(seed, i)} gives. */
  static byte pattern(int seed, long i) {
    long x = (i + 1) * 0x9E3779B97F4A7C15L + seed * 0xD1B54A32D192ED03L;
    return (byte) (x >>> 56);
  }

  List<String> passed() {
    return passed;
  }

  List<String> run() {
    long src = pe.malloc(2 * MIB + 4096), dst = pe.malloc(2 * MIB + 4096), words = pe.malloc(64 * 1024);
    long gout = pe.malloc(64 * 1024);
    try (DeviceBuffer local = pe.gpu().allocDevice(pe.device(), 2 * MIB + 4096); DeviceBuffer out = pe.gpu().allocDevice(pe.device(), 4096)) {
      // over endpoints the local side of a get must be a memory region: registered (collectively) before moduleInit
      if (proxied) {
        pe.bufferRegister(local.address(), 2 * MIB + 4096);
        pe.bufferRegister(out.address(), 4096);
      }
      try {
        steps(src, dst, words, gout, local, out);
      } finally {
        if (proxied) {
          pe.bufferDeregister(out.address(), 4096);
          pe.bufferDeregister(local.address(), 2 * MIB + 4096);
        }
      }
    } catch (RuntimeException e) {
      failures.add("aborted: " + e);
    }
    pe.free(gout);
    pe.free(words);
    pe.free(dst);
    pe.free(src);
    return failures;
  }

  private void steps(long src, long dst, long words, long gout, DeviceBuffer local, DeviceBuffer out) {
    try (GpuModule m = ShmemKernels.compile(pe, source(), "device_api_test.cu")) {
      module = m;
      // every PE's modules are loaded before any kernel spins (PEs sharing a GPU in one process)
      pe.loadBarrierKernel();
      pe.barrierAll();
      query(src, out.address());
      for (int scope = 0; scope < 3; scope++) puts(scope, src, dst);
      for (int scope = 0; scope < 6; scope++) gets(scope, src, local.address());
      typed(src, dst, gout);
      for (int scope = 0; scope < 3; scope++) {
        signal(scope, 10, src, dst, words, out.address()); // SIGNAL_ADD
        signal(scope, 9, src, dst, words, out.address());  // SIGNAL_SET
      }
      waits(words, out.address());
      atomics(words, src, dst);
      genericAtomics(words, out.address());
      deviceBarrier(words, out.address(), true);
      deviceBarrier(words, out.address(), false);
      ordering(words, out.address(), false);
      ordering(words, out.address(), true);
    }
  }

  // ---- steps ----

  private void query(long sym, long out) {
    launch("t_query", 1, 1, KernelArgs.of().pointer(out).i64(sym).i32(peer));
    pe.barrierAll(stream);
    long[] v = readLongs(out, 7);
    boolean p2p = proxied ? v[2] == 0 : v[2] != 0;
    check("query", v[0] == me && v[1] == n && v[2] == pe.ptrP2p(sym, me, peer) && p2p && v[3] == sym && v[4] == 0 && v[5] == v[2] && v[6] == 0,
        java.util.Arrays.toString(v) + " host ptrP2p 0x" + Long.toHexString(pe.ptrP2p(sym, me, peer)));
  }

  private void puts(int scope, long src, long dst) {
    long[][] cases = {{1, 0, 0}, {7, 1, 3}, {4099, 16, 16}, {65541, 5, 5}, {MIB + 3, 8, 0}, {2 * MIB, 0, 0}};
    for (long[] c : cases) {
      long size = c[0], dOff = c[1], sOff = c[2];
      set(dst, 2 * MIB + 4096, 0);
      fillPattern(src, 2 * MIB + 4096, me);
      pe.barrierAll(stream);
      launch("t_put", 1, THREADS, KernelArgs.of().i32(scope).pointer(dst + dOff).pointer(src + sOff).i64(size).i32(peer));
      pe.barrierAll(stream);
      checkLanded("put scope " + scope + " " + size + " B", dst, dOff, sOff, size, writer);
    }
  }

  private void gets(int scope, long src, long local) {
    long[][] cases = {{1, 0, 0}, {4099, 3, 7}, {MIB + 5, 16, 16}};
    for (long[] c : cases) {
      long size = c[0], dOff = c[1], sOff = c[2];
      set(local, 2 * MIB + 4096, 0);
      fillPattern(src, 2 * MIB + 4096, me);
      pe.barrierAll(stream);
      launch("t_get", 1, THREADS, KernelArgs.of().i32(scope).pointer(local + dOff).pointer(src + sOff).i64(size).i32(peer));
      pe.barrierAll(stream); // the peer may overwrite its src only after this PE has read it
      checkLanded("get scope " + scope + " " + size + " B", local, dOff, sOff, size, peer);
    }
  }

  private void typed(long src, long dst, long gout) {
    set(dst, 40960, 0);
    set(gout, 40960, 0);
    fillPattern(src, 40960, me);
    pe.barrierAll(stream);
    launch("t_typed", 1, THREADS, KernelArgs.of().pointer(dst).pointer(src).pointer(gout).i32(peer));
    pe.barrierAll(stream);
    byte[] d = read(dst, 40960), g = read(gout, 40960);
    int[] sizes = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};
    String[] names = {"uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64", "float", "double"};
    for (int k = 0; k < 10; k++) {
      int s = sizes[k], base = k * 4096;
      int badPut = 0, badGet = 0;
      for (int i = 0; i < 96 * s; i++) {
        if (d[base + i] != pattern(writer, base + i)) badPut++;
        if (g[base + i] != pattern(peer, base + i)) badGet++;
      }
      check("put_" + names[k] + "_nbi_{thread,warp,block}", badPut == 0, badPut + " bytes wrong");
      check("get_" + names[k] + "_nbi_{thread,warp,block}", badGet == 0, badGet + " bytes wrong");
      check(names[k] + "_p", matchesValue(d, base + 96 * s, s, k, 0x5A + writer), "element bytes " + hex(d, base + 96 * s, s));
      boolean g96 = true;
      for (int i = 0; i < s; i++) g96 &= g[base + 96 * s + i] == pattern(peer, base + 96L * s + i);
      check(names[k] + "_g", g96, "element bytes " + hex(g, base + 96 * s, s));
    }
  }

  /** The little-endian bytes of {@code (T) value} for type index k. */
  private static boolean matchesValue(byte[] b, int at, int size, int k, int value) {
    long bits = switch (k) {
      case 8 -> Float.floatToRawIntBits(value) & 0xFFFF_FFFFL;
      case 9 -> Double.doubleToRawLongBits(value);
      default -> value;
    };
    for (int i = 0; i < size; i++) if (b[at + i] != (byte) (bits >>> (8 * i))) return false;
    return true;
  }

  private void signal(int scope, int op, long src, long dst, long words, long out) {
    int blocks = 8;
    long chunk = scope == 0 ? 4099 : 65536 + 16;
    long total = op == 10 ? chunk * blocks : chunk;
    set(dst, total + 64, 0);
    set(words, 8, 0);
    set(out, 16, 0xFF);
    fillPattern(src, total, me);
    pe.barrierAll(stream);
    long value = op == 10 ? 1 : 42;
    launch("t_signal", blocks, THREADS, KernelArgs.of().i32(scope).pointer(dst).pointer(src).i64(chunk).pointer(words).i32(op).i64(value).i32(peer).pointer(out));
    pe.barrierAll(stream);
    long[] v = readLongs(out, 2);
    String what = "putmem_nbi_signal scope " + scope + (op == 10 ? " SIGNAL_ADD" : " SIGNAL_SET");
    check(what + ": data there when the signal is", v[0] == 0 && v[1] == (op == 10 ? blocks : 42), "mismatches " + v[0] + ", signal " + v[1]);
    checkLanded(what + " bytes", dst, 0, 0, total, writer);
    pe.barrierAll(stream);
  }

  private void waits(long words, long out) {
    set(words, 64, 0);
    pe.barrierAll(stream);
    launch("t_waits", 1, 1, KernelArgs.of().pointer(words).pointer(words + 16).pointer(words + 32).pointer(words + 48).i32(peer).pointer(out));
    pe.barrierAll(stream);
    long[] v = readLongs(out, 13);
    long[] expect = {5, 5, 5, 5, 0, 0, 7, 7, 0, -3, -3, -9, -9};
    check("wait_until_{equals,not_equals,greater_than,greater_or_equal,less_than,less_or_equal}", java.util.Arrays.equals(v, expect),
        java.util.Arrays.toString(v));
  }

  private void atomics(long words, long oldsA, long oldsB) {
    int blocks = proxied ? 1 : 16, threads = proxied ? 64 : THREADS, total = blocks * threads * n;
    set(words, 4096, 0);
    pe.barrierAll(stream);
    long c32 = words, c64 = words + 64, cas32 = words + 128, cas64 = words + 192, s32 = words + 256, s64 = words + 320;
    launch("t_atomics", blocks, threads, KernelArgs.of().pointer(c32).pointer(c64).pointer(cas32).pointer(cas64).pointer(s32).pointer(s64)
        .pointer(oldsA).pointer(oldsB));
    pe.barrierAll(stream);
    // every PE's old values, through the host exchange (works without mappings of the others' memory)
    int[] mine32 = readInts(oldsA, blocks * threads);
    long[] mine64 = readLongs(oldsB, blocks * threads);
    long[] packed = new long[2 * blocks * threads];
    for (int i = 0; i < mine32.length; i++) {
      packed[i] = mine32[i];
      packed[mine32.length + i] = mine64[i];
    }
    long[][] olds = pe.exchangeLongs(packed);
    if (me != 0) {
      long[] untouched = readLongs(words, 48);
      check("atomics target only PE 0", java.util.Arrays.stream(untouched).allMatch(x -> x == 0), "PE " + me + "'s words changed");
      return;
    }
    int[] w32 = readInts(words, 160);
    long[] w64 = readLongs(words, 48);
    check("uint32 fetch_add / add under contention", w32[0] == total && w32[1] == 2 * total, w32[0] + ", " + w32[1] + " of " + total);
    check("uint64 fetch_add / add under contention", w64[8] == total && w64[9] == 3L * total, w64[8] + ", " + w64[9]);
    check("uint32 / uint64 compare_swap loops", w32[32] == total && w64[24] == total, w32[32] + ", " + w64[24]);
    check("int32 fetch_add and compare_swap", w32[64] == -total && w32[65] == -total, w32[64] + ", " + w32[65]);
    check("int64 add, fetch_add, compare_swap", w64[40] == -total && w64[41] == -2L * total && w64[42] == 7L * total,
        w64[40] + ", " + w64[41] + ", " + w64[42]);
    BitSet seen32 = new BitSet(total), seen64 = new BitSet(total);
    boolean inRange = true;
    int per = blocks * threads;
    for (int p = 0; p < n; p++) {
      for (int i = 0; i < per; i++) {
        long o32 = (int) olds[p][i], o64 = olds[p][per + i];
        if (o32 < 0 || o32 >= total || o64 < 0 || o64 >= total) inRange = false;
        else {
          seen32.set((int) o32);
          seen64.set((int) o64);
        }
      }
    }
    check("fetch_add old values are a permutation (every add atomic)" + (proxied ? " (" + total + " threads through endpoints)" : ""),
        inRange && seen32.cardinality() == total && seen64.cardinality() == total,
        "distinct " + seen32.cardinality() + " / " + seen64.cardinality() + " of " + total);
  }

  private void genericAtomics(long words, long out) {
    set(words, 64, 0);
    pe.barrierAll(stream);
    launch("t_generic_atomics", 1, 1, KernelArgs.of().pointer(words).pointer(words + 8).i32(peer).pointer(out));
    pe.barrierAll(stream);
    long[] v = readLongs(out, 13);
    long[] expect = {0, 10, 11, 0xFB, 0x0B, 0xF4, 1234, 1234, 99, 0, 5, 8, 3};
    check("atomic_{uint64,uint32}_fetch_thread (FETCH_ADD/INC/OR/AND/XOR, SWAP, COMPARE_SWAP, FETCH)", java.util.Arrays.equals(v, expect),
        java.util.Arrays.toString(v));
    long[] w = readLongs(words, 2);
    check("generic atomics' final words", w[0] == 99 && (int) w[1] == 3, java.util.Arrays.toString(w));
  }

  private void deviceBarrier(long words, long out, boolean block) {
    set(words + 1024, 8L * n, 0);
    pe.barrierAll(stream);
    launch("t_barrier", 1, THREADS, KernelArgs.of().pointer(words + 1024).i32(200).i32(block ? 1 : 0).pointer(out));
    pe.barrierAll(stream);
    long stale = readLongs(out, 1)[0];
    check("barrier_all_" + (block ? "block" : "thread") + " x200", stale == 0, stale + " stale slots seen after a barrier");
  }

  private void ordering(long words, long out, boolean quiet) {
    set(words + 2048, 128, 0);
    pe.barrierAll(stream);
    launch("t_fence", 2, 32, KernelArgs.of().pointer(words + 2048).pointer(words + 2056).i64(proxied ? 2000 : 20000).i32(quiet ? 1 : 0).i32(peer)
        .pointer(out).pointer(words + 2112));
    pe.barrierAll(stream);
    long violations = readLongs(out, 1)[0];
    check((quiet ? "quiet_thread" : "fence") + " orders a put before the next", violations == 0, violations + " flags seen before their data");
  }

  // ---- helpers ----

  private void launch(String kernel, int blocks, int threads, KernelArgs args) {
    pe.gpu().launch(module.function(kernel), Dim3.of(blocks), Dim3.of(threads), 0, stream, args);
  }

  private void set(long p, long bytes, int value) {
    launch("t_set", 64, THREADS, KernelArgs.of().pointer(p).i64(bytes).i32(value & 0xff));
  }

  private void fillPattern(long p, long bytes, int seed) {
    launch("t_fill", 128, THREADS, KernelArgs.of().pointer(p).i64(bytes).i32(seed));
  }

  private void checkLanded(String what, long base, long dOff, long sOff, long size, int seed) {
    byte[] got = read(base, dOff + size + 1);
    long bad = 0;
    for (long i = 0; i < size; i++) if (got[(int) (dOff + i)] != pattern(seed, sOff + i)) bad++;
    boolean edges = (dOff == 0 || got[(int) dOff - 1] == 0) && got[(int) (dOff + size)] == 0;
    check(what, bad == 0 && edges, bad + " of " + size + " bytes wrong" + (edges ? "" : ", bytes outside the range written"));
  }

  private byte[] read(long device, long bytes) {
    stream.synchronize();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment host = a.allocate(bytes, 8);
      pe.gpu().copyDeviceToHost(host, device, bytes);
      return host.toArray(ValueLayout.JAVA_BYTE);
    }
  }

  private long[] readLongs(long device, int count) {
    stream.synchronize();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment host = a.allocate(8L * count, 8);
      pe.gpu().copyDeviceToHost(host, device, 8L * count);
      return host.toArray(ValueLayout.JAVA_LONG);
    }
  }

  private int[] readInts(long device, int count) {
    stream.synchronize();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment host = a.allocate(4L * count, 8);
      pe.gpu().copyDeviceToHost(host, device, 4L * count);
      return host.toArray(ValueLayout.JAVA_INT);
    }
  }

  private static String hex(byte[] b, int at, int n) {
    return java.util.HexFormat.of().formatHex(b, at, at + n);
  }

  private void check(String what, boolean ok, String detail) {
    if (ok) passed.add(what);
    else failures.add("PE " + me + ": " + what + ": " + detail);
  }
}
