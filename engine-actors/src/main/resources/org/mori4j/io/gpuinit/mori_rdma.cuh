// mori4j GPU-initiated RDMA device library: the kernel side of an onGpu RdmaEndpoint (MORI's device
// functions PostWrite, UpdateSendDbrRecord, RingDoorbell, PollCq, UpdateCqDbrRecord and the rest), compiled at
// run time with the kernel (NVRTC on NVIDIA, hiprtc on AMD). GpuInitiatedKernels puts this file in front of
// the kernel's source, so the library inlines into the kernel; a kernel may also say
// #include "mori_rdma.cuh" (GpuInitiatedKernels replaces that line; the include guard makes a second copy a
// no-op). mori_shmem.cuh (the shmem module) is built on this file: ShmemKernels puts its text where the shmem
// library includes it, and the shmem calls to PEs without a direct path post through the functions below, so
// this file is the one writer of the queue protocol on the device. The mori_rdma_internal_* helpers are for
// such libraries, not for kernels.
//
// What a kernel gets: a MoriRdmaEndpoint* (RdmaEndpoint.address() on the host), the address and lkey of its
// own registered buffers and the address and rkey of the peer's (RdmaMemoryRegion). The endpoint's block
// (control block, send queue, completion queue, receive queue, atomic result cells) lives in pinned host
// memory that the GPU reads and writes directly. Nothing here talks to a NIC: the engine's host proxy polls
// the doorbell, executes the work requests and writes the completions. The queue protocol is the one a NIC
// would see; only the executor differs.
//
// Protocol (engine-actors/docs/gpu-initiated.md, "GPU-initiated transfers", has the full table):
//   post: i = atomicAdd(sqPostIdx, n); wait while i + n - sqRetired > sqDepth (never overwrite a WQE the
//         proxy has not retired); write the WQEs; publish them: wait until sqDbrRecord == i, system fence,
//         sqDbrRecord = i + n (so sqDbrRecord only ever covers WQEs that are completely written).
//   ring: system fence, atomicMax(sqDoorbell, upTo). The proxy executes [done, min(sqDoorbell, sqDbrRecord)).
//   poll: the CQE at cqPollIdx is valid when its owner word equals cqPollIdx + 1 (the proxy stores owner
//         last); the kernel gives consumed CQEs back with UpdateCqDbrRecord, or the proxy stops at a full CQ.
//
// Memory ordering: every word the proxy writes is read with a volatile load and, once the awaited value is
// seen, a system-scope fence orders the loads that follow after it. WQE bytes are ordinary stores followed
// by __threadfence_system() before the store that publishes them.
//
// Waits (queue space, publication order, retirement, completions) give up after the endpoint's
// waitTimeoutNs (mori4j.gpu-initiated.wait-timeout; 0 = never) and trap with a printf naming the endpoint's
// qpn, the wait and the indices involved, so a dead proxy or a forgotten doorbell fails the kernel's stream
// instead of spinning for ever. A library built on this one may define MORI_RDMA_TRAP_CONTEXT(ep) before it
// includes this file: every trap that names an endpoint calls it after its own message, to print what the
// endpoint is to that library (mori_shmem.cuh prints this PE and the PE the endpoint leads to).
// Every wait pauses about 256 ns between two reads: the words it reads live in pinned host memory, each read is
// a PCIe round trip, and threads re-reading them back to back flood the link with the same kind of requests
// that the GPU's copy engines need to stage the proxy's own transfers. (Added for shmem's endpoints, where a
// stall on 1x H100 was first blamed on it; that stall was CUDA's lazy module loading, so no gain is measured.)
#ifndef MORI_RDMA_CUH
#define MORI_RDMA_CUH

#if defined(__HIPCC__) || defined(__HIPCC_RTC__) || defined(__HIP_PLATFORM_AMD__)
#define MORI_RDMA_HIP 1
#endif

