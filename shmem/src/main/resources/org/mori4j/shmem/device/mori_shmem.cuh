// mori4j shmem device library: MORI shmem's device API for kernels compiled at run time (NVRTC on NVIDIA,
// hiprtc on AMD). ShmemKernels.compile puts this file in front of the user's kernel source, so the whole
// library is one translation unit with the kernel and inlines into it; a kernel source may also say
// #include "mori_shmem.cuh" (ShmemKernels replaces that line, and the include guard makes a second copy a
// no-op).
//
// What a kernel sees:
//   - globalGpuStates: this PE's rank, the number of PEs, and where every PE's symmetric heap is mapped in
//     this process. Shmem.moduleInit(module) fills it after the module is loaded; until then every call
//     below sees nPes == 0.
//   - Symmetric addresses: a pointer into this PE's heap (Shmem.malloc) names the same object on every PE;
//     the put/get/atomic calls translate it to the target PE's mapping (mori_shmem_ptr_p2p).
//   - Transport: only direct peer access (NVLink/XGMI, or two processes on one GPU) exists in this library.
//     A call aimed at a PE with no direct path (another host, MORI_DISABLE_P2P) traps with a message
//     rather than writing through a null pointer. The qpId arguments are kept for MORI source
//     compatibility and are ignored here (a P2P path has no queue pairs).
//   - Waits (mori_shmem_*_wait_until_*) give up after globalGpuStates.waitTimeoutNs (set from
//     mori4j.shmem.device-wait-timeout, 0 = never) and trap, so a PE that died makes the others' kernels
//     fail with an error on their stream instead of spinning for ever.
//
// Memory ordering: puts are plain stores through the peer mapping; mori_shmem_fence and
// mori_shmem_quiet_thread are system-scope fences, so a put followed by quiet (or the signal of a
// putmem_nbi_signal call) is visible to the target PE before anything the caller writes afterwards.
// Signals and remote atomics are system-scope atomics on the peer-mapped word.
#ifndef MORI_SHMEM_CUH
#define MORI_SHMEM_CUH

#if defined(__HIPCC__) || defined(__HIPCC_RTC__) || defined(__HIP_PLATFORM_AMD__)
#define MORI_SHMEM_HIP 1
#endif

// NVRTC and hiprtc have no <stdint.h>; the kernels of MORI's API are written with its names. The types match
// glibc's on LP64 so that a kernel that brings its own <cstdint> (with -I) may define
// MORI_SHMEM_NO_STDINT_TYPEDEFS instead.
#if !defined(MORI_SHMEM_NO_STDINT_TYPEDEFS) && (defined(__CUDACC_RTC__) || defined(__HIPCC_RTC__))
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long int64_t;
typedef unsigned long uint64_t;
typedef unsigned long uintptr_t;
#endif

#if defined(MORI_SHMEM_HIP)
#define MORI_SHMEM_DEVICE __device__ __forceinline__
#define MORI_SHMEM_SYNCWARP() __builtin_amdgcn_wave_barrier()
// s_memrealtime counts at a constant 100 MHz on CDNA GPUs: 10 ns per tick.
#define MORI_SHMEM_NOW_NS() ((unsigned long long) __builtin_amdgcn_s_memrealtime() * 10ull)
#else
#define MORI_SHMEM_DEVICE __device__ __forceinline__
#define MORI_SHMEM_SYNCWARP() __syncwarp()
#endif

#define MORI_SHMEM_MAX_PES 64
// globalGpuStates.flags
#define MORI_SHMEM_FLAG_P2P_DISABLED 1u
// Layout version written by moduleInit; a kernel compiled against another layout traps on first use.
#define MORI_SHMEM_STATES_VERSION 1u

