// Kernels of the GPU-initiated device library tests (GpuInitiatedKernelsTest compiles them with NVRTC; the
// gpu-tagged tests run them). Together they call every function of mori_rdma.cuh. Results go to device
// memory that the test copies back and checks; the kernels themselves decide nothing.
#include "mori_rdma.cuh"

#define T_OP_WRITE 0
#define T_OP_READ 1
#define T_OP_WRITE_IMM 2
#define T_OP_SEND 3
#define T_SCOPE_THREAD 0
#define T_SCOPE_WARP 1
#define T_SCOPE_BLOCK 2

// Every thread of the grid posts one WR of op in scope (all threads take the same branch): bytes at
// laddr + tid * bytes to raddr + tid * bytes (sends: from laddr + tid * bytes), wrId 0x1000 + tid, immediate
// 0xABC00000 + tid; writes its WQE index to idxOut[tid] and rings for it.
extern "C" __global__ void t_post(MoriRdmaEndpoint* ep, int op, int scope, unsigned long long laddr, unsigned int lkey,
                                  unsigned long long raddr, unsigned int rkey, unsigned int bytes, unsigned int flags,
                                  unsigned long long* idxOut) {
  const unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned long long la = laddr + (unsigned long long) tid * bytes, ra = raddr + (unsigned long long) tid * bytes;
  const unsigned long long wrId = 0x1000ull + tid;
  const unsigned int imm = 0xABC00000u + tid;
  unsigned long long idx = 0;
  if (scope == T_SCOPE_THREAD) {
    if (op == T_OP_WRITE) idx = mori_rdma_post_write_thread(ep, la, lkey, ra, rkey, bytes, flags, wrId);
    else if (op == T_OP_READ) idx = mori_rdma_post_read_thread(ep, la, lkey, ra, rkey, bytes, flags, wrId);
    else if (op == T_OP_WRITE_IMM) idx = mori_rdma_post_write_imm_thread(ep, la, lkey, ra, rkey, bytes, imm, flags, wrId);
    else idx = mori_rdma_post_send_thread(ep, la, lkey, bytes, flags, wrId);
    mori_rdma_update_send_dbr_record(ep, idx, 1);  // already published by the post: returns at once
  } else if (scope == T_SCOPE_WARP) {
    if (op == T_OP_WRITE) idx = mori_rdma_post_write_warp(ep, la, lkey, ra, rkey, bytes, flags, wrId);
    else if (op == T_OP_READ) idx = mori_rdma_post_read_warp(ep, la, lkey, ra, rkey, bytes, flags, wrId);
    else if (op == T_OP_WRITE_IMM) idx = mori_rdma_post_write_imm_warp(ep, la, lkey, ra, rkey, bytes, imm, flags, wrId);
    else idx = mori_rdma_post_send_warp(ep, la, lkey, bytes, flags, wrId);
  } else {
    if (op == T_OP_WRITE) idx = mori_rdma_post_write_block(ep, la, lkey, ra, rkey, bytes, flags, wrId);
    else if (op == T_OP_READ) idx = mori_rdma_post_read_block(ep, la, lkey, ra, rkey, bytes, flags, wrId);
    else if (op == T_OP_WRITE_IMM) idx = mori_rdma_post_write_imm_block(ep, la, lkey, ra, rkey, bytes, imm, flags, wrId);
    else idx = mori_rdma_post_send_block(ep, la, lkey, bytes, flags, wrId);
  }
  idxOut[tid] = idx;
  mori_rdma_ring_doorbell(ep, idx + 1);
}

// One thread polls n completions (waiting for each) into out[0..n); status[0] = how many had status 0.
extern "C" __global__ void t_poll(MoriRdmaEndpoint* ep, unsigned int n, MoriRdmaCqe* out, unsigned int* status) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  unsigned int ok = 0;
  for (unsigned int i = 0; i < n; i++) {
    if (mori_rdma_wait_cq(ep, &out[i]) == MORI_RDMA_WC_SUCCESS) ok++;
  }
  status[0] = ok;
}

