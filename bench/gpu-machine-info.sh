# Sourced by the bench/record-*.sh scripts that run on a GPU machine: gpu_count and gpu_machine_info, so that
# every results folder describes its GPUs the same way.

# The number of NVIDIA GPUs nvidia-smi lists (0 without nvidia-smi).
gpu_count() {
  command -v nvidia-smi >/dev/null 2>&1 || { echo 0; return; }
  nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true
}

# The GPUs, the driver and CUDA versions and the topology matrix (nothing without nvidia-smi).
gpu_machine_info() {
  command -v nvidia-smi >/dev/null 2>&1 || return 0
  nvidia-smi -L 2>&1
  nvidia-smi 2>&1 | grep -E 'Driver Version|CUDA Version' | sed 's/|//g; s/  */ /g'
  nvidia-smi topo -m 2>&1
}
