// Kernels of `mori4j shmem-bench` beyond the collectives (ShmemBenchPe): a put of a whole buffer to one PE, and
// an 8-byte put + signal + wait ping-pong. Compiled with the shmem device library (ShmemKernels).
#include "mori_shmem.cuh"

// Every block puts its contiguous share of bytes (16-byte multiples) to PE pe, then completes its puts. All-zero
// arguments do nothing (ShmemCollectives.preload loads the kernel that way); so does a ping-pong of 0 rounds.
extern "C" __launch_bounds__(512, 4) __global__ void mori4j_bench_put(unsigned char* dst, const unsigned char* src, unsigned long long bytes, int pe) {
  const unsigned long long per = ((bytes + gridDim.x - 1) / gridDim.x + 15) & ~15ull;
  const unsigned long long first = per * blockIdx.x;
  if (first < bytes) {
    const unsigned long long n = bytes - first < per ? bytes - first : per;
    mori_shmem_putmem_nbi_block(dst + first, src + first, n, pe, 0);
  }
  mori_shmem_quiet_thread();
}

// One thread on each of two PEs: `rounds` times, the initiator puts 8 bytes with a signal (SET to the round's
// number, counted from base so that launches need no reset) to the responder and waits for its answer, which
// the responder sends when the initiator's signal arrives.
extern "C" __global__ void mori4j_bench_pingpong(uint64_t* data, uint64_t* signal, uint64_t* source, int rounds,
                                                 unsigned long long base, int initiator, int peer) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  const bool first = mori_shmem_my_pe() == initiator;
  for (int i = 1; i <= rounds; i++) {
    const uint64_t value = base + i;
    if (first) {
      *source = value;
      mori_shmem_putmem_nbi_signal_thread(data, source, 8, signal, value, SIGNAL_SET, peer, 0);
      mori_shmem_uint64_wait_until_greater_or_equal(signal, value);
    } else {
      mori_shmem_uint64_wait_until_greater_or_equal(signal, value);
      *source = *(volatile uint64_t*) data;
      mori_shmem_putmem_nbi_signal_thread(data, source, 8, signal, value, SIGNAL_SET, peer, 0);
    }
  }
}
