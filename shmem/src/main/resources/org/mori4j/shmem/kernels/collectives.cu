// mori4j shmem collectives: all-reduce (two kernels), broadcast and all-gather over the symmetric heap, written
// against the shmem device library (mori_shmem.cuh) and compiled with it at run time (ShmemKernels). The host
// side is org.mori4j.shmem.collectives.ShmemCollectives, which owns the signal words and the scratch area and
// passes every kernel the same epoch on every PE (one more per call; all PEs call the collectives in the same
// order, as with NCCL).
//
// Synchronisation: every kernel is bracketed by per-block barriers on signal words in the symmetric heap.
// Block b of each PE signals block b of the others by storing the call's epoch into a slot of theirs
// (signals[phase][b][sourcePe]) and waits until the slots of the PEs it depends on hold at least that epoch.
// All PEs run the same grid over the same element ranges, so block b only ever exchanges data with the blocks
// b of the others and a per-block barrier is enough:
//   - start: a PE's data is ready when its kernel starts (stream order), so waiting for the peers' start
//     signals makes their inputs readable and tells us their previous call is over;
//   - end: a kernel that others write into ends only after their end signals, so when it completes on its
//     stream, the result in its buffer is whole, and the caller may overwrite the buffer at once.
// Values are plain epochs (1, 2, ...) in phases 0 and 1, and (epoch << 24) + chunk + 1 for kernel B's chunk
// signals (phase 2), so each phase's values only grow and ">= expected" needs no reset between calls.
//
// Reductions accumulate in fp32 in PE order (PE 0's value, + PE 1's, ...), then round to the element type
// (round to nearest even), so every PE gets the same bits and a CPU reference can reproduce them exactly.
#include "mori_shmem.cuh"

#define MORI4J_COLL_MAX_BLOCKS 256
#define MORI4J_COLL_PHASES 3
#define MORI4J_COLL_PHASE_START 0
#define MORI4J_COLL_PHASE_END 1
#define MORI4J_COLL_PHASE_CHUNK 2
// 16-byte vectors per thread per loop iteration: independent loads in flight over NVLink.
#define MORI4J_COLL_UNROLL 4
// Threads per block of every kernel here (the host launches exactly this many): the launch bound caps the
// registers so that a block of this size always fits an SM.
#define MORI4J_COLL_THREADS 512

typedef unsigned long long u64;

// ---- element types: storage and conversion to and from fp32 ----

struct Mori4jF32 {
  typedef float S;
  static __device__ __forceinline__ float load(S v) { return v; }
  static __device__ __forceinline__ S store(float f) { return f; }
};

struct Mori4jBf16 {
  typedef unsigned short S;
  static __device__ __forceinline__ float load(S v) { return __uint_as_float(((unsigned int) v) << 16); }
  // Round to nearest even on the bits (what the CPU reference does); a NaN stays a quiet NaN.
  static __device__ __forceinline__ S store(float f) {
    unsigned int u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (S) ((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (S) (u >> 16);
  }
};

struct Mori4jF16 {
  typedef unsigned short S;
#if defined(MORI_SHMEM_HIP)
  static __device__ __forceinline__ float load(S v) { return (float) __builtin_bit_cast(_Float16, v); }
  static __device__ __forceinline__ S store(float f) { return __builtin_bit_cast(unsigned short, (_Float16) f); }
#else
  static __device__ __forceinline__ float load(S v) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
    return f;
  }
  static __device__ __forceinline__ S store(float f) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
  }
#endif
};

// ---- memory access ----

struct __align__(16) Mori4jVec {
  unsigned int w[4];
};

