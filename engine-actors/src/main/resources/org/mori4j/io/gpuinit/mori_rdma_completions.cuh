// mori4j GPU-initiated RDMA device library, the completion side: retirement of posted work requests (status,
// wait_retired, quiet), polling the completion queue and giving CQEs back, and posting receives. GpuInitiatedKernels
// puts this file where mori_rdma.cuh includes it (after the internals and the posts it relies on), so kernels see
// one translation unit.

extern "C" {

// ---- retirement ----

// The endpoint's first error status (0 while it has seen none).
MORI_RDMA_DEVICE int mori_rdma_status(MoriRdmaEndpoint* ep) {
  if (mori_rdma_internal_load32(&ep->errorCount) == 0) return MORI_RDMA_WC_SUCCESS;
  __threadfence_system();
  return (int) mori_rdma_internal_load32(&ep->firstErrorStatus);
}

// Waits until WQE idx is retired (executed and completed, with or without a CQE). Rings the doorbell up to
// idx + 1 first, so a forgotten ring cannot stall it. Returns 0, or the endpoint's first error status.
MORI_RDMA_DEVICE int mori_rdma_wait_retired(MoriRdmaEndpoint* ep, unsigned long long idx) {
  mori_rdma_ring_doorbell(ep, idx + 1);
  const unsigned long long start = mori_rdma_internal_now_ns();
  unsigned long long retired;
  unsigned int spins = 0;
  while ((retired = mori_rdma_internal_load(&ep->sqRetired)) <= idx) {
    mori_rdma_internal_pause();
    if ((++spins & 1023u) == 0)
      mori_rdma_internal_wait_check(ep, start, "waiting for a WQE to retire (is the CQ full and nobody polls it?)", "index", idx,
                                    "sqRetired", retired);
  }
  __threadfence_system();
  return mori_rdma_status(ep);
}

// Waits until every WQE reserved so far on the endpoint is retired (rings for them first). Returns 0, or the
// endpoint's first error status. WQEs that other threads reserved must be published by them meanwhile.
MORI_RDMA_DEVICE int mori_rdma_quiet(MoriRdmaEndpoint* ep) {
  const unsigned long long posted = mori_rdma_internal_load(&ep->sqPostIdx);
  if (posted == 0) return mori_rdma_status(ep);
  return mori_rdma_wait_retired(ep, posted - 1);
}

// ---- completions ----

// Copies the next CQE into out and returns 1 when the proxy has written it, else 0 (does not wait). One
// polling thread per endpoint at a time.
MORI_RDMA_DEVICE int mori_rdma_poll_cq(MoriRdmaEndpoint* ep, MoriRdmaCqe* out) {
  const unsigned long long idx = mori_rdma_internal_load(&ep->cqPollIdx);
  const MoriRdmaCqe* c = ((const MoriRdmaCqe*) ep->cqRing) + (idx & (unsigned long long) (ep->cqDepth - 1));
  if (mori_rdma_internal_load32(&c->owner) != (unsigned int) (idx + 1)) return 0;
  __threadfence_system();
  const volatile MoriRdmaCqe* v = (const volatile MoriRdmaCqe*) c;
  out->wrId = v->wrId;
  out->status = v->status;
  out->opcode = v->opcode;
  out->flags = v->flags;
  out->reserved0 = 0;
  out->byteLen = v->byteLen;
  out->immediate = v->immediate;
  out->wqeIndex = v->wqeIndex;
  out->owner = v->owner;
  mori_rdma_internal_store(&ep->cqPollIdx, idx + 1);
  return 1;
}

// Gives CQEs [0, v) back to the proxy (it never writes into a full CQ).
MORI_RDMA_DEVICE void mori_rdma_update_cq_dbr_record(MoriRdmaEndpoint* ep, unsigned long long v) {
  __threadfence_system();
  mori_rdma_internal_store(&ep->cqDbrRecord, v);
}

// Waits for the next CQE, copies it into out, gives its slot back and returns its status.
MORI_RDMA_DEVICE int mori_rdma_wait_cq(MoriRdmaEndpoint* ep, MoriRdmaCqe* out) {
  const unsigned long long start = mori_rdma_internal_now_ns();
  unsigned int spins = 0;
  while (!mori_rdma_poll_cq(ep, out)) {
    mori_rdma_internal_pause();
    if ((++spins & 1023u) == 0)
      mori_rdma_internal_wait_check(ep, start, "waiting for a completion (was the doorbell rung? was the WR signaled?)",
                                    "cqPollIdx", mori_rdma_internal_load(&ep->cqPollIdx), "cqProducerIdx",
                                    mori_rdma_internal_load(&ep->cqProducerIdx));
  }
  mori_rdma_update_cq_dbr_record(ep, mori_rdma_internal_load(&ep->cqPollIdx));
  return (int) out->status;
}

// ---- receives (consumed by the peer's SEND and WRITE_WITH_IMM) ----

// Publishes receive WQEs [idx, idx + n) in order, as mori_rdma_update_send_dbr_record does for sends.
MORI_RDMA_DEVICE void mori_rdma_update_recv_dbr_record(MoriRdmaEndpoint* ep, unsigned long long idx, unsigned int n) {
  const unsigned long long start = mori_rdma_internal_now_ns();
  unsigned long long seen;
  unsigned int spins = 0;
  while ((seen = mori_rdma_internal_load(&ep->rqDbrRecord)) < idx) {
    mori_rdma_internal_pause();
    if ((++spins & 1023u) == 0)
      mori_rdma_internal_wait_check(ep, start, "publishing receive WQEs (an earlier one was never published)", "index", idx,
                                    "rqDbrRecord", seen);
  }
  if (seen >= idx + n) return;
  __threadfence_system();
  mori_rdma_internal_store(&ep->rqDbrRecord, idx + n);
}

// Posts (and publishes) one receive of up to bytes at laddr/lkey; returns its RQ index. Waits while the
// receive queue is full.
MORI_RDMA_DEVICE unsigned long long mori_rdma_post_recv_thread(MoriRdmaEndpoint* ep, unsigned long long laddr, unsigned int lkey,
                                                               unsigned int bytes, unsigned long long wrId) {
  mori_rdma_internal_check(ep);
  const unsigned long long depth = ep->rqDepth;
  if (depth == 0) mori_rdma_internal_fail(ep, "the endpoint has no receive queue (maxRecvWr 0)", laddr, wrId);
  const unsigned long long idx = atomicAdd(&ep->rqPostIdx, 1ull);
  unsigned long long retired = mori_rdma_internal_load(&ep->rqRetired);
  if (idx + 1 - retired > depth) {
    const unsigned long long start = mori_rdma_internal_now_ns();
    unsigned int spins = 0;
    while (idx + 1 - (retired = mori_rdma_internal_load(&ep->rqRetired)) > depth) {
      mori_rdma_internal_pause();
      if ((++spins & 1023u) == 0)
        mori_rdma_internal_wait_check(ep, start, "waiting for room in the receive queue", "index", idx, "rqRetired", retired);
    }
    __threadfence_system();
  }
  MoriRdmaRecvWqe* r = ((MoriRdmaRecvWqe*) ep->rqRing) + (idx & (depth - 1));
  r->wrId = wrId;
  r->addr = laddr;
  r->lkey = lkey;
  r->length = bytes;
  r->reserved0 = 0;
  mori_rdma_update_recv_dbr_record(ep, idx, 1);
  return idx;
}

}  // extern "C"