// NVRTC and hiprtc have no <stdint.h>: glibc's LP64 types, the only copy (mori_shmem.cuh gets them from here),
// skipped when the kernel brings its own <cstdint> and defines either of the two NO_STDINT_TYPEDEFS macros.
#if !defined(MORI_RDMA_NO_STDINT_TYPEDEFS) && !defined(MORI_SHMEM_NO_STDINT_TYPEDEFS) && \
    (defined(__CUDACC_RTC__) || defined(__HIPCC_RTC__))
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

#define MORI_RDMA_DEVICE __device__ __forceinline__
#if defined(MORI_RDMA_HIP)
#define MORI_RDMA_SYNCWARP() __builtin_amdgcn_wave_barrier()
#define MORI_RDMA_SHFL0(v) __shfl((v), 0)
#else
#define MORI_RDMA_SYNCWARP() __syncwarp()
#define MORI_RDMA_SHFL0(v) __shfl_sync(0xffffffffu, (v), 0)
#endif

// The endpoint block, the WQE/CQE formats and their constants (GpuInitiatedKernels puts the file's text here).
#include "mori_rdma_layout.h"

// ---- internals ----

#ifndef MORI_RDMA_TRAP_CONTEXT
#define MORI_RDMA_TRAP_CONTEXT(ep) ((void) 0)
#endif

MORI_RDMA_DEVICE void mori_rdma_internal_trap() {
#if defined(MORI_RDMA_HIP)
  // trap 2 is what llvm.trap becomes on AMDGPU (the trap handler ends the dispatch with an error). Written as
  // assembly because LLVM 15 (ROCm 5.2 on Debian 12) fails with "failed to annotate CFG" on a noreturn trap
  // (abort(), __builtin_trap()) inside the waits' loops when they sit in divergent branches.
  asm volatile("s_trap 2");
#else
  __trap();
#endif
}

MORI_RDMA_DEVICE unsigned long long mori_rdma_internal_now_ns() {
#if defined(MORI_RDMA_HIP)
  // s_memrealtime counts at a constant 100 MHz on CDNA GPUs: 10 ns per tick.
  return (unsigned long long) __builtin_amdgcn_s_memrealtime() * 10ull;
#else
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#endif
}

MORI_RDMA_DEVICE unsigned long long mori_rdma_internal_load(const unsigned long long* p) {
  return *(const volatile unsigned long long*) p;
}

MORI_RDMA_DEVICE unsigned int mori_rdma_internal_load32(const unsigned int* p) { return *(const volatile unsigned int*) p; }

MORI_RDMA_DEVICE void mori_rdma_internal_store(unsigned long long* p, unsigned long long v) {
  *(volatile unsigned long long*) p = v;
}

MORI_RDMA_DEVICE void mori_rdma_internal_fail(const MoriRdmaEndpoint* ep, const char* what, unsigned long long a,
                                              unsigned long long b) {
  printf("mori_rdma: endpoint qpn %u: %s (%llu, %llu)\n", ep == 0 ? 0u : ep->qpn, what, a, b);
  MORI_RDMA_TRAP_CONTEXT(ep);
  mori_rdma_internal_trap();
}

// The pause between two reads of a word in the endpoint's block (pinned host memory; see the header comment).
MORI_RDMA_DEVICE void mori_rdma_internal_pause() {
#if defined(MORI_RDMA_HIP)
  __builtin_amdgcn_s_sleep(2);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  __nanosleep(256);
#endif
}

// Called every so many spins of a wait that started at start: traps once waitTimeoutNs has passed.
MORI_RDMA_DEVICE void mori_rdma_internal_wait_check(const MoriRdmaEndpoint* ep, unsigned long long start, const char* wait,
                                                    const char* idxName, unsigned long long idx, const char* seenName,
                                                    unsigned long long seen) {
  const unsigned long long limit = ep->waitTimeoutNs;
  if (limit != 0 && mori_rdma_internal_now_ns() - start > limit) {
    printf("mori_rdma: endpoint qpn %u: %s timed out after %llu ns (%s %llu, %s %llu, state %u, errors %u)\n", ep->qpn, wait,
           limit, idxName, idx, seenName, seen, mori_rdma_internal_load32(&ep->state), mori_rdma_internal_load32(&ep->errorCount));
    MORI_RDMA_TRAP_CONTEXT(ep);
    mori_rdma_internal_trap();
  }
}

