// Test kernels for every function of mori_shmem.cuh, run by DeviceApiScenario on each PE of a group (every
// PE runs the same kernel with peer = another PE). Data written to a peer is pattern(seed = writer's rank), a
// function the host side (DeviceApiScenario.pattern) computes the same way, so the receiving PE can check it
// in the kernel (ordering) and on the host (bytes exact).
#include "mori_shmem.cuh"

__device__ __forceinline__ unsigned char pattern(int seed, unsigned long long i) {
  unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull + (unsigned long long) seed * 0xD1B54A32D192ED03ull;
  return (unsigned char) (x >> 56);
}

extern "C" __global__ void t_fill(unsigned char* p, unsigned long long n, int seed) {
  for (unsigned long long i = blockIdx.x * (unsigned long long) blockDim.x + threadIdx.x; i < n; i += (unsigned long long) gridDim.x * blockDim.x)
    p[i] = pattern(seed, i);
}

extern "C" __global__ void t_set(unsigned char* p, unsigned long long n, unsigned char value) {
  for (unsigned long long i = blockIdx.x * (unsigned long long) blockDim.x + threadIdx.x; i < n; i += (unsigned long long) gridDim.x * blockDim.x)
    p[i] = value;
}

// out: my_pe, n_pes, ptr_p2p(sym -> peer), ptr_p2p(sym -> me), ptr_p2p(not heap -> peer), ptr(sym, peer)
extern "C" __global__ void t_query(unsigned long long* out, unsigned long long sym, int peer) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  int me = mori_shmem_my_pe();
  out[0] = me;
  out[1] = mori_shmem_n_pes();
  out[2] = mori_shmem_ptr_p2p(sym, me, peer);
  out[3] = mori_shmem_ptr_p2p(sym, me, me);
  out[4] = mori_shmem_ptr_p2p(0x10, me, peer);
  out[5] = mori_shmem_ptr(sym, peer);
  out[6] = mori_shmem_ptr_p2p(sym, me, mori_shmem_n_pes());
}

// scope: 0 thread (thread 0 of block 0), 1 warp (warp 0 of block 0), 2 block (block 0)
extern "C" __global__ void t_put(int scope, unsigned char* dst, const unsigned char* src, unsigned long long bytes, int peer) {
  if (blockIdx.x != 0) return;
  if (scope == 0 && threadIdx.x == 0) mori_shmem_putmem_nbi_thread(dst, src, bytes, peer, 0);
  if (scope == 1 && threadIdx.x < warpSize) mori_shmem_putmem_nbi_warp(dst, src, bytes, peer, 0);
  if (scope == 2) mori_shmem_putmem_nbi_block(dst, src, bytes, peer, 0);
  mori_shmem_quiet_thread();
}

// scope 0..2 non-blocking as t_put, 3..5 the blocking gets
extern "C" __global__ void t_get(int scope, unsigned char* dst, const unsigned char* src, unsigned long long bytes, int peer) {
  if (blockIdx.x != 0) return;
  if (scope == 0 && threadIdx.x == 0) mori_shmem_getmem_nbi_thread(dst, src, bytes, peer, 0);
  if (scope == 1 && threadIdx.x < warpSize) mori_shmem_getmem_nbi_warp(dst, src, bytes, peer, 0);
  if (scope == 2) mori_shmem_getmem_nbi_block(dst, src, bytes, peer, 0);
  if (scope == 3 && threadIdx.x == 0) mori_shmem_getmem_thread(dst, src, bytes, peer, 0);
  if (scope == 4 && threadIdx.x < warpSize) mori_shmem_getmem_warp(dst, src, bytes, peer, 0);
  if (scope == 5) mori_shmem_getmem_block(dst, src, bytes, peer, 0);
}

