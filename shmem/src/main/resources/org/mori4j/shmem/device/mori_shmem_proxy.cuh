// mori4j shmem device library, part 2: PEs without a direct path, reached through GPU-initiated endpoints.
// ShmemKernels.deviceLibrary() puts this file where mori_shmem.cuh includes it (after globalGpuStates and the
// failure and clock helpers), so kernels see one translation unit.
//
// Each such peer has globalGpuStates.numQpPerPe endpoints (qpId % numQpPerPe picks one). An endpoint is the
// control block, send queue and atomic result cells of engine-actors' GPU-initiated transfers (package
// org.mori4j.io.gpuinit, layout in engine-actors/README.md "GPU-initiated transfers", the same bytes that
// mori_rdma.cuh's MoriRdmaEndpoint and MoriRdmaWqe describe). This file posts by those byte offsets so that it
// does not depend on the C names of that header; ShmemKernels writes the offsets and codes it uses (the
// MORI_SHMEM_EP_*, MORI_SHMEM_WQE_BYTES, MORI_SHMEM_OP_* and MORI_SHMEM_WR_FENCE #defines) from the Java
// GpuQueueLayout, the one place the layout is written down, so the two cannot drift apart.
// Today the "NIC" that executes the work requests is a host
// proxy (emulation: IoEngine writes and reads); a real NIC would take the same queue protocol.
//
// What each call becomes:
//   put            RDMA WRITE, unsignaled; the source must be in the heap (heapLkey) or a registered buffer
//   get (nbi)      RDMA READ into the destination (heap or registered buffer); blocking gets wait for it
//   p / g          an 8-byte-or-smaller WRITE from / READ into the endpoint's result cell of that WQE
//   signal         after the data, on the same endpoint: SIGNAL_ADD a FETCH_ADD, SIGNAL_SET an 8-byte WRITE,
//                  both with the FENCE flag (the proxy starts a fenced WQE after every earlier one completed)
//   atomics        FETCH_ADD and CMP_AND_SWP on the 8-byte word; 32-bit ones and AND/OR/XOR/SWAP as below
//   quiet / fence  wait until every endpoint has retired every WQE reserved so far (fence is that too:
//                  stronger than OpenSHMEM needs, and what the proxy's pipelined writes leave)
// Errors: any wait sees the endpoint's error count and traps naming the ibv_wc_status and the PE; waits trap
// after the endpoint's waitTimeoutNs (from mori4j.gpu-initiated.wait-timeout).
//
// Work requests are never signaled (no completion entries to poll), so the completion queue only ever holds
// error completions; the device learns completion from sqRetired.
#ifndef MORI_SHMEM_PROXY_CUH
#define MORI_SHMEM_PROXY_CUH

// @MORI_SHMEM_QUEUE_LAYOUT@ (ShmemKernels writes the endpoint layout #defines here from GpuQueueLayout)
// The largest length one WQE carries (u32 field); longer puts and gets are split.
#define MORI_SHMEM_PROXY_MAX_WQE_BYTES (1ull << 30)

MORI_SHMEM_DEVICE volatile unsigned long long* mori_shmem_ep_u64(unsigned long long ep, int off) {
  return (volatile unsigned long long*) (ep + off);
}

MORI_SHMEM_DEVICE volatile unsigned int* mori_shmem_ep_u32(unsigned long long ep, int off) { return (volatile unsigned int*) (ep + off); }

// The endpoint qpId % numQpPerPe to pe, or 0 when there is none (pe is reached directly, or nothing at all).
MORI_SHMEM_DEVICE unsigned long long mori_shmem_internal_endpoint(int pe, int qpId) {
  const unsigned int q = globalGpuStates.numQpPerPe;
  if (q == 0 || pe < 0 || pe >= globalGpuStates.nPes) return 0;
  return globalGpuStates.endpoints[pe * MORI_SHMEM_MAX_QP_PER_PE + ((unsigned int) qpId) % q];
}