// The endpoint as the host built it, or a trap (a wrong pointer, or a kernel compiled against another layout).
MORI_RDMA_DEVICE void mori_rdma_internal_check(const MoriRdmaEndpoint* ep) {
  if (ep == 0) mori_rdma_internal_fail(ep, "null endpoint", 0, 0);
  if (ep->magic != MORI_RDMA_MAGIC || ep->version != MORI_RDMA_VERSION)
    mori_rdma_internal_fail(ep, "not a MoriRdmaEndpoint of this layout (magic, version)", ep->magic, ep->version);
}

MORI_RDMA_DEVICE MoriRdmaWqe* mori_rdma_internal_wqe(MoriRdmaEndpoint* ep, unsigned long long idx) {
  return ((MoriRdmaWqe*) ep->sqRing) + (idx & (unsigned long long) (ep->sqDepth - 1));
}

MORI_RDMA_DEVICE unsigned int mori_rdma_internal_lane() { return threadIdx.x % warpSize; }

MORI_RDMA_DEVICE unsigned int mori_rdma_internal_block_thread() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

MORI_RDMA_DEVICE unsigned int mori_rdma_internal_block_threads() { return blockDim.x * blockDim.y * blockDim.z; }

extern "C" {

// The GPU's nanosecond clock (%globaltimer on NVIDIA, s_memrealtime on AMD): what the waits time out by.
MORI_RDMA_DEVICE unsigned long long mori_rdma_now_ns() { return mori_rdma_internal_now_ns(); }

// ---- doorbell record and doorbell ----

// Rings the doorbell: the proxy may execute every published WQE below upTo. The fence makes the WQEs and the
// doorbell record visible to the host first. The doorbell only grows, so racing ringers are harmless.
MORI_RDMA_DEVICE void mori_rdma_ring_doorbell(MoriRdmaEndpoint* ep, unsigned long long upTo) {
  __threadfence_system();
  atomicMax(&ep->sqDoorbell, upTo);
}

// Publishes WQEs [idx, idx + n), which the caller reserved and wrote: waits until every earlier WQE is
// published (the record covers a prefix of the queue), then, after a system fence, moves the record past
// them. Already published (the post functions publish themselves): returns at once, so MORI's sequence
// PostWrite, UpdateSendDbrRecord, RingDoorbell works unchanged.
MORI_RDMA_DEVICE void mori_rdma_update_send_dbr_record(MoriRdmaEndpoint* ep, unsigned long long idx, unsigned int n) {
  const unsigned long long start = mori_rdma_internal_now_ns();
  unsigned long long seen;
  unsigned int spins = 0;
  while ((seen = mori_rdma_internal_load(&ep->sqDbrRecord)) < idx) {
    mori_rdma_internal_pause();
    if ((++spins & 1023u) == 0)
      mori_rdma_internal_wait_check(ep, start, "publishing WQEs (an earlier reserved WQE was never published)", "index", idx,
                                    "sqDbrRecord", seen);
  }
  if (seen >= idx + n) return;
  __threadfence_system();
  mori_rdma_internal_store(&ep->sqDbrRecord, idx + n);
}

// Reserves n consecutive WQE slots and returns the first index. Waits (ringing the doorbell for what is
// already published, so that the proxy can drain it) while the queue has no room: a WQE is never
// overwritten before the proxy retired it.
MORI_RDMA_DEVICE unsigned long long mori_rdma_reserve_send(MoriRdmaEndpoint* ep, unsigned int n) {
  mori_rdma_internal_check(ep);
  const unsigned long long depth = ep->sqDepth;
  if (n == 0 || n > depth) mori_rdma_internal_fail(ep, "cannot reserve this many WQEs at once (count, sqDepth)", n, depth);
  const unsigned long long idx = atomicAdd(&ep->sqPostIdx, (unsigned long long) n);
  unsigned long long retired = mori_rdma_internal_load(&ep->sqRetired);
  if (idx + n - retired > depth) {
    mori_rdma_ring_doorbell(ep, idx);
    const unsigned long long start = mori_rdma_internal_now_ns();
    unsigned int spins = 0;
    while (idx + n - (retired = mori_rdma_internal_load(&ep->sqRetired)) > depth) {
      mori_rdma_internal_pause();
      if ((++spins & 1023u) == 0)
        mori_rdma_internal_wait_check(ep, start, "waiting for room in the send queue (queue full)", "index", idx, "sqRetired",
                                      retired);
    }
    __threadfence_system();
  }
  return idx;
}

// Writes WQE idx (reserved by the caller). Does not publish it.
MORI_RDMA_DEVICE void mori_rdma_write_wqe(MoriRdmaEndpoint* ep, unsigned long long idx, unsigned int opcode, unsigned int flags,
                                          unsigned long long wrId, unsigned long long laddr, unsigned int lkey, unsigned int bytes,
                                          unsigned long long raddr, unsigned int rkey, unsigned int imm,
                                          unsigned long long compareAdd, unsigned long long swap) {
  MoriRdmaWqe* w = mori_rdma_internal_wqe(ep, idx);
  w->opcode = (unsigned char) opcode;
  w->flags = (unsigned char) flags;
  w->reserved0 = 0;
  w->immediate = imm;
  w->wrId = wrId;
  w->localAddr = laddr;
  w->lkey = lkey;
  w->length = bytes;
  w->remoteAddr = raddr;
  w->rkey = rkey;
  w->reserved1 = 0;
  w->compareAdd = compareAdd;
  w->swap = swap;
}

// ---- posts: each returns the caller's WQE index; each publishes (doorbell record); none rings ----

MORI_RDMA_DEVICE unsigned long long mori_rdma_internal_post_thread(MoriRdmaEndpoint* ep, unsigned int opcode, unsigned int flags,
                                                                   unsigned long long wrId, unsigned long long laddr,
                                                                   unsigned int lkey, unsigned int bytes,
                                                                   unsigned long long raddr, unsigned int rkey, unsigned int imm,
                                                                   unsigned long long compareAdd, unsigned long long swap) {
  const unsigned long long idx = mori_rdma_reserve_send(ep, 1);
  mori_rdma_write_wqe(ep, idx, opcode, flags, wrId, laddr, lkey, bytes, raddr, rkey, imm, compareAdd, swap);
  mori_rdma_update_send_dbr_record(ep, idx, 1);
  return idx;
}

// Every lane of the warp calls it (each with its own WR): lane 0 reserves warpSize slots with one atomic,
// every lane writes its WQE at base + lane, and lane 0 publishes the warp's WQEs after a warp sync.
MORI_RDMA_DEVICE unsigned long long mori_rdma_internal_post_warp(MoriRdmaEndpoint* ep, unsigned int opcode, unsigned int flags,
                                                                 unsigned long long wrId, unsigned long long laddr,
                                                                 unsigned int lkey, unsigned int bytes, unsigned long long raddr,
                                                                 unsigned int rkey, unsigned int imm,
                                                                 unsigned long long compareAdd, unsigned long long swap) {
  const unsigned int lane = mori_rdma_internal_lane();
  unsigned long long base = 0;
  if (lane == 0) base = mori_rdma_reserve_send(ep, warpSize);
  base = MORI_RDMA_SHFL0(base);
  const unsigned long long idx = base + lane;
  mori_rdma_write_wqe(ep, idx, opcode, flags, wrId, laddr, lkey, bytes, raddr, rkey, imm, compareAdd, swap);
  __threadfence_system();
  MORI_RDMA_SYNCWARP();
  if (lane == 0) mori_rdma_update_send_dbr_record(ep, base, warpSize);
  MORI_RDMA_SYNCWARP();
  return idx;
}

// Every thread of the block calls it (each with its own WR): thread 0 reserves one slot per thread with one
// atomic, every thread writes its WQE, and thread 0 publishes them all after a block sync.
MORI_RDMA_DEVICE unsigned long long mori_rdma_internal_post_block(MoriRdmaEndpoint* ep, unsigned int opcode, unsigned int flags,
                                                                  unsigned long long wrId, unsigned long long laddr,
                                                                  unsigned int lkey, unsigned int bytes, unsigned long long raddr,
                                                                  unsigned int rkey, unsigned int imm,
                                                                  unsigned long long compareAdd, unsigned long long swap) {
  __shared__ unsigned long long moriRdmaBlockBase;
  const unsigned int t = mori_rdma_internal_block_thread(), n = mori_rdma_internal_block_threads();
  __syncthreads();  // an earlier call's readers of moriRdmaBlockBase are done
  if (t == 0) moriRdmaBlockBase = mori_rdma_reserve_send(ep, n);
  __syncthreads();
  const unsigned long long base = moriRdmaBlockBase;
  const unsigned long long idx = base + t;
  mori_rdma_write_wqe(ep, idx, opcode, flags, wrId, laddr, lkey, bytes, raddr, rkey, imm, compareAdd, swap);
  __threadfence_system();
  __syncthreads();
  if (t == 0) mori_rdma_update_send_dbr_record(ep, base, n);
  __syncthreads();
  return idx;
}

#define MORI_RDMA_POSTS(SCOPE)                                                                                              \
  MORI_RDMA_DEVICE unsigned long long mori_rdma_post_write_##SCOPE(MoriRdmaEndpoint* ep, unsigned long long laddr,          \
                                                                   unsigned int lkey, unsigned long long raddr,             \
                                                                   unsigned int rkey, unsigned int bytes, unsigned int flags, \
                                                                   unsigned long long wrId) {                               \
    return mori_rdma_internal_post_##SCOPE(ep, MORI_RDMA_OP_RDMA_WRITE, flags, wrId, laddr, lkey, bytes, raddr, rkey, 0, 0, 0);  \
  }                                                                                                                         \
  MORI_RDMA_DEVICE unsigned long long mori_rdma_post_read_##SCOPE(MoriRdmaEndpoint* ep, unsigned long long laddr,           \
                                                                  unsigned int lkey, unsigned long long raddr,              \
                                                                  unsigned int rkey, unsigned int bytes, unsigned int flags,  \
                                                                  unsigned long long wrId) {                                \
    return mori_rdma_internal_post_##SCOPE(ep, MORI_RDMA_OP_RDMA_READ, flags, wrId, laddr, lkey, bytes, raddr, rkey, 0, 0, 0);   \
  }                                                                                                                         \
  MORI_RDMA_DEVICE unsigned long long mori_rdma_post_write_imm_##SCOPE(                                                     \
      MoriRdmaEndpoint* ep, unsigned long long laddr, unsigned int lkey, unsigned long long raddr, unsigned int rkey,       \
      unsigned int bytes, unsigned int imm, unsigned int flags, unsigned long long wrId) {                                  \
    return mori_rdma_internal_post_##SCOPE(ep, MORI_RDMA_OP_RDMA_WRITE_WITH_IMM, flags, wrId, laddr, lkey, bytes, raddr, rkey,   \
                                           imm, 0, 0);                                                                      \
  }                                                                                                                         \
  MORI_RDMA_DEVICE unsigned long long mori_rdma_post_send_##SCOPE(MoriRdmaEndpoint* ep, unsigned long long laddr,           \
                                                                  unsigned int lkey, unsigned int bytes, unsigned int flags,  \
                                                                  unsigned long long wrId) {                                \
    return mori_rdma_internal_post_##SCOPE(ep, MORI_RDMA_OP_SEND, flags, wrId, laddr, lkey, bytes, 0, 0, 0, 0, 0);          \
  }

