// mori4j shmem device library, part 2: PEs without a direct path, reached through GPU-initiated endpoints.
// ShmemKernels.deviceLibrary() puts this file where mori_shmem.cuh includes it (after globalGpuStates,
// engine-actors' mori_rdma.cuh and the failure helper), so kernels see one translation unit.
//
// Each such peer has globalGpuStates.numQpPerPe endpoints (qpId % numQpPerPe picks one), MoriRdmaEndpoint*s of
// engine-actors' GPU-initiated transfers (package org.mori4j.io.gpuinit; layout and protocol in
// engine-actors/docs/gpu-initiated.md "GPU-initiated transfers"). The queue protocol - reserving send-queue slots, writing
// WQEs, publishing them through the doorbell record, ringing, waiting for retirement, the pause between reads of
// the endpoint's host-memory words and the wait timeouts - is mori_rdma.cuh's; this file maps shmem calls onto
// work requests. Today the "NIC" that executes them is a host proxy (emulation: IoEngine writes and reads); a
// real NIC would take the same queue protocol.
//
// What each call becomes:
//   put            RDMA WRITE, unsignaled; the source must be in the heap (heapLkey) or a registered buffer
//   get (nbi)      RDMA READ into the destination (heap or registered buffer); blocking gets wait for it
//   p / g          an 8-byte-or-smaller WRITE from / READ into the WQE's result cell (mori_rdma_result_cell)
//   signal         after the data, on the same endpoint: SIGNAL_ADD a FETCH_ADD, SIGNAL_SET an 8-byte WRITE,
//                  both with the FENCE flag (the proxy starts a fenced WQE after every earlier one completed)
//   atomics        FETCH_ADD and CMP_AND_SWP on the 8-byte word; 32-bit ones and AND/OR/XOR/SWAP as below
//   quiet / fence  wait until every endpoint has retired every WQE reserved so far (fence is that too:
//                  stronger than OpenSHMEM needs, and what the proxy's pipelined writes leave)
// Errors: every post and every wait checks the endpoint's first error status and traps naming the ibv_wc_status
// and the PE; mori_rdma.cuh's waits trap after the endpoint's waitTimeoutNs (mori4j.gpu-initiated.wait-timeout),
// and through MORI_RDMA_TRAP_CONTEXT every trap of mori_rdma.cuh also names this PE and the endpoint's PE.
//
// Work requests are never signaled (no completion entries to poll), so the completion queue only ever holds
// error completions; the device learns completion from sqRetired. wrId is the WQE index, so an error names it.
#ifndef MORI_SHMEM_PROXY_CUH
#define MORI_SHMEM_PROXY_CUH

// The largest length one WQE carries (u32 field); longer puts and gets are split.
#define MORI_SHMEM_PROXY_MAX_WQE_BYTES (1ull << 30)

// The endpoint qpId % numQpPerPe to pe, or 0 when there is none (pe is reached directly, or nothing at all).
MORI_SHMEM_DEVICE MoriRdmaEndpoint* mori_shmem_internal_endpoint(int pe, int qpId) {
  const unsigned int q = globalGpuStates.numQpPerPe;
  if (q == 0 || pe < 0 || pe >= globalGpuStates.nPes) return 0;
  return (MoriRdmaEndpoint*) globalGpuStates.endpoints[pe * MORI_SHMEM_MAX_QP_PER_PE + ((unsigned int) qpId) % q];
}

