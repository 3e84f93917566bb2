// mori4j shmem device library, part 4: synchronization - waits on local words (where signals land), remote
// atomics (direct path or FETCH_ADD / CMP_AND_SWP work requests), barriers inside kernels and the kernel behind
// Shmem.barrierAll(stream). ShmemKernels.deviceLibrary() puts this file where mori_shmem.cuh includes it, after
// part 3, so kernels see one translation unit.

// ---- waits on local words (signals land here); each returns the value that satisfied it ----
// The fence after the awaited value is system scope: the word is written by another GPU (NVLink) or by the host
// proxy, and a device-scope fence does not order this thread's later loads after a write from outside the GPU (seen
// on 2x H200: data read stale after its flag).
MORI_SHMEM_DEVICE void mori_shmem_internal_wait_check(const void* addr, unsigned long long start) {
  const unsigned long long limit = globalGpuStates.waitTimeoutNs;
  if (limit != 0 && mori_rdma_now_ns() - start > limit)
    mori_shmem_internal_fail("wait timed out (a PE died, or never signals this word)", (unsigned long long) addr, (long long) limit);
}

#define MORI_SHMEM_WAIT(NAME, T, COND_NAME, COND)                                                    \
  extern "C" MORI_SHMEM_DEVICE T mori_shmem_##NAME##_wait_until_##COND_NAME(T* addr, T val) {         \
    const unsigned long long start = mori_rdma_now_ns();                                    \
    T seen;                                                                                           \
    unsigned int spins = 0;                                                                           \
    while (!((seen = *(volatile T*) addr) COND val)) {                                                \
      if ((++spins & 1023u) == 0) mori_shmem_internal_wait_check(addr, start);                        \
    }                                                                                                 \
    __threadfence_system();                                                                           \
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