// The values of MORI's atomicType (core_device_types.hpp), so that MORI kernels pass the same constants.
typedef enum {
  AMO_ACK = 1,
  AMO_INC,
  AMO_SET,
  AMO_ADD,
  AMO_AND,
  AMO_OR,
  AMO_XOR,
  AMO_SIGNAL,
  SIGNAL_SET,
  SIGNAL_ADD,
  AMO_SIGNAL_SET = SIGNAL_SET,
  AMO_SIGNAL_ADD = SIGNAL_ADD,
  AMO_END_OF_NONFETCH,
  AMO_FETCH,
  AMO_FETCH_INC,
  AMO_FETCH_ADD,
  AMO_FETCH_AND,
  AMO_FETCH_OR,
  AMO_FETCH_XOR,
  AMO_SWAP,
  AMO_COMPARE_SWAP
} mori_shmem_atomic_type;
typedef mori_shmem_atomic_type atomicType;

// The per-module copy of this PE's state. The byte layout is fixed (GpuStates.LAYOUT on the host side,
// checked by GpuStatesTest); change both together and bump MORI_SHMEM_STATES_VERSION.
typedef struct {
  int rank;                                          // offset 0
  int nPes;                                          // 4
  unsigned int flags;                                // 8: MORI_SHMEM_FLAG_*
  unsigned int version;                              // 12: MORI_SHMEM_STATES_VERSION
  unsigned long long heapSize;                       // 16: bytes of every PE's heap
  unsigned long long heapBase;                       // 24: this PE's heap, in this process
  unsigned long long internalOffset;                 // 32: the library's own words inside the heap
  unsigned long long waitTimeoutNs;                  // 40: 0 = wait for ever
  unsigned long long peerHeapBase[MORI_SHMEM_MAX_PES];  // 48: PE i's heap mapped here; 0 = no direct path
} MoriShmemGpuStates;                                // 560 bytes

extern "C" {
__device__ MoriShmemGpuStates globalGpuStates;
}

// Offsets of the library's words inside the heap's internal area (see ShmemHeap.INTERNAL_BYTES).
#define MORI_SHMEM_STREAM_BARRIER_OFFSET 0ull     // uint64 per source PE: barrierAll(stream) arrivals
#define MORI_SHMEM_DEVICE_BARRIER_OFFSET 512ull   // uint64 per source PE: mori_shmem_barrier_all_* arrivals
#define MORI_SHMEM_DEVICE_BARRIER_EPOCH 1024ull   // uint64: this PE's count of device barriers

MORI_SHMEM_DEVICE void mori_shmem_internal_fail(const char* what, unsigned long long a, long long b) {
  printf("mori_shmem: PE %d: %s (0x%llx, %lld)\n", globalGpuStates.rank, what, a, b);
#if defined(MORI_SHMEM_HIP)
  abort();
#else
  __trap();
#endif
}

MORI_SHMEM_DEVICE unsigned long long mori_shmem_internal_now_ns() {
#if defined(MORI_SHMEM_HIP)
  return MORI_SHMEM_NOW_NS();
#else
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#endif
}

extern "C" {

MORI_SHMEM_DEVICE int mori_shmem_my_pe() { return globalGpuStates.rank; }

MORI_SHMEM_DEVICE int mori_shmem_n_pes() { return globalGpuStates.nPes; }

// The address in this process of the object that destPtr (a symmetric heap address of PE myPe) names on
// destPe; 0 when destPtr is outside the heap or destPe has no direct path from here.
MORI_SHMEM_DEVICE uint64_t mori_shmem_ptr_p2p(const uint64_t destPtr, const int myPe, int destPe) {
  const unsigned long long off = (unsigned long long) destPtr - globalGpuStates.heapBase;
  if (off >= globalGpuStates.heapSize || destPe < 0 || destPe >= globalGpuStates.nPes || myPe != globalGpuStates.rank) return 0;
  if (destPe == myPe) return destPtr;
  const unsigned long long base = globalGpuStates.peerHeapBase[destPe];
  return base == 0 ? 0 : base + off;
}

// MORI's mori_shmem_ptr: the same translation from this PE.
MORI_SHMEM_DEVICE uint64_t mori_shmem_ptr(uint64_t dest, int destPe) {
  return mori_shmem_ptr_p2p(dest, globalGpuStates.rank, destPe);
}

}  // extern "C"