// Traps when the endpoint saw an error completion: the first error's ibv_wc_status names what went wrong
// (10 REM_ACCESS_ERR: rkey or bounds, 12 RETRY_EXC_ERR: the peer is gone, 4 LOC_PROT_ERR: lkey).
MORI_SHMEM_DEVICE void mori_shmem_internal_check_endpoint(unsigned long long ep, int pe) {
  if (*mori_shmem_ep_u32(ep, MORI_SHMEM_EP_ERROR_COUNT) != 0) {
    printf("mori_shmem: PE %d: endpoint qpn %u to PE %d failed: ibv_wc_status %u (first error of %u, wrId %llu)\n", globalGpuStates.rank,
           *mori_shmem_ep_u32(ep, MORI_SHMEM_EP_QPN), pe, *mori_shmem_ep_u32(ep, MORI_SHMEM_EP_FIRST_ERROR_STATUS),
           *mori_shmem_ep_u32(ep, MORI_SHMEM_EP_ERROR_COUNT), *mori_shmem_ep_u64(ep, MORI_SHMEM_EP_FIRST_ERROR_WRID));
#if defined(MORI_SHMEM_HIP)
    abort();
#else
    __trap();
#endif
  }
}

MORI_SHMEM_DEVICE void mori_shmem_internal_endpoint_timeout(unsigned long long ep, int pe, const char* wait, unsigned long long start,
                                                           unsigned long long a, unsigned long long b) {
  const unsigned long long limit = *mori_shmem_ep_u64(ep, MORI_SHMEM_EP_WAIT_TIMEOUT);
  if (limit != 0 && mori_shmem_internal_now_ns() - start > limit) {
    printf("mori_shmem: PE %d: endpoint qpn %u to PE %d: %s timed out after %llu ns (%llu, %llu; retired %llu)\n", globalGpuStates.rank,
           *mori_shmem_ep_u32(ep, MORI_SHMEM_EP_QPN), pe, wait, limit, a, b, *mori_shmem_ep_u64(ep, MORI_SHMEM_EP_SQ_RETIRED));
#if defined(MORI_SHMEM_HIP)
    abort();
#else
    __trap();
#endif
  }
}

// The lkey of [addr, addr + bytes) on this PE: the heap's, a registered buffer's, or a trap naming the address
// (the proxy, like a NIC, only moves registered memory).
MORI_SHMEM_DEVICE unsigned int mori_shmem_internal_lkey(const void* addr, size_t bytes, int pe) {
  const unsigned long long a = (unsigned long long) addr;
  if (a - globalGpuStates.heapBase < globalGpuStates.heapSize && bytes <= globalGpuStates.heapSize - (a - globalGpuStates.heapBase))
    return globalGpuStates.heapLkey;
  const unsigned int n = globalGpuStates.numRegistered;
  for (unsigned int i = 0; i < n && i < MORI_SHMEM_MAX_REGISTERED; i++) {
    const MoriShmemRegisteredBuffer& r = globalGpuStates.registered[i];
    if (a - r.base < r.size && bytes <= r.size - (a - r.base)) return r.lkey;
  }
  mori_shmem_internal_fail("local memory of a transfer to a PE without a direct path must be in the symmetric heap or a registered buffer "
                           "(Shmem.bufferRegister before moduleInit)", a, pe);
  return 0;
}

// Pause between two reads of a word the host proxy writes. These words live in pinned host memory: every read is
// a PCIe round trip, and a block of threads re-reading them back to back floods the link with the same kind of
// read requests that the GPU's copy engines need to stage the proxy's own transfers.
MORI_SHMEM_DEVICE void mori_shmem_internal_backoff() {
#if defined(MORI_SHMEM_HIP)
  __builtin_amdgcn_s_sleep(2);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  __nanosleep(256);
#endif
}

// Reserves n WQE slots, waiting (never overwriting) while the queue is full.
MORI_SHMEM_DEVICE unsigned long long mori_shmem_internal_reserve(unsigned long long ep, int pe, unsigned int n) {
  const unsigned long long idx = atomicAdd((unsigned long long*) mori_shmem_ep_u64(ep, MORI_SHMEM_EP_SQ_POST_IDX), (unsigned long long) n);
  const unsigned long long depth = *mori_shmem_ep_u32(ep, MORI_SHMEM_EP_SQ_DEPTH);
  const unsigned long long start = mori_shmem_internal_now_ns();
  unsigned int spins = 0;
  while (idx + n - *mori_shmem_ep_u64(ep, MORI_SHMEM_EP_SQ_RETIRED) > depth) {
    mori_shmem_internal_backoff();
    if ((++spins & 255u) == 0) {
      mori_shmem_internal_check_endpoint(ep, pe);
      mori_shmem_internal_endpoint_timeout(ep, pe, "waiting for a free send-queue slot", start, idx, depth);
    }
  }
  return idx;
}

