package org.mori4j.natives.cuda;

/**
 * The values from {@code cuda.h} that the CUDA bindings use: result codes they treat specially or name in
 * tests, pointer and device attributes, memory types, and stream, event, host-registration and IPC flags.
 * Every field is named exactly as in the header so that the ABI conformance test can compare each one with
 * the value a C probe compiled against the real header prints; a field here that the probe does not print
 * fails that test, so nothing escapes the check.
 */
public final class CudaConstants {
  private CudaConstants() {}

  // CUresult
  public static final int CUDA_SUCCESS = 0;
  public static final int CUDA_ERROR_INVALID_VALUE = 1;
  public static final int CUDA_ERROR_OUT_OF_MEMORY = 2;
  public static final int CUDA_ERROR_NOT_INITIALIZED = 3;
  /** libcuda.so.1 is the toolkit's stub, not a real driver (containers without the driver mounted). */
  public static final int CUDA_ERROR_STUB_LIBRARY = 34;
  public static final int CUDA_ERROR_NO_DEVICE = 100;
  public static final int CUDA_ERROR_INVALID_DEVICE = 101;
  public static final int CUDA_ERROR_INVALID_IMAGE = 200;
  public static final int CUDA_ERROR_INVALID_CONTEXT = 201;
  public static final int CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217;
  public static final int CUDA_ERROR_INVALID_HANDLE = 400;
  public static final int CUDA_ERROR_NOT_FOUND = 500;
  /** Not an error: cuStreamQuery/cuEventQuery say the work is still running. */
  public static final int CUDA_ERROR_NOT_READY = 600;
  /** {@code CUmoduleLoadingMode}: kernels are loaded at first use. */
  public static final int CU_MODULE_LAZY_LOADING = 0x2;
  public static final int CUDA_ERROR_ILLEGAL_ADDRESS = 700;
  /** Not an error for us: enabling peer access twice is idempotent in our API. */
  public static final int CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704;
  public static final int CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712;
  public static final int CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713;

  // CUpointer_attribute
  public static final int CU_POINTER_ATTRIBUTE_CONTEXT = 1;
  public static final int CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2;
  public static final int CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9;
  public static final int CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11;
  public static final int CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12;

  // CUmemorytype (0 is what cuPointerGetAttributes reports for an address CUDA does not know)
  public static final int CU_MEMORYTYPE_HOST = 1;
  public static final int CU_MEMORYTYPE_DEVICE = 2;
  public static final int CU_MEMORYTYPE_ARRAY = 3;
  public static final int CU_MEMORYTYPE_UNIFIED = 4;

  // CUdevice_attribute
  public static final int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
  public static final int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
  public static final int CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33;
  public static final int CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34;
  public static final int CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50;
  public static final int CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41;
  public static final int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
  public static final int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;

  // cuMemHostRegister flags
  public static final int CU_MEMHOSTREGISTER_PORTABLE = 0x01;
  public static final int CU_MEMHOSTREGISTER_DEVICEMAP = 0x02;
  public static final int CU_MEMHOSTREGISTER_IOMEMORY = 0x04;
  public static final int CU_MEMHOSTREGISTER_READ_ONLY = 0x08;

  // CUevent_flags
  public static final int CU_EVENT_DEFAULT = 0x0;
  public static final int CU_EVENT_BLOCKING_SYNC = 0x1;
  public static final int CU_EVENT_DISABLE_TIMING = 0x2;
  public static final int CU_EVENT_INTERPROCESS = 0x4;

  // CUstream_flags
  public static final int CU_STREAM_DEFAULT = 0x0;
  public static final int CU_STREAM_NON_BLOCKING = 0x1;

  // IPC
  public static final int CU_IPC_HANDLE_SIZE = 64;
  public static final int CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 0x1;
}