// The translated address or a trap naming what was wrong (never a store through 0).
MORI_SHMEM_DEVICE void* mori_shmem_internal_remote(const void* symmetric, int pe) {
  if (globalGpuStates.version != MORI_SHMEM_STATES_VERSION)
    mori_shmem_internal_fail("globalGpuStates not initialised (call Shmem.moduleInit) or of another layout version",
                             globalGpuStates.version, MORI_SHMEM_STATES_VERSION);
  const unsigned long long p = mori_shmem_ptr_p2p((uint64_t) symmetric, globalGpuStates.rank, pe);
  if (p == 0) {
    if (pe < 0 || pe >= globalGpuStates.nPes) mori_shmem_internal_fail("no such PE", (unsigned long long) symmetric, pe);
    if ((unsigned long long) symmetric - globalGpuStates.heapBase >= globalGpuStates.heapSize)
      mori_shmem_internal_fail("address is not in the symmetric heap", (unsigned long long) symmetric, pe);
    mori_shmem_internal_fail("no direct (P2P) path to PE", (unsigned long long) symmetric, pe);
  }
  return (void*) p;
}

// Copies bytes with lanes [lane, lanes) of the caller's group: 16-byte words when both ends share their
// alignment modulo 16 (the usual case for heap objects), 8-byte words for modulo 8, bytes otherwise.
MORI_SHMEM_DEVICE void mori_shmem_internal_copy(void* dst, const void* src, size_t bytes, unsigned int lane, unsigned int lanes) {
  unsigned char* d = (unsigned char*) dst;
  const unsigned char* s = (const unsigned char*) src;
  const unsigned long long da = (unsigned long long) d, sa = (unsigned long long) s;
  if ((da & 15) == (sa & 15)) {
    size_t head = (16 - (da & 15)) & 15;
    if (head > bytes) head = bytes;
    for (size_t i = lane; i < head; i += lanes) d[i] = s[i];
    const size_t words = (bytes - head) >> 4;
    struct __align__(16) v16 { unsigned long long lo, hi; };
    v16* d16 = (v16*) (d + head);
    const v16* s16 = (const v16*) (s + head);
    for (size_t i = lane; i < words; i += lanes) d16[i] = s16[i];
    const size_t tail = head + (words << 4);
    for (size_t i = tail + lane; i < bytes; i += lanes) d[i] = s[i];
  } else if ((da & 7) == (sa & 7)) {
    size_t head = (8 - (da & 7)) & 7;
    if (head > bytes) head = bytes;
    for (size_t i = lane; i < head; i += lanes) d[i] = s[i];
    const size_t words = (bytes - head) >> 3;
    unsigned long long* d8 = (unsigned long long*) (d + head);
    const unsigned long long* s8 = (const unsigned long long*) (s + head);
    for (size_t i = lane; i < words; i += lanes) d8[i] = s8[i];
    const size_t tail = head + (words << 3);
    for (size_t i = tail + lane; i < bytes; i += lanes) d[i] = s[i];
  } else {
    for (size_t i = lane; i < bytes; i += lanes) d[i] = s[i];
  }
}

MORI_SHMEM_DEVICE unsigned int mori_shmem_internal_lane() { return threadIdx.x % warpSize; }

MORI_SHMEM_DEVICE unsigned int mori_shmem_internal_block_thread() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

MORI_SHMEM_DEVICE unsigned int mori_shmem_internal_block_threads() { return blockDim.x * blockDim.y * blockDim.z; }

MORI_SHMEM_DEVICE void mori_shmem_internal_signal(void* signalDest, uint64_t signalValue, int signalOp, int pe) {
  unsigned long long* sig = (unsigned long long*) mori_shmem_internal_remote(signalDest, pe);
  if (signalOp == SIGNAL_SET) {
    atomicExch_system(sig, (unsigned long long) signalValue);
  } else if (signalOp == SIGNAL_ADD) {
    atomicAdd_system(sig, (unsigned long long) signalValue);
  } else {
    mori_shmem_internal_fail("signal op is neither SIGNAL_SET nor SIGNAL_ADD", (unsigned long long) signalDest, signalOp);
  }
}