MORI_SHMEM_DEVICE void mori_shmem_internal_fill(unsigned long long ep, unsigned long long idx, unsigned int opcode, unsigned int flags,
                                                unsigned long long laddr, unsigned int lkey, unsigned int length, unsigned long long raddr,
                                                unsigned int rkey, unsigned long long compareAdd, unsigned long long swap) {
  const unsigned long long depth = *mori_shmem_ep_u32(ep, MORI_SHMEM_EP_SQ_DEPTH);
  unsigned char* w = (unsigned char*) (*mori_shmem_ep_u64(ep, MORI_SHMEM_EP_SQ_RING) + (idx & (depth - 1)) * MORI_SHMEM_WQE_BYTES);
  *(volatile unsigned int*) (w + 0) = (opcode & 0xffu) | ((flags & 0xffu) << 8);
  *(volatile unsigned int*) (w + 4) = 0;
  *(volatile unsigned long long*) (w + 8) = idx;  // wrId: the WQE index, so an error names the request
  *(volatile unsigned long long*) (w + 16) = laddr;
  *(volatile unsigned int*) (w + 24) = lkey;
  *(volatile unsigned int*) (w + 28) = length;
  *(volatile unsigned long long*) (w + 32) = raddr;
  *(volatile unsigned int*) (w + 40) = rkey;
  *(volatile unsigned int*) (w + 44) = 0;
  *(volatile unsigned long long*) (w + 48) = compareAdd;
  *(volatile unsigned long long*) (w + 56) = swap;
}

// Publishes WQEs [idx, idx + n) in index order (UpdateSendDbrRecord) and rings the doorbell.
MORI_SHMEM_DEVICE void mori_shmem_internal_publish(unsigned long long ep, int pe, unsigned long long idx, unsigned int n) {
  const unsigned long long start = mori_shmem_internal_now_ns();
  unsigned int spins = 0;
  while (*mori_shmem_ep_u64(ep, MORI_SHMEM_EP_SQ_DBR) != idx) {
    mori_shmem_internal_backoff();
    if ((++spins & 255u) == 0) mori_shmem_internal_endpoint_timeout(ep, pe, "waiting for earlier WQEs to be published", start, idx, 0);
  }
  __threadfence_system();
  *mori_shmem_ep_u64(ep, MORI_SHMEM_EP_SQ_DBR) = idx + n;
  __threadfence_system();
  atomicMax((unsigned long long*) mori_shmem_ep_u64(ep, MORI_SHMEM_EP_SQ_DOORBELL), idx + n);
}

// The endpoint's 8-byte result cell of WQE idx (atomics' old values, p's staged value, g's landing place).
MORI_SHMEM_DEVICE volatile unsigned long long* mori_shmem_internal_cell(unsigned long long ep, unsigned long long idx) {
  const unsigned long long depth = *mori_shmem_ep_u32(ep, MORI_SHMEM_EP_SQ_DEPTH);
  return (volatile unsigned long long*) (*mori_shmem_ep_u64(ep, MORI_SHMEM_EP_ATOMIC_RESULTS) + 8ull * (idx & (depth - 1)));
}

// One WQE. cellValue/cellBytes: when cellBytes > 0 the WQE's local side is its result cell, which gets cellValue
// first (p), or is where a READ lands (g, with opcode READ).
MORI_SHMEM_DEVICE unsigned long long mori_shmem_internal_post(unsigned long long ep, int pe, unsigned int opcode, unsigned int flags,
                                                             unsigned long long laddr, unsigned int lkey, unsigned int length,
                                                             unsigned long long raddr, unsigned int rkey, unsigned long long compareAdd,
                                                             unsigned long long swap, bool useCell, unsigned long long cellValue) {
  mori_shmem_internal_check_endpoint(ep, pe);
  const unsigned long long idx = mori_shmem_internal_reserve(ep, pe, 1);
  if (useCell || opcode == MORI_SHMEM_OP_FETCH_ADD || opcode == MORI_SHMEM_OP_CAS) {
    volatile unsigned long long* cell = mori_shmem_internal_cell(ep, idx);
    if (useCell) *cell = cellValue;
    laddr = (unsigned long long) cell;
    lkey = *mori_shmem_ep_u32(ep, MORI_SHMEM_EP_INTERNAL_LKEY);
  }
  mori_shmem_internal_fill(ep, idx, opcode, flags, laddr, lkey, length, raddr, rkey, compareAdd, swap);
  mori_shmem_internal_publish(ep, pe, idx, 1);
  return idx;
}