MORI_RDMA_POSTS(thread)
MORI_RDMA_POSTS(warp)
MORI_RDMA_POSTS(block)
#undef MORI_RDMA_POSTS

// WQE idx's 8-byte result cell in the endpoint's block (registered under ep->internalLkey; reused sqDepth posts
// later): where an atomic's old value lands, and the local side of any WQE of up to 8 bytes that has no buffer of
// its own (mori_shmem.cuh stages a p's value in it for a WRITE, and a g's READ lands in it).
MORI_RDMA_DEVICE unsigned long long* mori_rdma_result_cell(MoriRdmaEndpoint* ep, unsigned long long idx) {
  return ((unsigned long long*) ep->atomicResults) + (idx & (unsigned long long) (ep->sqDepth - 1));
}

// Remote atomics on an 8-byte aligned word: the old value lands in the WQE's result cell (mori_rdma_atomic_result
// once the WQE retired).
MORI_RDMA_DEVICE unsigned long long mori_rdma_post_atomic_fetch_add_thread(MoriRdmaEndpoint* ep, unsigned long long raddr,
                                                                           unsigned int rkey, unsigned long long add,
                                                                           unsigned int flags, unsigned long long wrId) {
  const unsigned long long idx = mori_rdma_reserve_send(ep, 1);
  const unsigned long long cell = (unsigned long long) mori_rdma_result_cell(ep, idx);
  mori_rdma_write_wqe(ep, idx, MORI_RDMA_OP_ATOMIC_FETCH_AND_ADD, flags, wrId, cell, ep->internalLkey, 8, raddr, rkey, 0, add, 0);
  mori_rdma_update_send_dbr_record(ep, idx, 1);
  return idx;
}