// Per type k (region base = k * 4096 in dst, src and gout): elements [0,32) by the thread put, [32,64) warp,
// [64,96) block; element 96 by _p with value 0x5A + me; gets of the same three ranges from the peer's src into
// gout, and element 96 of gout by _g from the peer's src element 96.
#define T_TYPED(K, NAME, T)                                                                                   \
  {                                                                                                           \
    unsigned char* d = dst + (K) * 4096ull;                                                                   \
    const unsigned char* s = src + (K) * 4096ull;                                                             \
    unsigned char* g = gout + (K) * 4096ull;                                                                  \
    if (threadIdx.x == 0) mori_shmem_put_##NAME##_nbi_thread((T*) d, (const T*) s, 32, peer, 0);              \
    if (threadIdx.x < warpSize)                                                                               \
      mori_shmem_put_##NAME##_nbi_warp((T*) d + 32, (const T*) s + 32, 32, peer, 0);                          \
    mori_shmem_put_##NAME##_nbi_block((T*) d + 64, (const T*) s + 64, 32, peer, 0);                           \
    if (threadIdx.x == 0) mori_shmem_##NAME##_p((T*) d + 96, (T) (0x5A + me), peer, 0);                        \
    if (threadIdx.x == 0) mori_shmem_get_##NAME##_nbi_thread((T*) g, (const T*) s, 32, peer, 0);              \
    if (threadIdx.x < warpSize)                                                                               \
      mori_shmem_get_##NAME##_nbi_warp((T*) g + 32, (const T*) s + 32, 32, peer, 0);                          \
    mori_shmem_get_##NAME##_nbi_block((T*) g + 64, (const T*) s + 64, 32, peer, 0);                           \
    if (threadIdx.x == 0) ((T*) g)[96] = mori_shmem_##NAME##_g((const T*) s + 96, peer, 0);                   \
  }

extern "C" __global__ void t_typed(unsigned char* dst, const unsigned char* src, unsigned char* gout, int peer) {
  const int me = mori_shmem_my_pe();
  T_TYPED(0, uint8, uint8_t)
  T_TYPED(1, int8, int8_t)
  T_TYPED(2, uint16, uint16_t)
  T_TYPED(3, int16, int16_t)
  T_TYPED(4, uint32, uint32_t)
  T_TYPED(5, int32, int32_t)
  T_TYPED(6, uint64, uint64_t)
  T_TYPED(7, int64, int64_t)
  T_TYPED(8, float, float)
  T_TYPED(9, double, double)
  mori_shmem_quiet_thread();
}

// Every block b of the grid puts chunk b of src to the peer's dst and signals the peer's sig (scope 0: one
// thread per block puts its chunk, 1: warp 0, 2: the block). op SIGNAL_ADD adds 1 per block; SIGNAL_SET sets
// value (only block 0 then). Meanwhile thread 0 of the last block waits on this PE's sig for the expected
// value and then counts bytes of this PE's dst that do not yet hold the peer's pattern (a signal seen before
// its data would show as mismatches): out[0] = mismatches, out[1] = the signal value seen.
extern "C" __global__ void t_signal(int scope, unsigned char* dst, const unsigned char* src, unsigned long long chunk, unsigned long long* sig,
                                    int op, unsigned long long value, int peer, unsigned long long* out) {
  const unsigned long long off = blockIdx.x * chunk;
  const bool sender = op == SIGNAL_ADD || blockIdx.x == 0;
  if (sender) {
    if (scope == 0 && threadIdx.x == 0)
      mori_shmem_putmem_nbi_signal_thread(dst + off, src + off, chunk, sig, value, (atomicType) op, peer, 0);
    if (scope == 1 && threadIdx.x < warpSize)
      mori_shmem_putmem_nbi_signal_warp(dst + off, src + off, chunk, sig, value, (atomicType) op, peer, 0);
    if (scope == 2) mori_shmem_putmem_nbi_signal_block(dst + off, src + off, chunk, sig, value, (atomicType) op, peer, 0);
  }
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) {
    const unsigned long long expect = op == SIGNAL_ADD ? value * gridDim.x : value;
    out[1] = mori_shmem_uint64_wait_until_equals((uint64_t*) sig, expect);
    const unsigned long long total = op == SIGNAL_ADD ? chunk * gridDim.x : chunk;
    unsigned long long bad = 0;
    for (unsigned long long i = 0; i < total; i++) if (((volatile unsigned char*) dst)[i] != pattern(peer, i)) bad++;
    out[0] = bad;
  }
}