// Waits until WQE idx has been executed (sqRetired > idx).
MORI_SHMEM_DEVICE void mori_shmem_internal_wait_retired(unsigned long long ep, int pe, unsigned long long idx) {
  const unsigned long long start = mori_shmem_internal_now_ns();
  unsigned int spins = 0;
  while (*mori_shmem_ep_u64(ep, MORI_SHMEM_EP_SQ_RETIRED) <= idx) {
    mori_shmem_internal_backoff();
    if ((++spins & 255u) == 0) {
      mori_shmem_internal_check_endpoint(ep, pe);
      mori_shmem_internal_endpoint_timeout(ep, pe, "waiting for a work request to complete", start, idx, 0);
    }
  }
  mori_shmem_internal_check_endpoint(ep, pe);
  __threadfence_system();
}

// Every WQE reserved on ep so far has retired.
MORI_SHMEM_DEVICE_SLOW void mori_shmem_internal_quiet_endpoint(unsigned long long ep, int pe) {
  const unsigned long long target = *mori_shmem_ep_u64(ep, MORI_SHMEM_EP_SQ_POST_IDX);
  if (target != 0) mori_shmem_internal_wait_retired(ep, pe, target - 1);
  else mori_shmem_internal_check_endpoint(ep, pe);
}

MORI_SHMEM_DEVICE_SLOW void mori_shmem_internal_quiet_all() {
  if (globalGpuStates.numQpPerPe == 0) return;
  const int n = globalGpuStates.nPes;
  for (int pe = 0; pe < n; pe++)
    for (unsigned int q = 0; q < globalGpuStates.numQpPerPe; q++) {
      const unsigned long long ep = globalGpuStates.endpoints[pe * MORI_SHMEM_MAX_QP_PER_PE + q];
      if (ep != 0) mori_shmem_internal_quiet_endpoint(ep, pe);
    }
}

// The RDMA address of symmetric [sym, sym + bytes) on pe, or a trap.
MORI_SHMEM_DEVICE unsigned long long mori_shmem_internal_remote_addr(const void* sym, size_t bytes, int pe) {
  const unsigned long long off = (unsigned long long) sym - globalGpuStates.heapBase;
  if (off >= globalGpuStates.heapSize || bytes > globalGpuStates.heapSize - off)
    mori_shmem_internal_fail("address is not in the symmetric heap", (unsigned long long) sym, pe);
  return globalGpuStates.peerHeapRemoteBase[pe] + off;
}

// Non-blocking put of bytes through ep: one WRITE per GiB. Returns the last WQE's index.
MORI_SHMEM_DEVICE_SLOW unsigned long long mori_shmem_internal_proxy_put(unsigned long long ep, void* dest, const void* source, size_t bytes, int pe) {
  const unsigned int lkey = mori_shmem_internal_lkey(source, bytes, pe);
  const unsigned long long raddr = mori_shmem_internal_remote_addr(dest, bytes, pe);
  const unsigned int rkey = globalGpuStates.peerHeapRkey[pe];
  unsigned long long idx = 0, done = 0;
  do {
    const unsigned long long len = bytes - done < MORI_SHMEM_PROXY_MAX_WQE_BYTES ? bytes - done : MORI_SHMEM_PROXY_MAX_WQE_BYTES;
    idx = mori_shmem_internal_post(ep, pe, MORI_SHMEM_OP_WRITE, 0, (unsigned long long) source + done, lkey, (unsigned int) len, raddr + done, rkey,
                                   0, 0, false, 0);
    done += len;
  } while (done < bytes);
  return idx;
}

MORI_SHMEM_DEVICE_SLOW unsigned long long mori_shmem_internal_proxy_get(unsigned long long ep, void* dest, const void* source, size_t bytes, int pe) {
  const unsigned int lkey = mori_shmem_internal_lkey(dest, bytes, pe);
  const unsigned long long raddr = mori_shmem_internal_remote_addr(source, bytes, pe);
  const unsigned int rkey = globalGpuStates.peerHeapRkey[pe];
  unsigned long long idx = 0, done = 0;
  do {
    const unsigned long long len = bytes - done < MORI_SHMEM_PROXY_MAX_WQE_BYTES ? bytes - done : MORI_SHMEM_PROXY_MAX_WQE_BYTES;
    idx = mori_shmem_internal_post(ep, pe, MORI_SHMEM_OP_READ, 0, (unsigned long long) dest + done, lkey, (unsigned int) len, raddr + done, rkey, 0,
                                   0, false, 0);
    done += len;
  } while (done < bytes);
  return idx;
}

