// mori4j shmem device library: MORI shmem's device API for kernels compiled at run time (NVRTC on NVIDIA,
// hiprtc on AMD). ShmemKernels.compile puts this file in front of the user's kernel source, so the whole
// library is one translation unit with the kernel and inlines into it; a kernel source may also say
// #include "mori_shmem.cuh" (ShmemKernels replaces that line, and the include guard makes a second copy a
// no-op).
//
// The library is four files that ShmemKernels inlines into one: this one (states, routing, copies, ordering),
// mori_shmem_proxy.cuh (PEs reached through GPU-initiated endpoints), mori_shmem_rma.cuh (puts, gets, signals)
// and mori_shmem_sync.cuh (waits, atomics, barriers).
//
// What a kernel sees:
//   - globalGpuStates: this PE's rank, the number of PEs, and where every PE's symmetric heap is mapped in
//     this process. Shmem.moduleInit(module) fills it after the module is loaded; until then every call
//     below sees nPes == 0.
//   - Symmetric addresses: a pointer into this PE's heap (Shmem.malloc) names the same object on every PE;
//     the put/get/atomic calls translate it to the target PE's mapping (mori_shmem_ptr_p2p).
//   - Transport: direct peer access (NVLink/XGMI, or two processes on one GPU) where the PE has a mapping of
//     the peer's heap; otherwise the peer's GPU-initiated endpoints (mori_shmem_proxy.cuh: RDMA work requests
//     posted through engine-actors' mori_rdma.cuh, which this library holds, and executed by a host proxy;
//     qpId % numQpPerPe picks the endpoint). A call aimed at a PE with neither
//     traps with a message rather than writing through a null pointer. qpId is ignored on a direct path.
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

// The slow paths (work requests through an endpoint) are real calls: inlined into every call site of a kernel that
// uses many device functions they made its stack frame 3.6 KiB (t_typed), and the context keeps local memory for
// the largest frame on every resident thread.
#define MORI_SHMEM_DEVICE_SLOW __device__ __noinline__
#define MORI_SHMEM_DEVICE __device__ __forceinline__
#if defined(MORI_SHMEM_HIP)
#define MORI_SHMEM_SYNCWARP() __builtin_amdgcn_wave_barrier()
#else
#define MORI_SHMEM_SYNCWARP() __syncwarp()
#endif

#define MORI_SHMEM_MAX_PES 64
#define MORI_SHMEM_MAX_QP_PER_PE 4
#define MORI_SHMEM_MAX_REGISTERED 64
// globalGpuStates.flags
#define MORI_SHMEM_FLAG_P2P_DISABLED 1u
// Layout version written by moduleInit; a kernel compiled against another layout traps on first use.
#define MORI_SHMEM_STATES_VERSION 2u

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

// One buffer registered with Shmem.bufferRegister (GpuStates.REGISTERED_LAYOUT): where a put's source or a get's
// destination outside the heap finds its lkey.
typedef struct {
  unsigned long long base;                           // offset 0
  unsigned long long size;                           // 8
  unsigned int lkey;                                 // 16
  unsigned int reserved;                             // 20
} MoriShmemRegisteredBuffer;                         // 24 bytes

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
  // PEs without a direct path, reached through GPU-initiated endpoints (the host proxy):
  unsigned int numQpPerPe;                           // 560: endpoints per such PE (0: none anywhere)
  unsigned int heapLkey;                             // 564: lkey of this PE's heap
  unsigned int numRegistered;                        // 568: entries of registered[]
  unsigned int reserved;                             // 572
  unsigned long long peerHeapRemoteBase[MORI_SHMEM_MAX_PES];  // 576: PE i's heap in its own process (RDMA address)
  unsigned int peerHeapRkey[MORI_SHMEM_MAX_PES];     // 1088: rkey of PE i's heap
  unsigned long long endpoints[MORI_SHMEM_MAX_PES * MORI_SHMEM_MAX_QP_PER_PE];  // 1344: [pe * MAX_QP + q]: MoriRdmaEndpoint*, 0 = none
  MoriShmemRegisteredBuffer registered[MORI_SHMEM_MAX_REGISTERED];  // 3392
} MoriShmemGpuStates;                                // 4928 bytes

extern "C" {
__device__ MoriShmemGpuStates globalGpuStates;
}

// Offsets of the library's words inside the heap's internal area (see ShmemHeap.INTERNAL_BYTES).
#define MORI_SHMEM_STREAM_BARRIER_OFFSET 0ull     // uint64 per source PE: barrierAll(stream) arrivals
#define MORI_SHMEM_DEVICE_BARRIER_OFFSET 512ull   // uint64 per source PE: mori_shmem_barrier_all_* arrivals
#define MORI_SHMEM_DEVICE_BARRIER_EPOCH 1024ull   // uint64: this PE's count of device barriers