// The wait variants on words the peer sets with _p: w64[0] = 5, w32[0] = 7, i32[0] = -3, i64[0] = -9 (w64[1],
// w32[1] stay 0). Results in out, in the order the host expects.
extern "C" __global__ void t_waits(uint64_t* w64, uint32_t* w32, int32_t* i32, int64_t* i64, int peer, long long* out) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  mori_shmem_uint64_p(w64, 5, peer, 0);
  mori_shmem_uint32_p(w32, 7, peer, 0);
  mori_shmem_int32_p(i32, -3, peer, 0);
  mori_shmem_int64_p(i64, -9, peer, 0);
  mori_shmem_fence();
  int k = 0;
  out[k++] = (long long) mori_shmem_uint64_wait_until_equals(w64, 5);
  out[k++] = (long long) mori_shmem_uint64_wait_until_greater_than(w64, 4);
  out[k++] = (long long) mori_shmem_uint64_wait_until_greater_or_equal(w64, 5);
  out[k++] = (long long) mori_shmem_uint64_wait_until_not_equals(w64, 0);
  out[k++] = (long long) mori_shmem_uint64_wait_until_less_than(w64 + 1, 1);
  out[k++] = (long long) mori_shmem_uint64_wait_until_less_or_equal(w64 + 1, 0);
  out[k++] = (long long) mori_shmem_uint32_wait_until_equals(w32, 7);
  out[k++] = (long long) mori_shmem_uint32_wait_until_greater_than(w32, 6);
  out[k++] = (long long) mori_shmem_uint32_wait_until_not_equals(w32 + 1, 1);
  out[k++] = (long long) mori_shmem_int32_wait_until_less_than(i32, 0);
  out[k++] = (long long) mori_shmem_int32_wait_until_equals(i32, -3);
  out[k++] = (long long) mori_shmem_int64_wait_until_less_or_equal(i64, -9);
  out[k++] = (long long) mori_shmem_int64_wait_until_greater_than(i64, -10);
}

// Contention: every thread of every PE's grid adds to PE 0's counters and records the old values it got
// (a permutation of 0..total-1 across all PEs when the adds are atomic), then increments PE 0's CAS words
// with compare-swap loops.
extern "C" __global__ void t_atomics(uint32_t* c32, uint64_t* c64, uint32_t* cas32, uint64_t* cas64, int32_t* s32, int64_t* s64,
                                     uint32_t* olds32, uint64_t* olds64) {
  const unsigned long long tid = blockIdx.x * (unsigned long long) blockDim.x + threadIdx.x;
  olds32[tid] = mori_shmem_uint32_atomic_fetch_add_thread(c32, 1, 0, 0);
  olds64[tid] = mori_shmem_uint64_atomic_fetch_add_thread(c64, 1, 0, 0);
  mori_shmem_uint32_atomic_add_thread(c32 + 1, 2, 0, 0);
  mori_shmem_uint64_atomic_add_thread(c64 + 1, 3, 0, 0);
  mori_shmem_int64_atomic_add_thread(s64, -1, 0, 0);
  mori_shmem_int64_atomic_fetch_add_thread(s64 + 1, -2, 0, 0);
  mori_shmem_int32_atomic_fetch_add_thread(s32, -1, 0, 0);
  uint32_t seen32 = 0;
  for (;;) {
    uint32_t old = mori_shmem_uint32_atomic_compare_swap_thread(cas32, seen32, seen32 + 1, 0, 0);
    if (old == seen32) break;
    seen32 = old;
  }
  uint64_t seen64 = 0;
  for (;;) {
    uint64_t old = mori_shmem_uint64_atomic_compare_swap_thread(cas64, seen64, seen64 + 1, 0, 0);
    if (old == seen64) break;
    seen64 = old;
  }
  int32_t si = 0;
  for (;;) {
    int32_t old = mori_shmem_int32_atomic_compare_swap_thread(s32 + 1, si, si - 1, 0, 0);
    if (old == si) break;
    si = old;
  }
  int64_t sl = 0;
  for (;;) {
    int64_t old = mori_shmem_int64_atomic_compare_swap_thread(s64 + 2, sl, sl + 7, 0, 0);
    if (old == sl) break;
    sl = old;
  }
}

