// mori4j shmem device library, part 3: the data calls - put and get of bytes (thread, warp and block scope,
// non-blocking and blocking), puts followed by a signal, and the typed puts/gets/p/g of every OpenSHMEM type.
// ShmemKernels.deviceLibrary() puts this file where mori_shmem.cuh includes it (after the routing, copy and
// ordering helpers it calls), so kernels see one translation unit. Each call goes through a direct peer mapping
// when the PE has one, otherwise it posts work requests through mori_shmem_proxy.cuh.

extern "C" {

// ---- put / get of bytes: dest and source are symmetric heap addresses; the remote side is pe ----

MORI_SHMEM_DEVICE int mori_shmem_putmem_nbi_thread(void* dest, const void* source, size_t bytes, int pe, int qpId) {
  MoriRdmaEndpoint* ep;
  void* d = mori_shmem_internal_route(dest, pe, qpId, &ep);
  if (d != 0) mori_shmem_internal_copy(d, source, bytes, 0, 1);
  else mori_shmem_internal_proxy_put(ep, dest, source, bytes, pe);
  return 0;
}

// Every lane of the warp calls it with the same arguments.
// Through an endpoint lane 0 posts one WRITE for the whole range (the NIC, not the lanes, moves the bytes).
MORI_SHMEM_DEVICE int mori_shmem_putmem_nbi_warp(void* dest, const void* source, size_t bytes, int pe, int qpId) {
  MoriRdmaEndpoint* ep;
  void* d = mori_shmem_internal_route(dest, pe, qpId, &ep);
  if (d != 0) {
    mori_shmem_internal_copy(d, source, bytes, mori_shmem_internal_lane(), warpSize);
  } else {
    MORI_SHMEM_SYNCWARP();
    if (mori_shmem_internal_lane() == 0) mori_shmem_internal_proxy_put(ep, dest, source, bytes, pe);
    MORI_SHMEM_SYNCWARP();
  }
  return 0;
}

// Every thread of the block calls it with the same arguments.
MORI_SHMEM_DEVICE int mori_shmem_putmem_nbi_block(void* dest, const void* source, size_t bytes, int pe, int qpId) {
  MoriRdmaEndpoint* ep;
  void* d = mori_shmem_internal_route(dest, pe, qpId, &ep);
  if (d != 0) {
    mori_shmem_internal_copy(d, source, bytes, mori_shmem_internal_block_thread(), mori_shmem_internal_block_threads());
  } else {
    __syncthreads();
    if (mori_shmem_internal_block_thread() == 0) mori_shmem_internal_proxy_put(ep, dest, source, bytes, pe);
    __syncthreads();
  }
  return 0;
}

// dest is local memory, source the symmetric address read on pe.
// Through an endpoint: an RDMA READ into dest (heap or registered buffer), complete at the next quiet.
MORI_SHMEM_DEVICE int mori_shmem_getmem_nbi_thread(void* dest, const void* source, size_t bytes, int pe, int qpId) {
  MoriRdmaEndpoint* ep;
  const void* s = mori_shmem_internal_route(source, pe, qpId, &ep);
  if (s != 0) mori_shmem_internal_copy(dest, s, bytes, 0, 1);
  else mori_shmem_internal_proxy_get(ep, dest, source, bytes, pe);
  return 0;
}

MORI_SHMEM_DEVICE int mori_shmem_getmem_nbi_warp(void* dest, const void* source, size_t bytes, int pe, int qpId) {
  MoriRdmaEndpoint* ep;
  const void* s = mori_shmem_internal_route(source, pe, qpId, &ep);
  if (s != 0) {
    mori_shmem_internal_copy(dest, s, bytes, mori_shmem_internal_lane(), warpSize);
  } else {
    MORI_SHMEM_SYNCWARP();
    if (mori_shmem_internal_lane() == 0) mori_shmem_internal_proxy_get(ep, dest, source, bytes, pe);
    MORI_SHMEM_SYNCWARP();
  }
  return 0;
}

MORI_SHMEM_DEVICE int mori_shmem_getmem_nbi_block(void* dest, const void* source, size_t bytes, int pe, int qpId) {
  MoriRdmaEndpoint* ep;
  const void* s = mori_shmem_internal_route(source, pe, qpId, &ep);
  if (s != 0) {
    mori_shmem_internal_copy(dest, s, bytes, mori_shmem_internal_block_thread(), mori_shmem_internal_block_threads());
  } else {
    __syncthreads();
    if (mori_shmem_internal_block_thread() == 0) mori_shmem_internal_proxy_get(ep, dest, source, bytes, pe);
    __syncthreads();
  }
  return 0;
}

// The blocking gets through an endpoint wait until the READ retired (one thread waits; the scope syncs after).
MORI_SHMEM_DEVICE void mori_shmem_internal_get_wait(const void* source, int pe, int qpId) {
  MoriRdmaEndpoint* ep;
  if (mori_shmem_internal_route(source, pe, qpId, &ep) == 0) mori_shmem_internal_quiet_endpoint(ep, pe);
}

// Blocking gets: the bytes are in dest when they return (a load completes when it returns its value; the
// fence orders the copy before the caller's later reads of dest by other threads).
MORI_SHMEM_DEVICE int mori_shmem_getmem_thread(void* dest, const void* source, size_t bytes, int pe, int qpId) {
  mori_shmem_getmem_nbi_thread(dest, source, bytes, pe, qpId);
  mori_shmem_internal_get_wait(source, pe, qpId);
  __threadfence();
  return 0;
}

MORI_SHMEM_DEVICE int mori_shmem_getmem_warp(void* dest, const void* source, size_t bytes, int pe, int qpId) {
  mori_shmem_getmem_nbi_warp(dest, source, bytes, pe, qpId);
  if (mori_shmem_internal_lane() == 0) mori_shmem_internal_get_wait(source, pe, qpId);
  __threadfence();
  MORI_SHMEM_SYNCWARP();
  return 0;
}

MORI_SHMEM_DEVICE int mori_shmem_getmem_block(void* dest, const void* source, size_t bytes, int pe, int qpId) {
  mori_shmem_getmem_nbi_block(dest, source, bytes, pe, qpId);
  if (mori_shmem_internal_block_thread() == 0) mori_shmem_internal_get_wait(source, pe, qpId);
  __threadfence();
  __syncthreads();
  return 0;
}

// ---- put with signal: the data, then (after a system fence) the signal word on the same PE ----

MORI_SHMEM_DEVICE int mori_shmem_putmem_nbi_signal_thread(void* dest, const void* source, size_t bytes, void* signalDest,
                                                          uint64_t signalValue, atomicType signalOp, int pe, int qpId) {
  MoriRdmaEndpoint* ep;
  if (mori_shmem_internal_route(dest, pe, qpId, &ep) == 0) {
    mori_shmem_internal_proxy_put(ep, dest, source, bytes, pe);
    mori_shmem_internal_proxy_signal(ep, signalDest, signalValue, signalOp, pe);
    return 0;
  }
  mori_shmem_putmem_nbi_thread(dest, source, bytes, pe, qpId);
  __threadfence_system();
  mori_shmem_internal_signal(signalDest, signalValue, signalOp, pe);
  return 0;
}

// The signal is sent once per warp, by lane 0, after every lane's part of the data.
MORI_SHMEM_DEVICE int mori_shmem_putmem_nbi_signal_warp(void* dest, const void* source, size_t bytes, void* signalDest,
                                                        uint64_t signalValue, atomicType signalOp, int pe, int qpId) {
  MoriRdmaEndpoint* ep;
  if (mori_shmem_internal_route(dest, pe, qpId, &ep) == 0) {
    MORI_SHMEM_SYNCWARP();
    if (mori_shmem_internal_lane() == 0) {
      mori_shmem_internal_proxy_put(ep, dest, source, bytes, pe);
      mori_shmem_internal_proxy_signal(ep, signalDest, signalValue, signalOp, pe);
    }
    MORI_SHMEM_SYNCWARP();
    return 0;
  }
  mori_shmem_putmem_nbi_warp(dest, source, bytes, pe, qpId);
  __threadfence_system();
  MORI_SHMEM_SYNCWARP();
  if (mori_shmem_internal_lane() == 0) mori_shmem_internal_signal(signalDest, signalValue, signalOp, pe);
  return 0;
}

// The signal is sent once per block, by thread 0, after every thread's part of the data.
MORI_SHMEM_DEVICE int mori_shmem_putmem_nbi_signal_block(void* dest, const void* source, size_t bytes, void* signalDest,
                                                         uint64_t signalValue, atomicType signalOp, int pe, int qpId) {
  MoriRdmaEndpoint* ep;
  if (mori_shmem_internal_route(dest, pe, qpId, &ep) == 0) {
    __syncthreads();
    if (mori_shmem_internal_block_thread() == 0) {
      mori_shmem_internal_proxy_put(ep, dest, source, bytes, pe);
      mori_shmem_internal_proxy_signal(ep, signalDest, signalValue, signalOp, pe);
    }
    __syncthreads();
    return 0;
  }
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
    MoriRdmaEndpoint* ep;                                                                                           \
    void* d = mori_shmem_internal_route(dest, pe, qpId, &ep);                                                        \
    if (d != 0) {                                                                                                    \
      *(volatile T*) d = value;                                                                                      \
    } else {                                                                                                         \
      unsigned long long bits = 0;                                                                                   \
      for (unsigned int b = 0; b < sizeof(T); b++) ((unsigned char*) &bits)[b] = ((const unsigned char*) &value)[b]; \
      mori_shmem_internal_proxy_p(ep, dest, bits, sizeof(T), 0, pe);                                                 \
    }                                                                                                                \
    return 0;                                                                                                        \
  }                                                                                                                  \
  extern "C" MORI_SHMEM_DEVICE T mori_shmem_##NAME##_g(const T* source, int pe, int qpId) {                          \
    MoriRdmaEndpoint* ep;                                                                                           \
    const void* s = mori_shmem_internal_route(source, pe, qpId, &ep);                                                \
    if (s != 0) return *(volatile const T*) s;                                                                       \
    const unsigned long long bits = mori_shmem_internal_proxy_g(ep, source, sizeof(T), pe);                          \
    T value;                                                                                                         \
    for (unsigned int b = 0; b < sizeof(T); b++) ((unsigned char*) &value)[b] = ((const unsigned char*) &bits)[b];   \
    return value;                                                                                                    \
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