// p: the value's bytes staged in the WQE's cell, written with one WRITE of `bytes` (1, 2, 4 or 8).
MORI_SHMEM_DEVICE_SLOW unsigned long long mori_shmem_internal_proxy_p(unsigned long long ep, void* dest, unsigned long long value, unsigned int bytes,
                                                                unsigned int flags, int pe) {
  const unsigned long long raddr = mori_shmem_internal_remote_addr(dest, bytes, pe);
  return mori_shmem_internal_post(ep, pe, MORI_SHMEM_OP_WRITE, flags, 0, 0, bytes, raddr, globalGpuStates.peerHeapRkey[pe], 0, 0, true, value);
}

// g: READ of `bytes` into the WQE's cell, waited for; the cell's low bytes are the value.
MORI_SHMEM_DEVICE_SLOW unsigned long long mori_shmem_internal_proxy_g(unsigned long long ep, const void* source, unsigned int bytes, int pe) {
  const unsigned long long raddr = mori_shmem_internal_remote_addr(source, bytes, pe);
  const unsigned long long idx =
      mori_shmem_internal_post(ep, pe, MORI_SHMEM_OP_READ, 0, 0, 0, bytes, raddr, globalGpuStates.peerHeapRkey[pe], 0, 0, true, 0);
  mori_shmem_internal_wait_retired(ep, pe, idx);
  return *mori_shmem_internal_cell(ep, idx);
}

// 64-bit FETCH_ADD on pe's word; fetch: wait and return the old value (else 0, completing at the next quiet).
MORI_SHMEM_DEVICE_SLOW unsigned long long mori_shmem_internal_proxy_fetch_add(unsigned long long ep, void* dest, unsigned long long add, bool fetch,
                                                                        unsigned int flags, int pe) {
  if (((unsigned long long) dest & 7) != 0) mori_shmem_internal_fail("a 64-bit remote atomic needs an 8-byte aligned address", (unsigned long long) dest, pe);
  const unsigned long long raddr = mori_shmem_internal_remote_addr(dest, 8, pe);
  const unsigned long long idx =
      mori_shmem_internal_post(ep, pe, MORI_SHMEM_OP_FETCH_ADD, flags, 0, 0, 8, raddr, globalGpuStates.peerHeapRkey[pe], add, 0, false, 0);
  if (!fetch) return 0;
  mori_shmem_internal_wait_retired(ep, pe, idx);
  return *mori_shmem_internal_cell(ep, idx);
}

MORI_SHMEM_DEVICE_SLOW unsigned long long mori_shmem_internal_proxy_cas(unsigned long long ep, void* dest, unsigned long long compare,
                                                                  unsigned long long swap, int pe) {
  if (((unsigned long long) dest & 7) != 0) mori_shmem_internal_fail("a 64-bit remote atomic needs an 8-byte aligned address", (unsigned long long) dest, pe);
  const unsigned long long raddr = mori_shmem_internal_remote_addr(dest, 8, pe);
  const unsigned long long idx =
      mori_shmem_internal_post(ep, pe, MORI_SHMEM_OP_CAS, 0, 0, 0, 8, raddr, globalGpuStates.peerHeapRkey[pe], compare, swap, false, 0);
  mori_shmem_internal_wait_retired(ep, pe, idx);
  return *mori_shmem_internal_cell(ep, idx);
}

// The other 64-bit fetching ops (AND, OR, XOR, SWAP) as a compare-and-swap loop: op 0 AND, 1 OR, 2 XOR, 3 SWAP.
MORI_SHMEM_DEVICE_SLOW unsigned long long mori_shmem_internal_proxy_rmw64(unsigned long long ep, void* dest, unsigned long long val, int op, int pe) {
  unsigned long long cur = mori_shmem_internal_proxy_fetch_add(ep, dest, 0, true, 0, pe);
  const unsigned long long start = mori_shmem_internal_now_ns();
  for (;;) {
    const unsigned long long next = op == 0 ? (cur & val) : op == 1 ? (cur | val) : op == 2 ? (cur ^ val) : val;
    const unsigned long long seen = mori_shmem_internal_proxy_cas(ep, dest, cur, next, pe);
    if (seen == cur) return cur;
    cur = seen;
    mori_shmem_internal_endpoint_timeout(ep, pe, "compare-and-swap loop of a remote atomic", start, cur, next);
  }
}