// Printed by every trap of mori_rdma.cuh that names an endpoint (MORI_RDMA_TRAP_CONTEXT): which PE this is and
// which PE the endpoint leads to (-1: not one of this PE's endpoints).
MORI_SHMEM_DEVICE void mori_shmem_internal_endpoint_context(unsigned long long ep, unsigned int qpn) {
  int to = -1;
  for (int i = 0; ep != 0 && i < MORI_SHMEM_MAX_PES * MORI_SHMEM_MAX_QP_PER_PE; i++)
    if (globalGpuStates.endpoints[i] == ep) {
      to = i / MORI_SHMEM_MAX_QP_PER_PE;
      break;
    }
  printf("mori_shmem: PE %d: endpoint qpn %u leads to PE %d\n", globalGpuStates.rank, qpn, to);
}
#define MORI_RDMA_TRAP_CONTEXT(ep) mori_shmem_internal_endpoint_context((unsigned long long) (ep), (ep) == 0 ? 0u : (ep)->qpn)

// The queue protocol of GPU-initiated endpoints, engine-actors' mori_rdma.cuh (ShmemKernels puts its text here);
// also the one copy of NVRTC's stdint typedefs (MORI_SHMEM_NO_STDINT_TYPEDEFS skips them) and the clock
// mori_rdma_now_ns that the waits below time out by.
#include "mori_rdma.cuh"

MORI_SHMEM_DEVICE void mori_shmem_internal_fail(const char* what, unsigned long long a, long long b) {
  printf("mori_shmem: PE %d: %s (0x%llx, %lld)\n", globalGpuStates.rank, what, a, b);
  mori_rdma_internal_trap();
}

// PEs without a direct path: shmem calls as work requests on those endpoints (ShmemKernels puts the file's text here).
#include "mori_shmem_proxy.cuh"

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

// Where a put/get/p/g to pe goes: the translated address (direct path), or 0 with *ep set to the endpoint
// qpId % numQpPerPe of pe; traps when there is neither.
MORI_SHMEM_DEVICE void* mori_shmem_internal_route(const void* symmetric, int pe, int qpId, MoriRdmaEndpoint** ep) {
  *ep = 0;
  if (globalGpuStates.version != MORI_SHMEM_STATES_VERSION)
    mori_shmem_internal_fail("globalGpuStates not initialised (call Shmem.moduleInit) or of another layout version",
                             globalGpuStates.version, MORI_SHMEM_STATES_VERSION);
  const unsigned long long p = mori_shmem_ptr_p2p((uint64_t) symmetric, globalGpuStates.rank, pe);
  if (p != 0) return (void*) p;
  MoriRdmaEndpoint* e = mori_shmem_internal_endpoint(pe, qpId);
  if (e == 0) return mori_shmem_internal_remote(symmetric, pe);  // traps, naming why
  if ((unsigned long long) symmetric - globalGpuStates.heapBase >= globalGpuStates.heapSize)
    mori_shmem_internal_fail("address is not in the symmetric heap", (unsigned long long) symmetric, pe);
  *ep = e;
  return 0;
}

// Where an atomic on pe goes: as puts do. The proxy executes GPU-memory atomics at the target with a kernel's
// system-scope atomics, so they are atomic with the target's own and its direct-path peers' atomics.
MORI_SHMEM_DEVICE void* mori_shmem_internal_atomic_route(const void* symmetric, int pe, int qpId, MoriRdmaEndpoint** ep) {
  return mori_shmem_internal_route(symmetric, pe, qpId, ep);
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
  unsigned long long* sig = (unsigned long long*) mori_shmem_internal_remote(signalDest, pe);  // direct path only
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
// With endpoints it waits for every endpoint's work requests (the proxy pipelines plain writes, so only their
// completion orders them): stronger than a fence needs to be.
MORI_SHMEM_DEVICE int mori_shmem_fence() {
  __threadfence_system();
  mori_shmem_internal_quiet_all();
  return 0;
}

MORI_SHMEM_DEVICE int mori_shmem_fence_thread() { return mori_shmem_fence(); }

MORI_SHMEM_DEVICE int mori_shmem_fence_thread_pe(int pe) { return mori_shmem_fence(); }

// Completes this thread's earlier puts: after it they are visible to their target PEs. P2P puts are stores,
// so a system-scope fence is all that is outstanding for them; through endpoints it waits until every work
// request reserved so far (by any thread) has retired, and traps naming the status and PE on an error.
MORI_SHMEM_DEVICE int mori_shmem_quiet_thread() {
  __threadfence_system();
  mori_shmem_internal_quiet_all();
  return 0;
}

MORI_SHMEM_DEVICE int mori_shmem_quiet_thread_pe(int pe) { return mori_shmem_quiet_thread(); }
}  // extern "C"

// The data calls: put/get of bytes, puts with a signal, typed puts and gets (ShmemKernels puts the file's text here).
#include "mori_shmem_rma.cuh"

// Synchronization: waits on local words, remote atomics, barriers (ShmemKernels puts the file's text here).
#include "mori_shmem_sync.cuh"

#endif  // MORI_SHMEM_CUH