// Data that other PEs write during the kernel is read around L1 (which is not coherent with them).
static __device__ __forceinline__ Mori4jVec mori4j_load_cg(const Mori4jVec* p) {
  Mori4jVec v;
#if defined(MORI_SHMEM_HIP)
  // a volatile load of a 16-byte vector is one global_load_dwordx4 with glc on AMDGPU: around the incoherent
  // L1, as .cg is on NVIDIA (a volatile struct cannot be assigned: no volatile copy assignment)
  typedef unsigned int mori4j_u32x4 __attribute__((ext_vector_type(4)));
  const mori4j_u32x4 x = *(const volatile mori4j_u32x4*) p;
  v.w[0] = x.x;
  v.w[1] = x.y;
  v.w[2] = x.z;
  v.w[3] = x.w;
#else
  asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3]) : "l"(p) : "memory");
#endif
  return v;
}

template <typename T>
static __device__ __forceinline__ T mori4j_load_scalar(const T* p) {
  return *(const volatile T*) p;
}

static __device__ __forceinline__ u64 mori4j_thread() { return (u64) blockIdx.x * blockDim.x + threadIdx.x; }

static __device__ __forceinline__ u64 mori4j_threads() { return (u64) gridDim.x * blockDim.x; }

// Copies bytes with every thread of the grid: 16-byte words when both ends are 16-byte aligned, bytes
// otherwise (callers pass heap objects, which are aligned).
static __device__ void mori4j_copy(unsigned char* dst, const unsigned char* src, u64 bytes) {
  const u64 tid = mori4j_thread(), threads = mori4j_threads();
  u64 words = 0;
  if ((((u64) dst | (u64) src) & 15) == 0) {
    words = bytes >> 4;
    Mori4jVec* d = (Mori4jVec*) dst;
    const Mori4jVec* s = (const Mori4jVec*) src;
    for (u64 base = tid; base < words; base += MORI4J_COLL_UNROLL * threads) {
      Mori4jVec v[MORI4J_COLL_UNROLL];
#pragma unroll
      for (int u = 0; u < MORI4J_COLL_UNROLL; u++) {
        const u64 i = base + u * threads;
        if (i < words) v[u] = mori4j_load_cg(s + i);
      }
#pragma unroll
      for (int u = 0; u < MORI4J_COLL_UNROLL; u++) {
        const u64 i = base + u * threads;
        if (i < words) d[i] = v[u];
      }
    }
  }
  for (u64 i = (words << 4) + tid; i < bytes; i += threads) dst[i] = mori4j_load_scalar(src + i);
}

// ---- per-block barriers on the signal words ----

static __device__ __forceinline__ u64* mori4j_slot(u64* signals, int phase, int block, int pe) {
  return signals + ((u64) (phase * MORI4J_COLL_MAX_BLOCKS + block) * MORI_SHMEM_MAX_PES + pe);
}

// Thread 0 only: stores value into this block's slot (phase, me) on pe, after everything this block wrote:
// through the peer mapping, or (no direct path) as a fenced 8-byte write on the block's endpoint to pe, which
// the proxy starts only after the block's earlier writes on that endpoint completed.
static __device__ __forceinline__ void mori4j_signal(u64* signals, int phase, u64 value, int pe) {
  u64* slot = mori4j_slot(signals, phase, blockIdx.x, mori_shmem_my_pe());
  const u64 direct = mori_shmem_ptr_p2p((uint64_t) slot, mori_shmem_my_pe(), pe);
  if (direct != 0) {
    atomicExch_system((u64*) direct, value);
  } else {
    MoriRdmaEndpoint* ep;
    mori_shmem_internal_route(slot, pe, blockIdx.x, &ep);
    mori_shmem_internal_proxy_p(ep, slot, value, 8, MORI_RDMA_FLAG_FENCE, pe);
  }
}

// Thread 0 only: waits until the slot (phase, pe) of this block holds at least value.
static __device__ __forceinline__ void mori4j_wait(u64* signals, int phase, u64 value, int pe) {
  mori_shmem_uint64_wait_until_greater_or_equal((uint64_t*) mori4j_slot(signals, phase, blockIdx.x, pe), (uint64_t) value);
}