// Thread tid posts receive tid: bytes at laddr + tid * bytes, wrId 0x2000 + tid.
extern "C" __global__ void t_recv(MoriRdmaEndpoint* ep, unsigned long long laddr, unsigned int lkey, unsigned int bytes) {
  const unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned long long idx = mori_rdma_post_recv_thread(ep, laddr + (unsigned long long) tid * bytes, lkey, bytes, 0x2000ull + tid);
  mori_rdma_update_recv_dbr_record(ep, idx, 1);  // already published: returns at once
}

// Every thread posts one unsignaled remote atomic on the word at raddr and waits for it: mode 0 fetch-add 1,
// mode 1 compare-and-swap 0 -> tid + 1; mode 2 is an 8-byte READ of the word into the WQE's result cell, posted
// by hand. old[tid] = the value fetched, status[tid] = mori_rdma_wait_retired's.
extern "C" __global__ void t_atomics(MoriRdmaEndpoint* ep, unsigned long long raddr, unsigned int rkey, int mode,
                                     unsigned long long* old, int* status) {
  const unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long idx;
  if (mode == 0) {
    idx = mori_rdma_post_atomic_fetch_add_thread(ep, raddr, rkey, 1ull, 0, 0x3000ull + tid);
  } else if (mode == 1) {
    idx = mori_rdma_post_atomic_cas_thread(ep, raddr, rkey, 0ull, tid + 1ull, 0, 0x3000ull + tid);
  } else {
    idx = mori_rdma_reserve_send(ep, 1);
    mori_rdma_write_wqe(ep, idx, MORI_RDMA_OP_RDMA_READ, 0, 0x3000ull + tid, (unsigned long long) mori_rdma_result_cell(ep, idx),
                        ep->internalLkey, 8, raddr, rkey, 0, 0, 0);
    mori_rdma_update_send_dbr_record(ep, idx, 1);
  }
  status[tid] = mori_rdma_wait_retired(ep, idx);
  old[tid] = mori_rdma_atomic_result(ep, idx);
}

// One thread builds a batch of n writes by hand (one reservation, WQEs written, published once, rung once,
// the last one signaled), then quiets the endpoint: out[0] = first index, out[1] = quiet's status,
// out[2] = mori_rdma_status.
extern "C" __global__ void t_manual_batch(MoriRdmaEndpoint* ep, unsigned long long laddr, unsigned int lkey,
                                          unsigned long long raddr, unsigned int rkey, unsigned int bytes, unsigned int n,
                                          unsigned long long* out) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  const unsigned long long base = mori_rdma_reserve_send(ep, n);
  for (unsigned int i = 0; i < n; i++)
    mori_rdma_write_wqe(ep, base + i, MORI_RDMA_OP_RDMA_WRITE, i + 1 == n ? MORI_RDMA_FLAG_SIGNALED : 0, 0x4000ull + i,
                        laddr + (unsigned long long) i * bytes, lkey, bytes, raddr + (unsigned long long) i * bytes, rkey, 0, 0, 0);
  mori_rdma_update_send_dbr_record(ep, base, n);
  mori_rdma_ring_doorbell(ep, base + n);
  out[0] = base;
  out[1] = (unsigned long long) mori_rdma_quiet(ep);
  out[2] = (unsigned long long) mori_rdma_status(ep);
}

// MORI's example, in its names: fill the send buffer with value on the GPU, PostWrite it, UpdateSendDbrRecord,
// RingDoorbell, then PollCq until the completion arrives and UpdateCqDbrRecord. out gets the CQE.
extern "C" __global__ void t_mori_write(MoriRdmaEndpoint* ep, unsigned long long laddr, unsigned int lkey, unsigned long long raddr,
                                        unsigned int rkey, unsigned int bytes, unsigned int value, MoriRdmaCqe* out) {
  unsigned char* send = (unsigned char*) laddr;
  for (unsigned int i = threadIdx.x; i < bytes; i += blockDim.x) send[i] = (unsigned char) value;
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x != 0) return;
  const unsigned long long idx = PostWrite(ep, laddr, lkey, raddr, rkey, bytes);
  UpdateSendDbrRecord(ep, idx, 1);
  RingDoorbell(ep, idx + 1);
  const unsigned long long start = mori_rdma_now_ns();
  while (!PollCq(ep, out)) {
    if (ep->waitTimeoutNs != 0 && mori_rdma_now_ns() - start > ep->waitTimeoutNs) {
      out->status = MORI_RDMA_WC_GENERAL_ERR;
      out->wrId = ~0ull;
      return;
    }
  }
  UpdateCqDbrRecord(ep, ep->cqPollIdx);  // the poller's index: every CQE up to here is consumed
}