extern "C" {

// ---- ordering ----

// Orders this thread's earlier puts before its later ones, to every PE (a system-scope fence).
MORI_SHMEM_DEVICE int mori_shmem_fence() {
  __threadfence_system();
  return 0;
}

MORI_SHMEM_DEVICE int mori_shmem_fence_thread() { return mori_shmem_fence(); }

MORI_SHMEM_DEVICE int mori_shmem_fence_thread_pe(int pe) { return mori_shmem_fence(); }

// Completes this thread's earlier puts: after it they are visible to their target PEs. P2P puts are stores,
// so a system-scope fence is all that is outstanding.
MORI_SHMEM_DEVICE int mori_shmem_quiet_thread() {
  __threadfence_system();
  return 0;
}

MORI_SHMEM_DEVICE int mori_shmem_quiet_thread_pe(int pe) { return mori_shmem_quiet_thread(); }

// ---- put / get of bytes: dest and source are symmetric heap addresses; the remote side is pe ----

MORI_SHMEM_DEVICE int mori_shmem_putmem_nbi_thread(void* dest, const void* source, size_t bytes, int pe, int qpId) {
  mori_shmem_internal_copy(mori_shmem_internal_remote(dest, pe), source, bytes, 0, 1);
  return 0;
}

// Every lane of the warp calls it with the same arguments.
MORI_SHMEM_DEVICE int mori_shmem_putmem_nbi_warp(void* dest, const void* source, size_t bytes, int pe, int qpId) {
  mori_shmem_internal_copy(mori_shmem_internal_remote(dest, pe), source, bytes, mori_shmem_internal_lane(), warpSize);
  return 0;
}

// Every thread of the block calls it with the same arguments.
MORI_SHMEM_DEVICE int mori_shmem_putmem_nbi_block(void* dest, const void* source, size_t bytes, int pe, int qpId) {
  mori_shmem_internal_copy(mori_shmem_internal_remote(dest, pe), source, bytes, mori_shmem_internal_block_thread(),
                           mori_shmem_internal_block_threads());
  return 0;
}

// dest is local memory, source the symmetric address read on pe.
MORI_SHMEM_DEVICE int mori_shmem_getmem_nbi_thread(void* dest, const void* source, size_t bytes, int pe, int qpId) {
  mori_shmem_internal_copy(dest, mori_shmem_internal_remote(source, pe), bytes, 0, 1);
  return 0;
}

MORI_SHMEM_DEVICE int mori_shmem_getmem_nbi_warp(void* dest, const void* source, size_t bytes, int pe, int qpId) {
  mori_shmem_internal_copy(dest, mori_shmem_internal_remote(source, pe), bytes, mori_shmem_internal_lane(), warpSize);
  return 0;
}

MORI_SHMEM_DEVICE int mori_shmem_getmem_nbi_block(void* dest, const void* source, size_t bytes, int pe, int qpId) {
  mori_shmem_internal_copy(dest, mori_shmem_internal_remote(source, pe), bytes, mori_shmem_internal_block_thread(),
                           mori_shmem_internal_block_threads());
  return 0;
}

// Blocking gets: the bytes are in dest when they return (a load completes when it returns its value; the
// fence orders the copy before the caller's later reads of dest by other threads).
MORI_SHMEM_DEVICE int mori_shmem_getmem_thread(void* dest, const void* source, size_t bytes, int pe, int qpId) {
  mori_shmem_getmem_nbi_thread(dest, source, bytes, pe, qpId);
  __threadfence();
  return 0;
}

MORI_SHMEM_DEVICE int mori_shmem_getmem_warp(void* dest, const void* source, size_t bytes, int pe, int qpId) {
  mori_shmem_getmem_nbi_warp(dest, source, bytes, pe, qpId);
  __threadfence();
  MORI_SHMEM_SYNCWARP();
  return 0;
}

MORI_SHMEM_DEVICE int mori_shmem_getmem_block(void* dest, const void* source, size_t bytes, int pe, int qpId) {
  mori_shmem_getmem_nbi_block(dest, source, bytes, pe, qpId);
  __threadfence();
  __syncthreads();
  return 0;
}

// ---- put with signal: the data, then (after a system fence) the signal word on the same PE ----

MORI_SHMEM_DEVICE int mori_shmem_putmem_nbi_signal_thread(void* dest, const void* source, size_t bytes, void* signalDest,
                                                          uint64_t signalValue, atomicType signalOp, int pe, int qpId) {
  mori_shmem_putmem_nbi_thread(dest, source, bytes, pe, qpId);
  __threadfence_system();
  mori_shmem_internal_signal(signalDest, signalValue, signalOp, pe);
  return 0;
}

// The signal is sent once per warp, by lane 0, after every lane's part of the data.
MORI_SHMEM_DEVICE int mori_shmem_putmem_nbi_signal_warp(void* dest, const void* source, size_t bytes, void* signalDest,
                                                        uint64_t signalValue, atomicType signalOp, int pe, int qpId) {
  mori_shmem_putmem_nbi_warp(dest, source, bytes, pe, qpId);
  __threadfence_system();
  MORI_SHMEM_SYNCWARP();
  if (mori_shmem_internal_lane() == 0) mori_shmem_internal_signal(signalDest, signalValue, signalOp, pe);
  return 0;
}

// The signal is sent once per block, by thread 0, after every thread's part of the data.
MORI_SHMEM_DEVICE int mori_shmem_putmem_nbi_signal_block(void* dest, const void* source, size_t bytes, void* signalDest,
                                                         uint64_t signalValue, atomicType signalOp, int pe, int qpId) {
  mori_shmem_putmem_nbi_block(dest, source, bytes, pe, qpId);
  __threadfence_system();
  __syncthreads();
  if (mori_shmem_internal_block_thread() == 0) mori_shmem_internal_signal(signalDest, signalValue, signalOp, pe);
  return 0;
}

}  // extern "C"