// The whole block: signals every other PE (signalAll) or one (signalOnly, -1 for none), then waits for every
// other PE (waitAll) or one (waitOnly). Everything the block wrote before is visible to the signalled PEs
// before the signal: the block's writes happen before thread 0's system-scope fence through __syncthreads, and
// the fence is cumulative (the pattern of cooperative groups' grid sync), so one fence per block is enough.
static __device__ void mori4j_barrier(u64* signals, int phase, u64 epoch, bool signalAll, int signalOnly, bool waitAll, int waitOnly) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    const int n = mori_shmem_n_pes(), me = mori_shmem_my_pe();
    for (int k = 1; k < n; k++) {
      const int pe = (me + k) % n;
      if (signalAll || pe == signalOnly) mori4j_signal(signals, phase, epoch, pe);
    }
    for (int k = 1; k < n; k++) {
      const int pe = (me + k) % n;
      if (waitAll || pe == waitOnly) mori4j_wait(signals, phase, epoch, pe);
    }
    __threadfence_system();
  }
  __syncthreads();
}

// The address of buf on every PE, in shared memory for the block (n <= MORI_SHMEM_MAX_PES).
template <typename T>
static __device__ __forceinline__ void mori4j_peer_addresses(T* buf, u64* out) {
  const int n = mori_shmem_n_pes();
  for (int p = threadIdx.x; p < n; p += blockDim.x) out[p] = (u64) mori_shmem_internal_remote(buf, p);
  __syncthreads();
}

// ---- kernel A: every PE reads its own 1/n of the buffer from every PE (fp32 accumulation in PE order) and
// writes the sum into that part of every PE's buffer. Each element is read and written by one PE only, so
// the kernel is in place without a staging copy; reads and writes cross the links (n-1)/n of the buffer each
// way per PE, as many bytes as a ring all-reduce moves. ----

template <typename Ops>
static __device__ void mori4j_allreduce_p2p(typename Ops::S* buf, u64 count, u64* signals, u64 epoch) {
  typedef typename Ops::S S;
  constexpr int W = 16 / sizeof(S);
  __shared__ u64 peers[MORI_SHMEM_MAX_PES];
  const int n = mori_shmem_n_pes(), me = mori_shmem_my_pe();
  mori4j_peer_addresses(buf, peers);
  mori4j_barrier(signals, MORI4J_COLL_PHASE_START, epoch, true, -1, true, -1);

  const u64 tid = mori4j_thread(), threads = mori4j_threads();
  const u64 vecs = ((u64) buf & 15) == 0 ? count / W : 0;
  const u64 begin = vecs * me / n, end = vecs * (me + 1) / n;
  for (u64 base = begin + tid; base < end; base += MORI4J_COLL_UNROLL * threads) {
    float acc[MORI4J_COLL_UNROLL][W];
    for (int p = 0; p < n; p++) {
      const Mori4jVec* src = (const Mori4jVec*) peers[p];
      Mori4jVec v[MORI4J_COLL_UNROLL];
#pragma unroll
      for (int u = 0; u < MORI4J_COLL_UNROLL; u++) {
        const u64 i = base + u * threads;
        if (i < end) v[u] = mori4j_load_cg(src + i);
      }
#pragma unroll
      for (int u = 0; u < MORI4J_COLL_UNROLL; u++) {
        const S* e = (const S*) &v[u];
#pragma unroll
        for (int k = 0; k < W; k++) acc[u][k] = p == 0 ? Ops::load(e[k]) : acc[u][k] + Ops::load(e[k]);
      }
    }
#pragma unroll
    for (int u = 0; u < MORI4J_COLL_UNROLL; u++) {
      const u64 i = base + u * threads;
      if (i >= end) continue;
      Mori4jVec out;
      S* e = (S*) &out;
#pragma unroll
      for (int k = 0; k < W; k++) e[k] = Ops::store(acc[u][k]);
      for (int k = 0; k < n; k++) {
        const int p = (me + k) % n;  // spread the writes over the links
        ((Mori4jVec*) peers[p])[i] = out;
      }
    }
  }
  // Elements past the last whole vector (or all of them when buf is not 16-byte aligned): split the same way.
  const u64 rest = count - vecs * W;
  const u64 rBegin = vecs * W + rest * me / n, rEnd = vecs * W + rest * (me + 1) / n;
  for (u64 i = rBegin + tid; i < rEnd; i += threads) {
    float acc = 0.0f;
    for (int p = 0; p < n; p++) {
      const float x = Ops::load(mori4j_load_scalar(((const S*) peers[p]) + i));
      acc = p == 0 ? x : acc + x;
    }
    const S out = Ops::store(acc);
    for (int p = 0; p < n; p++) ((S*) peers[p])[i] = out;
  }
  mori4j_barrier(signals, MORI4J_COLL_PHASE_END, epoch, true, -1, true, -1);
}