// 32-bit ops on the aligned 8-byte word that holds the value (the proxy's atomics are 64-bit, as a NIC's):
// fetch-add on the upper half adds val << 32 (the carry leaves the word); on the lower half it adds val and,
// when the lower half wrapped, takes the carry back out of the upper half with a second FETCH_ADD (between the
// two, a reader of the upper half alone sees it one too high). Everything else is a compare-and-swap loop.
MORI_SHMEM_DEVICE_SLOW unsigned int mori_shmem_internal_proxy_fetch_add32(unsigned long long ep, void* dest, unsigned int val, bool fetch, int pe) {
  if (((unsigned long long) dest & 3) != 0) mori_shmem_internal_fail("a 32-bit remote atomic needs a 4-byte aligned address", (unsigned long long) dest, pe);
  void* word = (void*) ((unsigned long long) dest & ~7ull);
  if (((unsigned long long) dest & 4) != 0) {
    return (unsigned int) (mori_shmem_internal_proxy_fetch_add(ep, word, ((unsigned long long) val) << 32, fetch, 0, pe) >> 32);
  }
  const unsigned long long old = mori_shmem_internal_proxy_fetch_add(ep, word, (unsigned long long) val, true, 0, pe);
  const unsigned int low = (unsigned int) old;
  if ((unsigned long long) low + val > 0xffffffffull) mori_shmem_internal_proxy_fetch_add(ep, word, 0xffffffff00000000ull, false, 0, pe);
  return low;
}

// op: 0 AND, 1 OR, 2 XOR, 3 SWAP, 4 COMPARE_SWAP (with compare); returns the old 32-bit value.
MORI_SHMEM_DEVICE_SLOW unsigned int mori_shmem_internal_proxy_rmw32(unsigned long long ep, void* dest, unsigned int val, unsigned int compare, int op,
                                                               int pe) {
  if (((unsigned long long) dest & 3) != 0) mori_shmem_internal_fail("a 32-bit remote atomic needs a 4-byte aligned address", (unsigned long long) dest, pe);
  void* word = (void*) ((unsigned long long) dest & ~7ull);
  const int shift = ((unsigned long long) dest & 4) != 0 ? 32 : 0;
  const unsigned long long mask = 0xffffffffull << shift;
  unsigned long long cur = mori_shmem_internal_proxy_fetch_add(ep, word, 0, true, 0, pe);
  const unsigned long long start = mori_shmem_internal_now_ns();
  for (;;) {
    const unsigned int half = (unsigned int) (cur >> shift);
    if (op == 4 && half != compare) return half;
    const unsigned int next = op == 0 ? (half & val) : op == 1 ? (half | val) : op == 2 ? (half ^ val) : val;
    const unsigned long long want = (cur & ~mask) | (((unsigned long long) next) << shift);
    const unsigned long long seen = mori_shmem_internal_proxy_cas(ep, word, cur, want, pe);
    if (seen == cur) return half;
    cur = seen;
    mori_shmem_internal_endpoint_timeout(ep, pe, "compare-and-swap loop of a 32-bit remote atomic", start, cur, want);
  }
}

// The signal of a put-with-signal, after the data on the same endpoint (FENCE: the proxy starts it once the
// data's WRITEs completed).
MORI_SHMEM_DEVICE_SLOW void mori_shmem_internal_proxy_signal(unsigned long long ep, void* signalDest, unsigned long long value, int op, int pe) {
  if (op == SIGNAL_SET) {
    mori_shmem_internal_proxy_p(ep, signalDest, value, 8, MORI_SHMEM_WR_FENCE, pe);
  } else if (op == SIGNAL_ADD) {
    mori_shmem_internal_proxy_fetch_add(ep, signalDest, value, false, MORI_SHMEM_WR_FENCE, pe);
  } else {
    mori_shmem_internal_fail("signal op is neither SIGNAL_SET nor SIGNAL_ADD", (unsigned long long) signalDest, op);
  }
}

#endif  // MORI_SHMEM_PROXY_CUH