MORI_RDMA_DEVICE unsigned long long mori_rdma_post_atomic_cas_thread(MoriRdmaEndpoint* ep, unsigned long long raddr,
                                                                     unsigned int rkey, unsigned long long compare,
                                                                     unsigned long long swap, unsigned int flags,
                                                                     unsigned long long wrId) {
  const unsigned long long idx = mori_rdma_reserve_send(ep, 1);
  const unsigned long long cell = (unsigned long long) mori_rdma_result_cell(ep, idx);
  mori_rdma_write_wqe(ep, idx, MORI_RDMA_OP_ATOMIC_CMP_AND_SWP, flags, wrId, cell, ep->internalLkey, 8, raddr, rkey, 0, compare,
                      swap);
  mori_rdma_update_send_dbr_record(ep, idx, 1);
  return idx;
}

// The old value an atomic WQE idx fetched (or what a READ into its result cell brought); valid after
// mori_rdma_wait_retired(ep, idx) (or its CQE) and before the endpoint's next sqDepth posts.
MORI_RDMA_DEVICE unsigned long long mori_rdma_atomic_result(MoriRdmaEndpoint* ep, unsigned long long idx) {
  return mori_rdma_internal_load(mori_rdma_result_cell(ep, idx));
}

}  // extern "C"

// Retirement, completions and receives (GpuInitiatedKernels puts the file's text here).
#include "mori_rdma_completions.cuh"