// Kernel B's scratch area holds n - 1 slots, one per other PE: PE p's data lands in slot p of a PE after it
// and in slot p - 1 of a PE before it (nothing is kept for the PE's own data).
static __device__ __forceinline__ u64 mori4j_slot_of(int source, int owner) { return (u64) (source < owner ? source : source - 1); }

// ---- kernel B: every PE puts its buffer, chunk by chunk, into its slot of every other PE's scratch area
// with a signal per chunk, then reduces its own copy locally in PE order as the
// chunks arrive. A peer without a direct path gets each chunk as one RDMA write on the block's endpoint
// (qpId = block) followed by the fenced signal, and the kernel quiets its endpoints before it ends, so that the
// caller may overwrite the buffer once the kernel is done. Block b puts and reduces the chunks c with c % gridDim.x == b, so its chunk signals tell
// block b of the receiver exactly what it waits for. No end barrier: nobody writes into a PE's buffer, and the
// next call's start barrier keeps senders out of a scratch slot until its owner has finished this call. ----

template <typename Ops>
static __device__ void mori4j_allreduce_put(typename Ops::S* buf, typename Ops::S* scratch, u64 count, u64 slotElems,
                                            u64 chunkElems, u64* signals, u64 epoch) {
  typedef typename Ops::S S;
  __shared__ u64 peerScratch[MORI_SHMEM_MAX_PES];
  const int n = mori_shmem_n_pes(), me = mori_shmem_my_pe();
  // 0 for a peer without a direct path (reached through its endpoint)
  for (int p = threadIdx.x; p < n; p += blockDim.x) peerScratch[p] = mori_shmem_ptr_p2p((uint64_t) scratch, me, p);
  __syncthreads();
  mori4j_barrier(signals, MORI4J_COLL_PHASE_START, epoch, true, -1, true, -1);

  const u64 chunks = (count + chunkElems - 1) / chunkElems;
  const u64 t = threadIdx.x, nt = blockDim.x;
  const bool vectors = ((((u64) buf) | ((u64) scratch) | (slotElems * sizeof(S)) | (chunkElems * sizeof(S))) & 15) == 0;
  u64 j = 0;
  for (u64 c = blockIdx.x; c < chunks; c += gridDim.x, j++) {
    const u64 first = c * chunkElems, elems = min(chunkElems, count - first);
    const unsigned char* src = (const unsigned char*) (buf + first);
    const u64 bytes = elems * sizeof(S);
    for (int k = 1; k < n; k++) {
      const int q = (me + k) % n;
      if (peerScratch[q] == 0) {
        mori_shmem_putmem_nbi_block(scratch + mori4j_slot_of(me, q) * slotElems + first, src, bytes, q, blockIdx.x);
        continue;
      }
      unsigned char* dst = (unsigned char*) (((S*) peerScratch[q]) + mori4j_slot_of(me, q) * slotElems + first);
      u64 words = 0;
      if (vectors) {
        words = bytes >> 4;
        for (u64 i = t; i < words; i += nt) ((Mori4jVec*) dst)[i] = ((const Mori4jVec*) src)[i];
      }
      for (u64 i = (words << 4) + t; i < bytes; i += nt) dst[i] = src[i];
    }
    __syncthreads();
    if (t == 0) {
      __threadfence_system();
      for (int k = 1; k < n; k++) mori4j_signal(signals, MORI4J_COLL_PHASE_CHUNK, (epoch << 24) + j + 1, (me + k) % n);
    }
  }

  // Through endpoints the proxy reads this block's chunks of buf after the puts were posted: they must have been
  // sent before the reduction below overwrites buf in place.
  bool proxied = false;
  for (int k = 1; k < n; k++) proxied |= peerScratch[(me + k) % n] == 0;
  if (proxied) {
    __syncthreads();
    if (t == 0) mori_shmem_internal_quiet_all();
    __syncthreads();
  }
  j = 0;
  for (u64 c = blockIdx.x; c < chunks; c += gridDim.x, j++) {
    if (t == 0) {
      for (int k = 1; k < n; k++) mori4j_wait(signals, MORI4J_COLL_PHASE_CHUNK, (epoch << 24) + j + 1, (me + k) % n);
      __threadfence_system();
    }
    __syncthreads();
    const u64 first = c * chunkElems, elems = min(chunkElems, count - first);
    constexpr int W = 16 / sizeof(S);
    const u64 vecs = vectors ? elems / W : 0;
    for (u64 i = t; i < vecs; i += nt) {
      float acc[W];
      for (int p = 0; p < n; p++) {
        const S* from = p == me ? buf + first : scratch + mori4j_slot_of(p, me) * slotElems + first;
        const Mori4jVec v = mori4j_load_cg(((const Mori4jVec*) from) + i);
        const S* e = (const S*) &v;
#pragma unroll
        for (int k = 0; k < W; k++) acc[k] = p == 0 ? Ops::load(e[k]) : acc[k] + Ops::load(e[k]);
      }
      Mori4jVec out;
      S* e = (S*) &out;
#pragma unroll
      for (int k = 0; k < W; k++) e[k] = Ops::store(acc[k]);
      ((Mori4jVec*) (buf + first))[i] = out;
    }
    for (u64 i = vecs * W + t; i < elems; i += nt) {
      float acc = 0.0f;
      for (int p = 0; p < n; p++) {
        const S* from = p == me ? buf + first : scratch + mori4j_slot_of(p, me) * slotElems + first;
        const float x = Ops::load(mori4j_load_scalar(from + i));
        acc = p == 0 ? x : acc + x;
      }
      buf[first + i] = Ops::store(acc);
    }
  }
  // the proxy reads buf for the peers' writes after this block's last put: nothing leaves before they are done
  __syncthreads();
  if (t == 0) mori_shmem_internal_quiet_all();
}