// Counts the bytes of [addr, addr + bytes) that are not value (verification on the GPU that holds them).
extern "C" __global__ void t_verify(const unsigned char* addr, unsigned int bytes, unsigned int value, unsigned int* wrong) {
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < bytes; i += gridDim.x * blockDim.x)
    if (addr[i] != (unsigned char) value) atomicAdd(wrong, 1u);
}

// Round trip of a GPU-posted 8-byte signaled write polled in the kernel, iters times: ns[i] for each.
extern "C" __global__ void t_latency(MoriRdmaEndpoint* ep, unsigned long long laddr, unsigned int lkey, unsigned long long raddr,
                                     unsigned int rkey, unsigned int iters, unsigned long long* ns, int* status) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  MoriRdmaCqe c;
  int st = 0;
  for (unsigned int i = 0; i < iters && st == 0; i++) {
    const unsigned long long t0 = mori_rdma_now_ns();
    const unsigned long long idx = mori_rdma_post_write_thread(ep, laddr, lkey, raddr, rkey, 8, MORI_RDMA_FLAG_SIGNALED, i);
    mori_rdma_ring_doorbell(ep, idx + 1);
    st = mori_rdma_wait_cq(ep, &c);
    ns[i] = mori_rdma_now_ns() - t0;
  }
  status[0] = st;
}

// One warp posts rounds x 32 unsignaled writes of bytes each (warp scope, lane l writes slice
// (round * 32 + l) % slices of the buffers), lane 0 rings after each round and quiets at the end:
// out[0] = elapsed ns, out[1] = quiet's status.
extern "C" __global__ void t_warp_throughput(MoriRdmaEndpoint* ep, unsigned long long laddr, unsigned int lkey,
                                             unsigned long long raddr, unsigned int rkey, unsigned int bytes, unsigned int rounds,
                                             unsigned int slices, unsigned long long* out) {
  const unsigned int lane = threadIdx.x % warpSize;
  const unsigned long long t0 = mori_rdma_now_ns();
  for (unsigned int r = 0; r < rounds; r++) {
    const unsigned long long off = (unsigned long long) ((r * warpSize + lane) % slices) * bytes;
    const unsigned long long idx = mori_rdma_post_write_warp(ep, laddr + off, lkey, raddr + off, rkey, bytes, 0, r);
    if (lane == warpSize - 1) mori_rdma_ring_doorbell(ep, idx + 1);
  }
  if (lane == 0) {
    out[1] = (unsigned long long) mori_rdma_quiet(ep);
    out[0] = mori_rdma_now_ns() - t0;
  }
}

// Every thread of the block posts one signaled write while thread 0 (after its own) polls all of them: on a
// send queue much smaller than the block, posters wait for room, never overwrite. out gets the CQEs in
// order, count[0] the number polled.
extern "C" __global__ void t_queue_full(MoriRdmaEndpoint* ep, unsigned long long laddr, unsigned int lkey, unsigned long long raddr,
                                        unsigned int rkey, unsigned int bytes, MoriRdmaCqe* out, unsigned int* count) {
  // Warp 0 only polls (its lane 0); the threads after it post, one WR each. The poller must not post itself:
  // a poster can wait for room in the SQ, which frees only as CQEs are consumed (the CQ is small too).
  const unsigned int posts = blockDim.x - 32;
  if (threadIdx.x >= 32) {
    const unsigned int tid = threadIdx.x - 32;
    const unsigned long long off = (unsigned long long) tid * bytes;
    const unsigned long long idx =
        mori_rdma_post_write_thread(ep, laddr + off, lkey, raddr + off, rkey, bytes, MORI_RDMA_FLAG_SIGNALED, 0x5000ull + tid);
    mori_rdma_ring_doorbell(ep, idx + 1);
    return;
  }
  if (threadIdx.x != 0) return;
  // Polled by hand, giving slots back every 4 CQEs, with the endpoint's timeout.
  unsigned int n = 0;
  const unsigned long long start = mori_rdma_now_ns();
  while (n < posts) {
    if (mori_rdma_poll_cq(ep, &out[n])) {
      n++;
      if ((n & 3u) == 0 || n == posts) mori_rdma_update_cq_dbr_record(ep, ep->cqPollIdx);
    } else if (ep->waitTimeoutNs != 0 && mori_rdma_now_ns() - start > ep->waitTimeoutNs) {
      break;
    }
  }
  count[0] = n;
}