extern "C" {

// ---- MORI's names ----

// PostWrite as in MORI's example (signaled; wrId is the WQE index); publishes, does not ring.
MORI_RDMA_DEVICE unsigned long long PostWrite(MoriRdmaEndpoint* ep, unsigned long long laddr, unsigned int lkey,
                                              unsigned long long raddr, unsigned int rkey, unsigned int bytes) {
  const unsigned long long idx = mori_rdma_reserve_send(ep, 1);
  mori_rdma_write_wqe(ep, idx, MORI_RDMA_OP_RDMA_WRITE, MORI_RDMA_FLAG_SIGNALED, idx, laddr, lkey, bytes, raddr, rkey, 0, 0, 0);
  mori_rdma_update_send_dbr_record(ep, idx, 1);
  return idx;
}

MORI_RDMA_DEVICE void UpdateSendDbrRecord(MoriRdmaEndpoint* ep, unsigned long long idx, unsigned int n) {
  mori_rdma_update_send_dbr_record(ep, idx, n);
}

MORI_RDMA_DEVICE void RingDoorbell(MoriRdmaEndpoint* ep, unsigned long long upTo) { mori_rdma_ring_doorbell(ep, upTo); }

MORI_RDMA_DEVICE int PollCq(MoriRdmaEndpoint* ep, MoriRdmaCqe* out) { return mori_rdma_poll_cq(ep, out); }

MORI_RDMA_DEVICE void UpdateCqDbrRecord(MoriRdmaEndpoint* ep, unsigned long long v) { mori_rdma_update_cq_dbr_record(ep, v); }

}  // extern "C"

#endif  // MORI_RDMA_CUH