// ---- broadcast: every PE but the root reads the root's buffer into its own; the root's kernel ends when all
// have read it (so the root may overwrite it at once), the others' when their copy is done. ----

static __device__ void mori4j_broadcast(unsigned char* buf, u64 bytes, int root, u64* signals, u64 epoch) {
  const int me = mori_shmem_my_pe();
  const bool isRoot = me == root;
  __shared__ u64 rootBuf;
  if (threadIdx.x == 0) rootBuf = (u64) mori_shmem_internal_remote(buf, root);
  mori4j_barrier(signals, MORI4J_COLL_PHASE_START, epoch, isRoot, -1, false, isRoot ? -1 : root);
  if (!isRoot) mori4j_copy(buf, (const unsigned char*) rootBuf, bytes);
  mori4j_barrier(signals, MORI4J_COLL_PHASE_END, epoch, false, isRoot ? -1 : root, isRoot, -1);
}

// ---- all-gather: buf holds n slices of sliceBytes; every PE writes its own slice (slice me) into every other
// PE's buffer. ----

static __device__ void mori4j_allgather(unsigned char* buf, u64 sliceBytes, u64* signals, u64 epoch) {
  __shared__ u64 peers[MORI_SHMEM_MAX_PES];
  const int n = mori_shmem_n_pes(), me = mori_shmem_my_pe();
  mori4j_peer_addresses(buf, peers);
  mori4j_barrier(signals, MORI4J_COLL_PHASE_START, epoch, true, -1, true, -1);
  const unsigned char* mine = buf + (u64) me * sliceBytes;
  for (int k = 1; k < n; k++) {
    const int q = (me + k) % n;
    mori4j_copy(((unsigned char*) peers[q]) + (u64) me * sliceBytes, mine, sliceBytes);
  }
  mori4j_barrier(signals, MORI4J_COLL_PHASE_END, epoch, true, -1, true, -1);
}