// ---- typed puts and gets: arrays of nelems elements, and single values (_p puts one, _g reads one) ----
#define MORI_SHMEM_TYPED(NAME, T)                                                                                    \
  extern "C" MORI_SHMEM_DEVICE int mori_shmem_put_##NAME##_nbi_thread(T* dest, const T* source, size_t nelems,       \
                                                                      int pe, int qpId) {                            \
    return mori_shmem_putmem_nbi_thread(dest, source, nelems * sizeof(T), pe, qpId);                                 \
  }                                                                                                                  \
  extern "C" MORI_SHMEM_DEVICE int mori_shmem_put_##NAME##_nbi_warp(T* dest, const T* source, size_t nelems, int pe, \
                                                                    int qpId) {                                      \
    return mori_shmem_putmem_nbi_warp(dest, source, nelems * sizeof(T), pe, qpId);                                   \
  }                                                                                                                  \
  extern "C" MORI_SHMEM_DEVICE int mori_shmem_put_##NAME##_nbi_block(T* dest, const T* source, size_t nelems,        \
                                                                     int pe, int qpId) {                             \
    return mori_shmem_putmem_nbi_block(dest, source, nelems * sizeof(T), pe, qpId);                                  \
  }                                                                                                                  \
  extern "C" MORI_SHMEM_DEVICE int mori_shmem_get_##NAME##_nbi_thread(T* dest, const T* source, size_t nelems,       \
                                                                      int pe, int qpId) {                            \
    return mori_shmem_getmem_nbi_thread(dest, source, nelems * sizeof(T), pe, qpId);                                 \
  }                                                                                                                  \
  extern "C" MORI_SHMEM_DEVICE int mori_shmem_get_##NAME##_nbi_warp(T* dest, const T* source, size_t nelems, int pe, \
                                                                    int qpId) {                                      \
    return mori_shmem_getmem_nbi_warp(dest, source, nelems * sizeof(T), pe, qpId);                                   \
  }                                                                                                                  \
  extern "C" MORI_SHMEM_DEVICE int mori_shmem_get_##NAME##_nbi_block(T* dest, const T* source, size_t nelems,        \
                                                                     int pe, int qpId) {                             \
    return mori_shmem_getmem_nbi_block(dest, source, nelems * sizeof(T), pe, qpId);                                  \
  }                                                                                                                  \
  extern "C" MORI_SHMEM_DEVICE int mori_shmem_##NAME##_p(T* dest, T value, int pe, int qpId) {                       \
    *(volatile T*) mori_shmem_internal_remote(dest, pe) = value;                                                     \
    return 0;                                                                                                        \
  }                                                                                                                  \
  extern "C" MORI_SHMEM_DEVICE T mori_shmem_##NAME##_g(const T* source, int pe, int qpId) {                          \
    return *(volatile const T*) mori_shmem_internal_remote(source, pe);                                              \
  }