// MORI's generic fetching atomics, one thread, on the peer's words (w64 and w32 start at 0); every returned
// value goes to out in order.
extern "C" __global__ void t_generic_atomics(uint64_t* w64, uint32_t* w32, int peer, unsigned long long* out) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  int k = 0;
  out[k++] = mori_shmem_atomic_uint64_fetch_thread(w64, 10, 0, AMO_FETCH_ADD, peer, 0);      // 0 -> 10
  out[k++] = mori_shmem_atomic_uint64_fetch_thread(w64, 0, 0, AMO_FETCH_INC, peer, 0);       // 10 -> 11
  out[k++] = mori_shmem_atomic_uint64_fetch_thread(w64, 0xF0, 0, AMO_FETCH_OR, peer, 0);     // 11 -> 0xFB
  out[k++] = mori_shmem_atomic_uint64_fetch_thread(w64, 0x0F, 0, AMO_FETCH_AND, peer, 0);    // 0xFB -> 0x0B
  out[k++] = mori_shmem_atomic_uint64_fetch_thread(w64, 0xFF, 0, AMO_FETCH_XOR, peer, 0);    // 0x0B -> 0xF4
  out[k++] = mori_shmem_atomic_uint64_fetch_thread(w64, 1234, 0, AMO_SWAP, peer, 0);         // 0xF4 -> 1234
  out[k++] = mori_shmem_atomic_uint64_fetch_thread(w64, 99, 1, AMO_COMPARE_SWAP, peer, 0);   // no swap
  out[k++] = mori_shmem_atomic_uint64_fetch_thread(w64, 99, 1234, AMO_COMPARE_SWAP, peer, 0);  // 1234 -> 99
  out[k++] = mori_shmem_atomic_uint64_fetch_thread(w64, 0, 0, AMO_FETCH, peer, 0);           // 99
  out[k++] = mori_shmem_atomic_uint32_fetch_thread(w32, 5, 0, AMO_FETCH_ADD, peer, 0);       // 0 -> 5
  out[k++] = mori_shmem_atomic_uint32_fetch_thread(w32, 8, 5, AMO_COMPARE_SWAP, peer, 0);    // 5 -> 8
  out[k++] = mori_shmem_atomic_uint32_fetch_thread(w32, 3, 0, AMO_SWAP, peer, 0);            // 8 -> 3
  out[k++] = mori_shmem_atomic_uint32_fetch_thread(w32, 0, 0, AMO_FETCH, peer, 0);           // 3
}

// Device barriers: in round r every PE writes r into slot[me] on every PE, then barriers; after the barrier
// every slot here must hold r (a barrier that let a PE through early shows as a stale slot).
extern "C" __global__ void t_barrier(unsigned long long* slots, int rounds, int useBlock, unsigned long long* out) {
  const int me = mori_shmem_my_pe(), n = mori_shmem_n_pes();
  unsigned long long stale = 0;
  for (int r = 1; r <= rounds; r++) {
    if (threadIdx.x == 0)
      for (int pe = 0; pe < n; pe++) mori_shmem_uint64_p((uint64_t*) slots + me, (uint64_t) r, pe, 0);
    if (useBlock) {
      mori_shmem_barrier_all_block();
    } else {
      __syncthreads();
      if (threadIdx.x == 0) {
        mori_shmem_fence();
        mori_shmem_barrier_all_thread();
      }
      __syncthreads();
    }
    if (threadIdx.x == 0)
      for (int pe = 0; pe < n; pe++) if (((volatile unsigned long long*) slots)[pe] < (unsigned long long) r) stale++;
    // nobody may write round r+1 before everyone has read round r
    if (useBlock) mori_shmem_barrier_all_block();
    else {
      __syncthreads();
      if (threadIdx.x == 0) mori_shmem_barrier_all_thread();
      __syncthreads();
    }
  }
  if (threadIdx.x == 0) out[0] = stale;
}

// Ordering: block 0 writes data = i then (after fence, or quiet when useQuiet) flag = i to the peer, for i up
// to n; block 1 watches this PE's words: whenever it sees flag = f, data must already be >= f. The put's source
// is a heap word (stage): through an endpoint the source must be registered memory.
extern "C" __global__ void t_fence(unsigned long long* data, unsigned long long* flag, unsigned long long n, int useQuiet, int peer,
                                   unsigned long long* out, unsigned long long* stage) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    for (unsigned long long i = 1; i <= n; i++) {
      *(volatile unsigned long long*) stage = i;
      mori_shmem_putmem_nbi_thread(data, stage, 8, peer, 0);
      if (useQuiet) mori_shmem_quiet_thread();
      else mori_shmem_fence();
      mori_shmem_uint64_p((uint64_t*) flag, i, peer, 0);
    }
  } else {
    unsigned long long violations = 0, f = 0;
    while (f < n) {
      f = *(volatile unsigned long long*) flag;
      __threadfence_system();  // the flag and the data come from another GPU: a device-scope fence would not order them
      unsigned long long d = *(volatile unsigned long long*) data;
      if (d < f) violations++;
    }
    out[0] = violations;
  }
}