// ---- entry points (one per type, spelled out so that their names can be found in the source) ----
// A launch with nothing to move returns at once: ShmemCollectives.create launches every kernel that way to
// load it before any PE runs a kernel that spins in a barrier (CUDA loads kernels lazily, and loading one may
// wait for the kernels already running on the device, which would then wait for ever for the PE being loaded).

extern "C" __launch_bounds__(MORI4J_COLL_THREADS) __global__ void mori4j_allreduce_p2p_bf16(unsigned short* buf, u64 count, u64* signals, u64 epoch) {
  if (count == 0) return;
  mori4j_allreduce_p2p<Mori4jBf16>(buf, count, signals, epoch);
}

extern "C" __launch_bounds__(MORI4J_COLL_THREADS) __global__ void mori4j_allreduce_p2p_fp16(unsigned short* buf, u64 count, u64* signals, u64 epoch) {
  if (count == 0) return;
  mori4j_allreduce_p2p<Mori4jF16>(buf, count, signals, epoch);
}

extern "C" __launch_bounds__(MORI4J_COLL_THREADS) __global__ void mori4j_allreduce_p2p_fp32(float* buf, u64 count, u64* signals, u64 epoch) {
  if (count == 0) return;
  mori4j_allreduce_p2p<Mori4jF32>(buf, count, signals, epoch);
}

extern "C" __launch_bounds__(MORI4J_COLL_THREADS) __global__ void mori4j_allreduce_put_bf16(unsigned short* buf, unsigned short* scratch, u64 count,
                                                                                           u64 slotElems, u64 chunkElems, u64* signals, u64 epoch) {
  if (count == 0) return;
  mori4j_allreduce_put<Mori4jBf16>(buf, scratch, count, slotElems, chunkElems, signals, epoch);
}

extern "C" __launch_bounds__(MORI4J_COLL_THREADS) __global__ void mori4j_allreduce_put_fp16(unsigned short* buf, unsigned short* scratch, u64 count,
                                                                                           u64 slotElems, u64 chunkElems, u64* signals, u64 epoch) {
  if (count == 0) return;
  mori4j_allreduce_put<Mori4jF16>(buf, scratch, count, slotElems, chunkElems, signals, epoch);
}

extern "C" __launch_bounds__(MORI4J_COLL_THREADS) __global__ void mori4j_allreduce_put_fp32(float* buf, float* scratch, u64 count, u64 slotElems,
                                                                                           u64 chunkElems, u64* signals, u64 epoch) {
  if (count == 0) return;
  mori4j_allreduce_put<Mori4jF32>(buf, scratch, count, slotElems, chunkElems, signals, epoch);
}

extern "C" __launch_bounds__(MORI4J_COLL_THREADS) __global__ void mori4j_broadcast_bytes(unsigned char* buf, u64 bytes, int root, u64* signals, u64 epoch) {
  if (bytes == 0) return;
  mori4j_broadcast(buf, bytes, root, signals, epoch);
}

extern "C" __launch_bounds__(MORI4J_COLL_THREADS) __global__ void mori4j_allgather_bytes(unsigned char* buf, u64 sliceBytes, u64* signals, u64 epoch) {
  if (sliceBytes == 0) return;
  mori4j_allgather(buf, sliceBytes, signals, epoch);
}