MORI_SHMEM_TYPED(uint8, uint8_t)
MORI_SHMEM_TYPED(int8, int8_t)
MORI_SHMEM_TYPED(uint16, uint16_t)
MORI_SHMEM_TYPED(int16, int16_t)
MORI_SHMEM_TYPED(uint32, uint32_t)
MORI_SHMEM_TYPED(int32, int32_t)
MORI_SHMEM_TYPED(uint64, uint64_t)
MORI_SHMEM_TYPED(int64, int64_t)
MORI_SHMEM_TYPED(float, float)
MORI_SHMEM_TYPED(double, double)
#undef MORI_SHMEM_TYPED

// ---- waits on local words (signals land here); each returns the value that satisfied it ----
MORI_SHMEM_DEVICE void mori_shmem_internal_wait_check(const void* addr, unsigned long long start) {
  const unsigned long long limit = globalGpuStates.waitTimeoutNs;
  if (limit != 0 && mori_shmem_internal_now_ns() - start > limit)
    mori_shmem_internal_fail("wait timed out (a PE died, or never signals this word)", (unsigned long long) addr, (long long) limit);
}

#define MORI_SHMEM_WAIT(NAME, T, COND_NAME, COND)                                                    \
  extern "C" MORI_SHMEM_DEVICE T mori_shmem_##NAME##_wait_until_##COND_NAME(T* addr, T val) {         \
    const unsigned long long start = mori_shmem_internal_now_ns();                                    \
    T seen;                                                                                           \
    unsigned int spins = 0;                                                                           \
    while (!((seen = *(volatile T*) addr) COND val)) {                                                \
      if ((++spins & 1023u) == 0) mori_shmem_internal_wait_check(addr, start);                        \
    }                                                                                                 \
    __threadfence();                                                                                  \
    return seen;                                                                                      \
  }
#define MORI_SHMEM_WAITS(NAME, T)                     \
  MORI_SHMEM_WAIT(NAME, T, equals, ==)                \
  MORI_SHMEM_WAIT(NAME, T, not_equals, !=)            \
  MORI_SHMEM_WAIT(NAME, T, greater_than, >)           \
  MORI_SHMEM_WAIT(NAME, T, greater_or_equal, >=)      \
  MORI_SHMEM_WAIT(NAME, T, less_than, <)              \
  MORI_SHMEM_WAIT(NAME, T, less_or_equal, <=)

MORI_SHMEM_WAITS(uint32, uint32_t)
MORI_SHMEM_WAITS(int32, int32_t)
MORI_SHMEM_WAITS(uint64, uint64_t)
MORI_SHMEM_WAITS(int64, int64_t)
#undef MORI_SHMEM_WAITS
#undef MORI_SHMEM_WAIT