// Posts signaled 8-byte writes one at a time until one completes with an error (or maxIters): progress[0] =
// writes that succeeded, progress[1] = the failing CQE's status (0 if none failed), progress[2] = its wrId.
// The host kills the peer while this runs.
extern "C" __global__ void t_until_error(MoriRdmaEndpoint* ep, unsigned long long laddr, unsigned int lkey, unsigned long long raddr,
                                         unsigned int rkey, unsigned int maxIters, unsigned long long* progress) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  MoriRdmaCqe c;
  progress[0] = 0;
  progress[1] = 0;
  for (unsigned int i = 0; i < maxIters; i++) {
    const unsigned long long idx = mori_rdma_post_write_thread(ep, laddr, lkey, raddr, rkey, 8, MORI_RDMA_FLAG_SIGNALED, 0x6000ull + i);
    mori_rdma_ring_doorbell(ep, idx + 1);
    const int st = mori_rdma_wait_cq(ep, &c);
    if (st != MORI_RDMA_WC_SUCCESS) {
      progress[1] = (unsigned long long) st;
      progress[2] = c.wrId;
      return;
    }
    *(volatile unsigned long long*) &progress[0] = i + 1;
  }
}

// The test pattern: the byte at offset o of a pattern with seed s (GpuInitTestRig.patternByte is the same).
__device__ __forceinline__ unsigned char t_pattern(unsigned long long o, unsigned int seed) {
  return (unsigned char) (o * 131ull + seed * 29ull + 7ull);
}

extern "C" __global__ void t_fill(unsigned char* addr, unsigned long long bytes, unsigned int seed) {
  for (unsigned long long i = blockIdx.x * (unsigned long long) blockDim.x + threadIdx.x; i < bytes; i += (unsigned long long) gridDim.x * blockDim.x)
    addr[i] = t_pattern(i, seed);
}

// Counts the bytes of [addr, addr + bytes) that differ from the pattern (verification on the GPU holding them).
extern "C" __global__ void t_check(const unsigned char* addr, unsigned long long bytes, unsigned int seed, unsigned int* wrong) {
  unsigned int bad = 0;
  for (unsigned long long i = blockIdx.x * (unsigned long long) blockDim.x + threadIdx.x; i < bytes; i += (unsigned long long) gridDim.x * blockDim.x)
    bad += ((const volatile unsigned char*) addr)[i] != t_pattern(i, seed);
  if (bad != 0) atomicAdd(wrong, bad);
}

// Slot k of n slices of sliceBytes at addr must hold the pattern's slice srcSlice[k] (sends land in the order
// the proxy executed them, which is WQE order, not thread order).
extern "C" __global__ void t_check_slices(const unsigned char* addr, unsigned int sliceBytes, unsigned int n, const unsigned int* srcSlice,
                                          unsigned int seed, unsigned int* wrong) {
  unsigned int bad = 0;
  const unsigned long long total = (unsigned long long) n * sliceBytes;
  for (unsigned long long i = blockIdx.x * (unsigned long long) blockDim.x + threadIdx.x; i < total; i += (unsigned long long) gridDim.x * blockDim.x) {
    const unsigned long long k = i / sliceBytes, j = i % sliceBytes;
    bad += ((const volatile unsigned char*) addr)[i] != t_pattern((unsigned long long) srcSlice[k] * sliceBytes + j, seed);
  }
  if (bad != 0) atomicAdd(wrong, bad);
}
