/*
 * ABI probe for the CUDA driver API bindings (org.mori4j.natives.cuda): compiled with gcc against the real
 * cuda.h and run by CudaAbiConformanceTest. One "name value" line each:
 *   sizeof.<type>          size of a type the bindings pass or read
 *   <type>.<field>         offset of a field;  <type>.<field>#size  its size
 *   <CONSTANT>             value of an enum constant or macro
 *   symbol.<api>           the exported symbol cuda.h maps the API name to (cuMemAlloc -> cuMemAlloc_v2):
 *                          the bindings must look up exactly that one, as a C caller compiled today would
 * The test fails on any difference from the Java side and on anything Java binds that is not printed here.
 * No libcuda is needed: only the header is compiled, nothing is linked.
 */
#include <stddef.h>
#include <stdio.h>
#include <cuda.h>

#define SIZE(type, name) printf("sizeof.%s %zu\n", name, sizeof(type))
#define F(type, name, field)                                                \
  printf("%s.%s %zu\n", name, #field, offsetof(type, field));               \
  printf("%s.%s#size %zu\n", name, #field, sizeof(((type *)0)->field))
#define C(constant) printf("%s %lld\n", #constant, (long long)(constant))
#define STR(x) #x
#define XSTR(x) STR(x)
/* XSTR expands the macro first, so a #define cuMemAlloc cuMemAlloc_v2 prints cuMemAlloc_v2 */
#define S(api) printf("symbol.%s %s\n", #api, XSTR(api))

static void types(void) {
  SIZE(CUipcMemHandle, "CUipcMemHandle");
  F(CUipcMemHandle, "CUipcMemHandle", reserved);
  SIZE(CUresult, "CUresult");
  SIZE(CUdevice, "CUdevice");
  SIZE(CUdeviceptr, "CUdeviceptr");
  SIZE(size_t, "size_t");
  SIZE(CUpointer_attribute, "CUpointer_attribute");
  SIZE(CUdevice_attribute, "CUdevice_attribute");
  SIZE(CUmemorytype, "CUmemorytype");
  SIZE(CUcontext, "CUcontext");
  SIZE(CUstream, "CUstream");
  SIZE(CUevent, "CUevent");
  SIZE(CUmodule, "CUmodule");
  SIZE(CUfunction, "CUfunction");
}

static void constants(void) {
  C(CUDA_SUCCESS);   C(CUDA_ERROR_INVALID_VALUE);   C(CUDA_ERROR_OUT_OF_MEMORY);   
C(CUDA_ERROR_NOT_INITIALIZED);   C(CUDA_ERROR_STUB_LIBRARY);   C(CUDA_ERROR_NO_DEVICE);   
C(CUDA_ERROR_INVALID_DEVICE);   C(CUDA_ERROR_INVALID_IMAGE);   C(CUDA_ERROR_INVALID_CONTEXT);   
C(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);   C(CUDA_ERROR_INVALID_HANDLE);   C(CUDA_ERROR_NOT_FOUND);   
C(CUDA_ERROR_NOT_READY);   C(CUDA_ERROR_ILLEGAL_ADDRESS);   C(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);   
C(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);   C(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);   
C(CU_POINTER_ATTRIBUTE_CONTEXT);   C(CU_POINTER_ATTRIBUTE_MEMORY_TYPE);   
C(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL);   C(CU_POINTER_ATTRIBUTE_RANGE_START_ADDR);   
C(CU_POINTER_ATTRIBUTE_RANGE_SIZE);   C(CU_MEMORYTYPE_HOST);   C(CU_MEMORYTYPE_DEVICE);   
C(CU_MEMORYTYPE_ARRAY);   C(CU_MEMORYTYPE_UNIFIED);   C(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);   
C(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);   C(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);   C(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);   C(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);   
C(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);   C(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);   
C(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);   C(CU_MEMHOSTREGISTER_PORTABLE);   
C(CU_MEMHOSTREGISTER_DEVICEMAP);   C(CU_MEMHOSTREGISTER_IOMEMORY);   C(CU_MEMHOSTREGISTER_READ_ONLY);   
C(CU_EVENT_DEFAULT);   C(CU_EVENT_BLOCKING_SYNC);   C(CU_EVENT_DISABLE_TIMING);   C(CU_EVENT_INTERPROCESS);   
C(CU_STREAM_DEFAULT);   C(CU_STREAM_NON_BLOCKING);   C(CU_IPC_HANDLE_SIZE);   
C(CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);   C(CU_MODULE_LAZY_LOADING);
}

static void symbols(void) {
  S(cuInit);
  S(cuDriverGetVersion);
  S(cuDeviceGetCount);
  S(cuDeviceGet);
  S(cuDeviceGetName);
  S(cuDeviceGetAttribute);
  S(cuDevicePrimaryCtxRetain);
  S(cuDevicePrimaryCtxRelease);
  S(cuCtxSetCurrent);
  S(cuCtxGetCurrent);
  S(cuDeviceCanAccessPeer);
  S(cuCtxEnablePeerAccess);
  S(cuPointerGetAttribute);
  S(cuPointerGetAttributes);
  S(cuGetErrorName);
  S(cuGetErrorString);
  S(cuMemGetInfo);
  S(cuMemAlloc);
  S(cuMemFree);
  S(cuMemAllocHost);
  S(cuMemFreeHost);
  S(cuMemHostRegister);
  S(cuMemHostUnregister);
  S(cuMemHostGetDevicePointer);
  S(cuMemcpy);
  S(cuMemcpyAsync);
  S(cuMemcpyHtoD);
  S(cuMemcpyDtoH);
  S(cuMemcpyDtoD);
  S(cuMemcpyHtoDAsync);
  S(cuMemcpyDtoHAsync);
  S(cuMemcpyDtoDAsync);
  S(cuMemcpyPeer);
  S(cuMemcpyPeerAsync);
  S(cuMemsetD8);
  S(cuMemGetAddressRange);
  S(cuIpcGetMemHandle);
  S(cuIpcOpenMemHandle);
  S(cuIpcCloseMemHandle);
  S(cuStreamCreate);
  S(cuStreamDestroy);
  S(cuStreamSynchronize);
  S(cuStreamQuery);
  S(cuEventCreate);
  S(cuEventDestroy);
  S(cuEventRecord);
  S(cuEventQuery);
  S(cuEventSynchronize);
  S(cuEventElapsedTime);
  S(cuModuleLoadData);
  S(cuModuleUnload);
  S(cuModuleGetFunction);
  S(cuModuleGetGlobal);
  S(cuModuleGetLoadingMode);
  S(cuModuleGetFunctionCount);
  S(cuModuleEnumerateFunctions);
  S(cuFuncLoad);
  S(cuLaunchKernel);
  S(cuLaunchCooperativeKernel);
  S(cuOccupancyMaxActiveBlocksPerMultiprocessor);
}

int main(void) {
  types();
  constants();
  symbols();
  return 0;
}