// ---- remote atomics (system scope, on the target PE's word) ----
extern "C" {

MORI_SHMEM_DEVICE uint32_t mori_shmem_uint32_atomic_fetch_add_thread(uint32_t* dest, uint32_t val, int pe, int qpId) {
  return atomicAdd_system((unsigned int*) mori_shmem_internal_remote(dest, pe), val);
}

MORI_SHMEM_DEVICE int mori_shmem_uint32_atomic_add_thread(uint32_t* dest, uint32_t val, int pe, int qpId) {
  mori_shmem_uint32_atomic_fetch_add_thread(dest, val, pe, qpId);
  return 0;
}

MORI_SHMEM_DEVICE uint64_t mori_shmem_uint64_atomic_fetch_add_thread(uint64_t* dest, uint64_t val, int pe, int qpId) {
  return atomicAdd_system((unsigned long long*) mori_shmem_internal_remote(dest, pe), (unsigned long long) val);
}

MORI_SHMEM_DEVICE int mori_shmem_uint64_atomic_add_thread(uint64_t* dest, uint64_t val, int pe, int qpId) {
  mori_shmem_uint64_atomic_fetch_add_thread(dest, val, pe, qpId);
  return 0;
}

MORI_SHMEM_DEVICE int64_t mori_shmem_int64_atomic_fetch_add_thread(int64_t* dest, int64_t val, int pe, int qpId) {
  return (int64_t) mori_shmem_uint64_atomic_fetch_add_thread((uint64_t*) dest, (uint64_t) val, pe, qpId);
}

MORI_SHMEM_DEVICE int mori_shmem_int64_atomic_add_thread(int64_t* dest, int64_t val, int pe, int qpId) {
  mori_shmem_uint64_atomic_fetch_add_thread((uint64_t*) dest, (uint64_t) val, pe, qpId);
  return 0;
}

MORI_SHMEM_DEVICE int32_t mori_shmem_int32_atomic_fetch_add_thread(int32_t* dest, int32_t val, int pe, int qpId) {
  return (int32_t) mori_shmem_uint32_atomic_fetch_add_thread((uint32_t*) dest, (uint32_t) val, pe, qpId);
}

// Swaps in val where the word equals compare; returns the word's old value either way.
MORI_SHMEM_DEVICE uint32_t mori_shmem_uint32_atomic_compare_swap_thread(uint32_t* dest, uint32_t compare, uint32_t val, int pe,
                                                                        int qpId) {
  return atomicCAS_system((unsigned int*) mori_shmem_internal_remote(dest, pe), compare, val);
}

MORI_SHMEM_DEVICE uint64_t mori_shmem_uint64_atomic_compare_swap_thread(uint64_t* dest, uint64_t compare, uint64_t val, int pe,
                                                                        int qpId) {
  return atomicCAS_system((unsigned long long*) mori_shmem_internal_remote(dest, pe), (unsigned long long) compare,
                          (unsigned long long) val);
}

MORI_SHMEM_DEVICE int32_t mori_shmem_int32_atomic_compare_swap_thread(int32_t* dest, int32_t compare, int32_t val, int pe, int qpId) {
  return (int32_t) mori_shmem_uint32_atomic_compare_swap_thread((uint32_t*) dest, (uint32_t) compare, (uint32_t) val, pe, qpId);
}

MORI_SHMEM_DEVICE int64_t mori_shmem_int64_atomic_compare_swap_thread(int64_t* dest, int64_t compare, int64_t val, int pe, int qpId) {
  return (int64_t) mori_shmem_uint64_atomic_compare_swap_thread((uint64_t*) dest, (uint64_t) compare, (uint64_t) val, pe, qpId);
}

// MORI's generic fetching atomics: AMO_FETCH_ADD, AMO_FETCH_INC, AMO_FETCH_AND/OR/XOR, AMO_SWAP,
// AMO_COMPARE_SWAP and AMO_FETCH (a read); any other op traps.
MORI_SHMEM_DEVICE uint64_t mori_shmem_atomic_uint64_fetch_thread(uint64_t* dest, uint64_t val, uint64_t compare, atomicType amoType,
                                                                 int pe, int qpId) {
  unsigned long long* p = (unsigned long long*) mori_shmem_internal_remote(dest, pe);
  const unsigned long long v = (unsigned long long) val;
  switch (amoType) {
    case AMO_FETCH_ADD: return atomicAdd_system(p, v);
    case AMO_FETCH_INC: return atomicAdd_system(p, 1ull);
    case AMO_FETCH_AND: return atomicAnd_system(p, v);
    case AMO_FETCH_OR: return atomicOr_system(p, v);
    case AMO_FETCH_XOR: return atomicXor_system(p, v);
    case AMO_SWAP: return atomicExch_system(p, v);
    case AMO_COMPARE_SWAP: return atomicCAS_system(p, (unsigned long long) compare, v);
    case AMO_FETCH: return atomicAdd_system(p, 0ull);
    default: mori_shmem_internal_fail("unsupported fetching atomic op", (unsigned long long) dest, amoType); return 0;
  }
}

MORI_SHMEM_DEVICE uint32_t mori_shmem_atomic_uint32_fetch_thread(uint32_t* dest, uint32_t val, uint32_t compare, atomicType amoType,
                                                                 int pe, int qpId) {
  unsigned int* p = (unsigned int*) mori_shmem_internal_remote(dest, pe);
  switch (amoType) {
    case AMO_FETCH_ADD: return atomicAdd_system(p, val);
    case AMO_FETCH_INC: return atomicAdd_system(p, 1u);
    case AMO_FETCH_AND: return atomicAnd_system(p, val);
    case AMO_FETCH_OR: return atomicOr_system(p, val);
    case AMO_FETCH_XOR: return atomicXor_system(p, val);
    case AMO_SWAP: return atomicExch_system(p, val);
    case AMO_COMPARE_SWAP: return atomicCAS_system(p, compare, val);
    case AMO_FETCH: return atomicAdd_system(p, 0u);
    default: mori_shmem_internal_fail("unsupported fetching atomic op", (unsigned long long) dest, amoType); return 0;
  }
}

// ---- barriers inside kernels ----

// Every PE's thread calls it once per barrier (one thread per PE, e.g. thread 0 of block 0 with the rest of
// the grid waiting on it); it returns when every PE has arrived at the same barrier.
MORI_SHMEM_DEVICE int mori_shmem_barrier_all_thread() {
  const int n = globalGpuStates.nPes, me = globalGpuStates.rank;
  unsigned long long* epochWord = (unsigned long long*) (globalGpuStates.heapBase + globalGpuStates.internalOffset +
                                                         MORI_SHMEM_DEVICE_BARRIER_EPOCH);
  const unsigned long long epoch = *epochWord + 1;
  *epochWord = epoch;
  __threadfence_system();
  const unsigned long long slot = globalGpuStates.internalOffset + MORI_SHMEM_DEVICE_BARRIER_OFFSET + 8ull * me;
  for (int pe = 0; pe < n; pe++) {
    atomicAdd_system((unsigned long long*) mori_shmem_internal_remote((void*) (globalGpuStates.heapBase + slot), pe), 1ull);
  }
  for (int pe = 0; pe < n; pe++) {
    mori_shmem_uint64_wait_until_greater_or_equal(
        (uint64_t*) (globalGpuStates.heapBase + globalGpuStates.internalOffset + MORI_SHMEM_DEVICE_BARRIER_OFFSET + 8ull * pe),
        (uint64_t) epoch);
  }
  return 0;
}

// Every thread of one block per PE calls it.
MORI_SHMEM_DEVICE int mori_shmem_barrier_all_block() {
  __threadfence_system();
  __syncthreads();
  if (mori_shmem_internal_block_thread() == 0) mori_shmem_barrier_all_thread();
  __syncthreads();
  return 0;
}

}  // extern "C"

// The kernel behind Shmem.barrierAll(stream): one thread per PE adds one to its slot on every PE, then waits
// until every PE's slot here has reached target (the host counts stream barriers, so target is the number of
// barriers issued on this PE so far).
extern "C" __global__ void mori_shmem_internal_stream_barrier(unsigned long long target) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  const int n = globalGpuStates.nPes, me = globalGpuStates.rank;
  const unsigned long long area = globalGpuStates.heapBase + globalGpuStates.internalOffset + MORI_SHMEM_STREAM_BARRIER_OFFSET;
  __threadfence_system();
  for (int pe = 0; pe < n; pe++) {
    atomicAdd_system((unsigned long long*) mori_shmem_internal_remote((void*) (area + 8ull * me), pe), 1ull);
  }
  for (int pe = 0; pe < n; pe++) mori_shmem_uint64_wait_until_greater_or_equal((uint64_t*) (area + 8ull * pe), (uint64_t) target);
}

#endif  // MORI_SHMEM_CUH