// Traps when the endpoint saw an error completion: the first error's ibv_wc_status names what went wrong
// (10 REM_ACCESS_ERR: rkey or bounds, 12 RETRY_EXC_ERR: the peer is gone, 4 LOC_PROT_ERR: lkey). status: what
// mori_rdma_status, _wait_retired or _quiet returned.
MORI_SHMEM_DEVICE void mori_shmem_internal_check_status(MoriRdmaEndpoint* ep, int status, int pe) {
  if (status != MORI_RDMA_WC_SUCCESS) {
    printf("mori_shmem: PE %d: endpoint qpn %u to PE %d failed: ibv_wc_status %d (first error of %u, wrId %llu)\n", globalGpuStates.rank,
           ep->qpn, pe, status, *(volatile unsigned int*) &ep->errorCount, *(volatile unsigned long long*) &ep->firstErrorWrId);
    mori_rdma_internal_trap();
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

// One WQE, published and rung. useCell: the WQE's local side is its result cell, which gets cellValue first (p),
// or is where a READ or an atomic's old value lands (g, atomics).
MORI_SHMEM_DEVICE_SLOW unsigned long long mori_shmem_internal_post(MoriRdmaEndpoint* ep, int pe, unsigned int opcode, unsigned int flags,
                                                                  unsigned long long laddr, unsigned int lkey, unsigned int length,
                                                                  unsigned long long raddr, unsigned int rkey, unsigned long long compareAdd,
                                                                  unsigned long long swap, bool useCell, unsigned long long cellValue) {
  mori_shmem_internal_check_status(ep, mori_rdma_status(ep), pe);
  const unsigned long long idx = mori_rdma_reserve_send(ep, 1);
  if (useCell) {
    unsigned long long* cell = mori_rdma_result_cell(ep, idx);
    *(volatile unsigned long long*) cell = cellValue;
    laddr = (unsigned long long) cell;
    lkey = ep->internalLkey;
  }
  mori_rdma_write_wqe(ep, idx, opcode, flags, idx, laddr, lkey, length, raddr, rkey, 0, compareAdd, swap);
  mori_rdma_update_send_dbr_record(ep, idx, 1);
  mori_rdma_ring_doorbell(ep, idx + 1);
  return idx;
}

// Waits until WQE idx has been executed; traps on an error.
MORI_SHMEM_DEVICE void mori_shmem_internal_wait_retired(MoriRdmaEndpoint* ep, int pe, unsigned long long idx) {
  mori_shmem_internal_check_status(ep, mori_rdma_wait_retired(ep, idx), pe);
}

// Every WQE reserved on ep so far has retired.
MORI_SHMEM_DEVICE_SLOW void mori_shmem_internal_quiet_endpoint(MoriRdmaEndpoint* ep, int pe) {
  mori_shmem_internal_check_status(ep, mori_rdma_quiet(ep), pe);
}

MORI_SHMEM_DEVICE_SLOW void mori_shmem_internal_quiet_all() {
  if (globalGpuStates.numQpPerPe == 0) return;
  const int n = globalGpuStates.nPes;
  for (int pe = 0; pe < n; pe++)
    for (unsigned int q = 0; q < globalGpuStates.numQpPerPe; q++) {
      MoriRdmaEndpoint* ep = (MoriRdmaEndpoint*) globalGpuStates.endpoints[pe * MORI_SHMEM_MAX_QP_PER_PE + q];
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

// Non-blocking put (opcode WRITE: local source to remote dest) or get (READ: remote source to local dest) of bytes
// through ep, one WQE per GiB. Returns the last WQE's index.
MORI_SHMEM_DEVICE_SLOW unsigned long long mori_shmem_internal_proxy_move(MoriRdmaEndpoint* ep, unsigned int opcode, void* local,
                                                                        const void* remote, size_t bytes, int pe) {
  const unsigned int lkey = mori_shmem_internal_lkey(local, bytes, pe);
  const unsigned long long raddr = mori_shmem_internal_remote_addr(remote, bytes, pe);
  const unsigned int rkey = globalGpuStates.peerHeapRkey[pe];
  unsigned long long idx = 0, done = 0;
  do {
    const unsigned long long len = bytes - done < MORI_SHMEM_PROXY_MAX_WQE_BYTES ? bytes - done : MORI_SHMEM_PROXY_MAX_WQE_BYTES;
    idx = mori_shmem_internal_post(ep, pe, opcode, 0, (unsigned long long) local + done, lkey, (unsigned int) len, raddr + done, rkey, 0, 0, false,
                                   0);
    done += len;
  } while (done < bytes);
  return idx;
}

MORI_SHMEM_DEVICE unsigned long long mori_shmem_internal_proxy_put(MoriRdmaEndpoint* ep, void* dest, const void* source, size_t bytes, int pe) {
  return mori_shmem_internal_proxy_move(ep, MORI_RDMA_OP_RDMA_WRITE, (void*) source, dest, bytes, pe);
}

MORI_SHMEM_DEVICE unsigned long long mori_shmem_internal_proxy_get(MoriRdmaEndpoint* ep, void* dest, const void* source, size_t bytes, int pe) {
  return mori_shmem_internal_proxy_move(ep, MORI_RDMA_OP_RDMA_READ, dest, source, bytes, pe);
}

// p: the value's bytes staged in the WQE's cell, written with one WRITE of `bytes` (1, 2, 4 or 8).
MORI_SHMEM_DEVICE_SLOW unsigned long long mori_shmem_internal_proxy_p(MoriRdmaEndpoint* ep, void* dest, unsigned long long value, unsigned int bytes,
                                                                     unsigned int flags, int pe) {
  const unsigned long long raddr = mori_shmem_internal_remote_addr(dest, bytes, pe);
  return mori_shmem_internal_post(ep, pe, MORI_RDMA_OP_RDMA_WRITE, flags, 0, 0, bytes, raddr, globalGpuStates.peerHeapRkey[pe], 0, 0, true, value);
}

// g: READ of `bytes` into the WQE's cell, waited for; the cell's low bytes are the value.
MORI_SHMEM_DEVICE_SLOW unsigned long long mori_shmem_internal_proxy_g(MoriRdmaEndpoint* ep, const void* source, unsigned int bytes, int pe) {
  const unsigned long long raddr = mori_shmem_internal_remote_addr(source, bytes, pe);
  const unsigned long long idx =
      mori_shmem_internal_post(ep, pe, MORI_RDMA_OP_RDMA_READ, 0, 0, 0, bytes, raddr, globalGpuStates.peerHeapRkey[pe], 0, 0, true, 0);
  mori_shmem_internal_wait_retired(ep, pe, idx);
  return mori_rdma_atomic_result(ep, idx);
}

// 64-bit FETCH_ADD on pe's word; fetch: wait and return the old value (else 0, completing at the next quiet).
MORI_SHMEM_DEVICE_SLOW unsigned long long mori_shmem_internal_proxy_fetch_add(MoriRdmaEndpoint* ep, void* dest, unsigned long long add, bool fetch,
                                                                             unsigned int flags, int pe) {
  if (((unsigned long long) dest & 7) != 0) mori_shmem_internal_fail("a 64-bit remote atomic needs an 8-byte aligned address", (unsigned long long) dest, pe);
  const unsigned long long raddr = mori_shmem_internal_remote_addr(dest, 8, pe);
  const unsigned long long idx = mori_shmem_internal_post(ep, pe, MORI_RDMA_OP_ATOMIC_FETCH_AND_ADD, flags, 0, 0, 8, raddr,
                                                          globalGpuStates.peerHeapRkey[pe], add, 0, true, 0);
  if (!fetch) return 0;
  mori_shmem_internal_wait_retired(ep, pe, idx);
  return mori_rdma_atomic_result(ep, idx);
}

MORI_SHMEM_DEVICE_SLOW unsigned long long mori_shmem_internal_proxy_cas(MoriRdmaEndpoint* ep, void* dest, unsigned long long compare,
                                                                       unsigned long long swap, int pe) {
  if (((unsigned long long) dest & 7) != 0) mori_shmem_internal_fail("a 64-bit remote atomic needs an 8-byte aligned address", (unsigned long long) dest, pe);
  const unsigned long long raddr = mori_shmem_internal_remote_addr(dest, 8, pe);
  const unsigned long long idx = mori_shmem_internal_post(ep, pe, MORI_RDMA_OP_ATOMIC_CMP_AND_SWP, 0, 0, 0, 8, raddr,
                                                          globalGpuStates.peerHeapRkey[pe], compare, swap, true, 0);
  mori_shmem_internal_wait_retired(ep, pe, idx);
  return mori_rdma_atomic_result(ep, idx);
}

// The other 64-bit fetching ops (AND, OR, XOR, SWAP) as a compare-and-swap loop: op 0 AND, 1 OR, 2 XOR, 3 SWAP.
MORI_SHMEM_DEVICE_SLOW unsigned long long mori_shmem_internal_proxy_rmw64(MoriRdmaEndpoint* ep, void* dest, unsigned long long val, int op, int pe) {
  unsigned long long cur = mori_shmem_internal_proxy_fetch_add(ep, dest, 0, true, 0, pe);
  const unsigned long long start = mori_rdma_now_ns();
  for (;;) {
    const unsigned long long next = op == 0 ? (cur & val) : op == 1 ? (cur | val) : op == 2 ? (cur ^ val) : val;
    const unsigned long long seen = mori_shmem_internal_proxy_cas(ep, dest, cur, next, pe);
    if (seen == cur) return cur;
    cur = seen;
    mori_rdma_internal_wait_check(ep, start, "compare-and-swap loop of a remote atomic", "seen", cur, "next", next);
  }
}

// 32-bit ops on the aligned 8-byte word that holds the value (the proxy's atomics are 64-bit, as a NIC's):
// fetch-add on the upper half adds val << 32 (the carry leaves the word); on the lower half it adds val and,
// when the lower half wrapped, takes the carry back out of the upper half with a second FETCH_ADD (between the
// two, a reader of the upper half alone sees it one too high). Everything else is a compare-and-swap loop.
MORI_SHMEM_DEVICE_SLOW unsigned int mori_shmem_internal_proxy_fetch_add32(MoriRdmaEndpoint* ep, void* dest, unsigned int val, bool fetch, int pe) {
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
MORI_SHMEM_DEVICE_SLOW unsigned int mori_shmem_internal_proxy_rmw32(MoriRdmaEndpoint* ep, void* dest, unsigned int val, unsigned int compare, int op,
                                                                   int pe) {
  if (((unsigned long long) dest & 3) != 0) mori_shmem_internal_fail("a 32-bit remote atomic needs a 4-byte aligned address", (unsigned long long) dest, pe);
  void* word = (void*) ((unsigned long long) dest & ~7ull);
  const int shift = ((unsigned long long) dest & 4) != 0 ? 32 : 0;
  const unsigned long long mask = 0xffffffffull << shift;
  unsigned long long cur = mori_shmem_internal_proxy_fetch_add(ep, word, 0, true, 0, pe);
  const unsigned long long start = mori_rdma_now_ns();
  for (;;) {
    const unsigned int half = (unsigned int) (cur >> shift);
    if (op == 4 && half != compare) return half;
    const unsigned int next = op == 0 ? (half & val) : op == 1 ? (half | val) : op == 2 ? (half ^ val) : val;
    const unsigned long long want = (cur & ~mask) | (((unsigned long long) next) << shift);
    const unsigned long long seen = mori_shmem_internal_proxy_cas(ep, word, cur, want, pe);
    if (seen == cur) return half;
    cur = seen;
    mori_rdma_internal_wait_check(ep, start, "compare-and-swap loop of a 32-bit remote atomic", "seen", cur, "want", want);
  }
}

// The signal of a put-with-signal, after the data on the same endpoint (FENCE: the proxy starts it once the
// data's WRITEs completed).
MORI_SHMEM_DEVICE_SLOW void mori_shmem_internal_proxy_signal(MoriRdmaEndpoint* ep, void* signalDest, unsigned long long value, int op, int pe) {
  if (op == SIGNAL_SET) {
    mori_shmem_internal_proxy_p(ep, signalDest, value, 8, MORI_RDMA_FLAG_FENCE, pe);
  } else if (op == SIGNAL_ADD) {
    mori_shmem_internal_proxy_fetch_add(ep, signalDest, value, false, MORI_RDMA_FLAG_FENCE, pe);
  } else {
    mori_shmem_internal_fail("signal op is neither SIGNAL_SET nor SIGNAL_ADD", (unsigned long long) signalDest, op);
  }
}

#endif  // MORI_SHMEM_PROXY_CUH