// ---- remote atomics: system-scope atomics on the target PE's word through a direct path; through the PE's
// endpoint (FETCH_ADD / CMP_AND_SWP work requests) whenever it has one (see mori_shmem_internal_atomic_route) ----
extern "C" {

MORI_SHMEM_DEVICE uint32_t mori_shmem_internal_atomic32(uint32_t* dest, uint32_t val, uint32_t compare, int amo, bool fetch, int pe, int qpId) {
  MoriRdmaEndpoint* ep;
  unsigned int* p = (unsigned int*) mori_shmem_internal_atomic_route(dest, pe, qpId, &ep);
  if (p == 0) {
    switch (amo) {
      case AMO_FETCH_ADD: return mori_shmem_internal_proxy_fetch_add32(ep, dest, val, fetch, pe);
      case AMO_FETCH_INC: return mori_shmem_internal_proxy_fetch_add32(ep, dest, 1u, fetch, pe);
      case AMO_FETCH: return mori_shmem_internal_proxy_fetch_add32(ep, dest, 0u, true, pe);
      case AMO_FETCH_AND: return mori_shmem_internal_proxy_rmw32(ep, dest, val, 0, 0, pe);
      case AMO_FETCH_OR: return mori_shmem_internal_proxy_rmw32(ep, dest, val, 0, 1, pe);
      case AMO_FETCH_XOR: return mori_shmem_internal_proxy_rmw32(ep, dest, val, 0, 2, pe);
      case AMO_SWAP: return mori_shmem_internal_proxy_rmw32(ep, dest, val, 0, 3, pe);
      case AMO_COMPARE_SWAP: return mori_shmem_internal_proxy_rmw32(ep, dest, val, compare, 4, pe);
      default: mori_shmem_internal_fail("unsupported fetching atomic op", (unsigned long long) dest, amo); return 0;
    }
  }
  switch (amo) {
    case AMO_FETCH_ADD: return atomicAdd_system(p, val);
    case AMO_FETCH_INC: return atomicAdd_system(p, 1u);
    case AMO_FETCH_AND: return atomicAnd_system(p, val);
    case AMO_FETCH_OR: return atomicOr_system(p, val);
    case AMO_FETCH_XOR: return atomicXor_system(p, val);
    case AMO_SWAP: return atomicExch_system(p, val);
    case AMO_COMPARE_SWAP: return atomicCAS_system(p, compare, val);
    case AMO_FETCH: return atomicAdd_system(p, 0u);
    default: mori_shmem_internal_fail("unsupported fetching atomic op", (unsigned long long) dest, amo); return 0;
  }
}

MORI_SHMEM_DEVICE uint64_t mori_shmem_internal_atomic64(uint64_t* dest, uint64_t val, uint64_t compare, int amo, bool fetch, int pe, int qpId) {
  MoriRdmaEndpoint* ep;
  unsigned long long* p = (unsigned long long*) mori_shmem_internal_atomic_route(dest, pe, qpId, &ep);
  const unsigned long long v = (unsigned long long) val;
  if (p == 0) {
    switch (amo) {
      case AMO_FETCH_ADD: return mori_shmem_internal_proxy_fetch_add(ep, dest, v, fetch, 0, pe);
      case AMO_FETCH_INC: return mori_shmem_internal_proxy_fetch_add(ep, dest, 1ull, fetch, 0, pe);
      case AMO_FETCH: return mori_shmem_internal_proxy_fetch_add(ep, dest, 0ull, true, 0, pe);
      case AMO_FETCH_AND: return mori_shmem_internal_proxy_rmw64(ep, dest, v, 0, pe);
      case AMO_FETCH_OR: return mori_shmem_internal_proxy_rmw64(ep, dest, v, 1, pe);
      case AMO_FETCH_XOR: return mori_shmem_internal_proxy_rmw64(ep, dest, v, 2, pe);
      case AMO_SWAP: return mori_shmem_internal_proxy_rmw64(ep, dest, v, 3, pe);
      case AMO_COMPARE_SWAP: return mori_shmem_internal_proxy_cas(ep, dest, (unsigned long long) compare, v, pe);
      default: mori_shmem_internal_fail("unsupported fetching atomic op", (unsigned long long) dest, amo); return 0;
    }
  }
  switch (amo) {
    case AMO_FETCH_ADD: return atomicAdd_system(p, v);
    case AMO_FETCH_INC: return atomicAdd_system(p, 1ull);
    case AMO_FETCH_AND: return atomicAnd_system(p, v);
    case AMO_FETCH_OR: return atomicOr_system(p, v);
    case AMO_FETCH_XOR: return atomicXor_system(p, v);
    case AMO_SWAP: return atomicExch_system(p, v);
    case AMO_COMPARE_SWAP: return atomicCAS_system(p, (unsigned long long) compare, v);
    case AMO_FETCH: return atomicAdd_system(p, 0ull);
    default: mori_shmem_internal_fail("unsupported fetching atomic op", (unsigned long long) dest, amo); return 0;
  }
}

MORI_SHMEM_DEVICE uint32_t mori_shmem_uint32_atomic_fetch_add_thread(uint32_t* dest, uint32_t val, int pe, int qpId) {
  return mori_shmem_internal_atomic32(dest, val, 0, AMO_FETCH_ADD, true, pe, qpId);
}

// No fetch: through an endpoint it completes at the next quiet, fence or barrier.
MORI_SHMEM_DEVICE int mori_shmem_uint32_atomic_add_thread(uint32_t* dest, uint32_t val, int pe, int qpId) {
  mori_shmem_internal_atomic32(dest, val, 0, AMO_FETCH_ADD, false, pe, qpId);
  return 0;
}

MORI_SHMEM_DEVICE uint64_t mori_shmem_uint64_atomic_fetch_add_thread(uint64_t* dest, uint64_t val, int pe, int qpId) {
  return mori_shmem_internal_atomic64(dest, val, 0, AMO_FETCH_ADD, true, pe, qpId);
}

MORI_SHMEM_DEVICE int mori_shmem_uint64_atomic_add_thread(uint64_t* dest, uint64_t val, int pe, int qpId) {
  mori_shmem_internal_atomic64(dest, val, 0, AMO_FETCH_ADD, false, pe, qpId);
  return 0;
}

MORI_SHMEM_DEVICE int64_t mori_shmem_int64_atomic_fetch_add_thread(int64_t* dest, int64_t val, int pe, int qpId) {
  return (int64_t) mori_shmem_uint64_atomic_fetch_add_thread((uint64_t*) dest, (uint64_t) val, pe, qpId);
}

MORI_SHMEM_DEVICE int mori_shmem_int64_atomic_add_thread(int64_t* dest, int64_t val, int pe, int qpId) {
  return mori_shmem_uint64_atomic_add_thread((uint64_t*) dest, (uint64_t) val, pe, qpId);
}

MORI_SHMEM_DEVICE int32_t mori_shmem_int32_atomic_fetch_add_thread(int32_t* dest, int32_t val, int pe, int qpId) {
  return (int32_t) mori_shmem_uint32_atomic_fetch_add_thread((uint32_t*) dest, (uint32_t) val, pe, qpId);
}

// Swaps in val where the word equals compare; returns the word's old value either way.
MORI_SHMEM_DEVICE uint32_t mori_shmem_uint32_atomic_compare_swap_thread(uint32_t* dest, uint32_t compare, uint32_t val, int pe,
                                                                        int qpId) {
  return mori_shmem_internal_atomic32(dest, val, compare, AMO_COMPARE_SWAP, true, pe, qpId);
}

MORI_SHMEM_DEVICE uint64_t mori_shmem_uint64_atomic_compare_swap_thread(uint64_t* dest, uint64_t compare, uint64_t val, int pe,
                                                                        int qpId) {
  return mori_shmem_internal_atomic64(dest, val, compare, AMO_COMPARE_SWAP, true, pe, qpId);
}

MORI_SHMEM_DEVICE int32_t mori_shmem_int32_atomic_compare_swap_thread(int32_t* dest, int32_t compare, int32_t val, int pe, int qpId) {
  return (int32_t) mori_shmem_uint32_atomic_compare_swap_thread((uint32_t*) dest, (uint32_t) compare, (uint32_t) val, pe, qpId);
}

MORI_SHMEM_DEVICE int64_t mori_shmem_int64_atomic_compare_swap_thread(int64_t* dest, int64_t compare, int64_t val, int pe, int qpId) {
  return (int64_t) mori_shmem_uint64_atomic_compare_swap_thread((uint64_t*) dest, (uint64_t) compare, (uint64_t) val, pe, qpId);
}

// MORI's generic fetching atomics: AMO_FETCH_ADD, AMO_FETCH_INC, AMO_FETCH_AND/OR/XOR, AMO_SWAP,
// AMO_COMPARE_SWAP and AMO_FETCH (a read); any other op traps. Through an endpoint AND/OR/XOR/SWAP are
// compare-and-swap loops (the proxy, like a NIC, has fetch-add and compare-and-swap only).
MORI_SHMEM_DEVICE uint64_t mori_shmem_atomic_uint64_fetch_thread(uint64_t* dest, uint64_t val, uint64_t compare, atomicType amoType,
                                                                 int pe, int qpId) {
  return mori_shmem_internal_atomic64(dest, val, compare, amoType, true, pe, qpId);
}

MORI_SHMEM_DEVICE uint32_t mori_shmem_atomic_uint32_fetch_thread(uint32_t* dest, uint32_t val, uint32_t compare, atomicType amoType,
                                                                 int pe, int qpId) {
  return mori_shmem_internal_atomic32(dest, val, compare, amoType, true, pe, qpId);
}

// ---- barriers inside kernels ----

// Marks this PE's arrival on pe: its arrival word there counts this PE's barriers of that kind, and `count` is
// the value it reaches with this one. Each arrival word has one writer (the PE it belongs to), so a direct path
// adds one and an endpoint writes the count (a fenced 8-byte write: it lands after this PE's earlier work
// requests on that endpoint, and needs no atomic at the target).
MORI_SHMEM_DEVICE void mori_shmem_internal_arrive(void* word, int pe, unsigned long long count) {
  const unsigned long long d = mori_shmem_ptr_p2p((uint64_t) word, globalGpuStates.rank, pe);
  MoriRdmaEndpoint* ep = mori_shmem_internal_endpoint(pe, 0);
  if (d != 0 || ep == 0) atomicAdd_system((unsigned long long*) mori_shmem_internal_remote(word, pe), 1ull);
  else mori_shmem_internal_proxy_p(ep, word, count, 8, MORI_RDMA_FLAG_FENCE, pe);
}

// Every PE's thread calls it once per barrier (one thread per PE, e.g. thread 0 of block 0 with the rest of
// the grid waiting on it); it returns when every PE has arrived at the same barrier.
MORI_SHMEM_DEVICE int mori_shmem_barrier_all_thread() {
  const int n = globalGpuStates.nPes, me = globalGpuStates.rank;
  unsigned long long* epochWord = (unsigned long long*) (globalGpuStates.heapBase + globalGpuStates.internalOffset +
                                                         MORI_SHMEM_DEVICE_BARRIER_EPOCH);
  const unsigned long long epoch = *epochWord + 1;
  *epochWord = epoch;
  __threadfence_system();
  mori_shmem_internal_quiet_all();  // this PE's puts through endpoints have landed before it arrives
  const unsigned long long slot = globalGpuStates.internalOffset + MORI_SHMEM_DEVICE_BARRIER_OFFSET + 8ull * me;
  for (int pe = 0; pe < n; pe++) mori_shmem_internal_arrive((void*) (globalGpuStates.heapBase + slot), pe, epoch);
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
  mori_shmem_internal_quiet_all();
  for (int pe = 0; pe < n; pe++) mori_shmem_internal_arrive((void*) (area + 8ull * me), pe, target);
  for (int pe = 0; pe < n; pe++) mori_shmem_uint64_wait_until_greater_or_equal((uint64_t*) (area + 8ull * pe), (uint64_t) target);
}
