/*
 * ABI probe for the HIP and hiprtc bindings (org.mori4j.natives.hip): compiled with gcc against Debian's
 * HIP headers (/usr/include/hip from libamdhip64-dev, ROCm 5.2) for the AMD platform and run by
 * HipAbiConformanceTest. One "name value" line each:
 *   sizeof.<type>          size of a type the bindings pass or read
 *   <type>.<field>         offset of a field;  <type>.<field>#size  its size
 *   <CONSTANT>             value of an enum constant or macro
 *   symbol.<api>           the exported symbol the header maps the API name to (HIP 5.2 has no such macros
 *                          in C, so each should print itself; a future header that adds one is caught)
 * The test fails on any difference from the Java side and on anything Java binds that is not printed here.
 */
#include <stddef.h>
#include <stdio.h>
#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>

#define SIZE(type, name) printf("sizeof.%s %zu\n", name, sizeof(type))
#define F(type, name, field)                                                \
  printf("%s.%s %zu\n", name, #field, offsetof(type, field));               \
  printf("%s.%s#size %zu\n", name, #field, sizeof(((type *)0)->field))
#define C(constant) printf("%s %lld\n", #constant, (long long)(constant))
#define STR(x) #x
#define XSTR(x) STR(x)
#define S(api) printf("symbol.%s %s\n", #api, XSTR(api))

#define P(field) F(hipPointerAttribute_t, "hipPointerAttribute_t", field)
static void types(void) {
  SIZE(hipIpcMemHandle_t, "hipIpcMemHandle_t");
  F(hipIpcMemHandle_t, "hipIpcMemHandle_t", reserved);
  SIZE(hipPointerAttribute_t, "hipPointerAttribute_t");
  P(memoryType); P(device); P(devicePointer); P(hostPointer); P(isManaged); P(allocationFlags);
  SIZE(hipError_t, "hipError_t");
  SIZE(hiprtcResult, "hiprtcResult");
  SIZE(hipMemcpyKind, "hipMemcpyKind");
  SIZE(hipDeviceAttribute_t, "hipDeviceAttribute_t");
  SIZE(enum hipMemoryType, "hipMemoryType");
  SIZE(hipDevice_t, "hipDevice_t");
  SIZE(size_t, "size_t");
  SIZE(hipStream_t, "hipStream_t");
  SIZE(hipEvent_t, "hipEvent_t");
  SIZE(hipModule_t, "hipModule_t");
  SIZE(hipFunction_t, "hipFunction_t");
  SIZE(hiprtcProgram, "hiprtcProgram");
  SIZE(hipDeviceptr_t, "hipDeviceptr_t");
  SIZE(void *, "void*");
}
#undef P

static void constants(void) {
  C(hipSuccess); C(hipErrorInvalidValue); C(hipErrorOutOfMemory); C(hipErrorNotInitialized);
  C(hipErrorInvalidDevicePointer); C(hipErrorNoDevice); C(hipErrorInvalidDevice); C(hipErrorInvalidHandle);
  C(hipErrorNotFound); C(hipErrorNotReady); C(hipErrorPeerAccessAlreadyEnabled);
  C(hipErrorHostMemoryAlreadyRegistered); C(hipErrorNotSupported); C(hipMemcpyHostToHost);
  C(hipMemcpyHostToDevice); C(hipMemcpyDeviceToHost); C(hipMemcpyDeviceToDevice); C(hipMemcpyDefault);
  C(hipMemoryTypeHost); C(hipMemoryTypeDevice); C(hipMemoryTypeArray); C(hipMemoryTypeUnified);
  C(hipDeviceAttributeComputeCapabilityMajor); C(hipDeviceAttributeComputeCapabilityMinor);
  C(hipDeviceAttributeMultiprocessorCount); C(hipDeviceAttributePciBusId);
  C(hipDeviceAttributePciDeviceId); C(hipDeviceAttributePciDomainID); C(hipHostMallocDefault); C(hipHostMallocPortable);
  C(hipHostRegisterDefault); C(hipHostRegisterPortable); C(hipHostRegisterMapped); C(hipStreamDefault);
  C(hipStreamNonBlocking); C(hipEventDefault); C(hipEventBlockingSync); C(hipEventDisableTiming);
  C(hipEventInterprocess); C(hipIpcMemLazyEnablePeerAccess); C(HIP_IPC_HANDLE_SIZE); C(HIPRTC_SUCCESS);
  C(HIPRTC_ERROR_INVALID_INPUT); C(HIPRTC_ERROR_INVALID_OPTION); C(HIPRTC_ERROR_COMPILATION);
}

static void symbols(void) {
  S(hipMemGetInfo); S(hipInit); S(hipDriverGetVersion); S(hipRuntimeGetVersion); S(hipGetDeviceCount); S(hipSetDevice);
  S(hipGetDevice); S(hipDeviceGet); S(hipDeviceGetName); S(hipDeviceGetAttribute); S(hipMalloc); S(hipFree);
  S(hipHostMalloc); S(hipHostFree); S(hipHostRegister); S(hipHostUnregister); S(hipMemcpy);
  S(hipMemcpyAsync); S(hipMemcpyPeer); S(hipMemcpyPeerAsync); S(hipMemset); S(hipMemGetAddressRange);
  S(hipPointerGetAttributes); S(hipIpcGetMemHandle); S(hipIpcOpenMemHandle); S(hipIpcCloseMemHandle);
  S(hipStreamCreateWithFlags); S(hipStreamDestroy); S(hipStreamSynchronize); S(hipStreamQuery);
  S(hipEventCreateWithFlags); S(hipEventDestroy); S(hipEventRecord); S(hipEventQuery);
  S(hipEventSynchronize); S(hipEventElapsedTime); S(hipModuleLoadData); S(hipModuleUnload);
  S(hipModuleGetFunction); S(hipModuleGetGlobal); S(hipModuleLaunchKernel); S(hipModuleLaunchCooperativeKernel);
  S(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor); S(hipDeviceCanAccessPeer);
  S(hipDeviceEnablePeerAccess); S(hipGetErrorName); S(hipGetErrorString);
  S(hiprtcVersion); S(hiprtcCreateProgram); S(hiprtcCompileProgram); S(hiprtcDestroyProgram);
  S(hiprtcGetProgramLogSize); S(hiprtcGetProgramLog); S(hiprtcGetCodeSize); S(hiprtcGetCode);
  S(hiprtcGetErrorString);
}

int main(void) {
  types();
  constants();
  symbols();
  return 0;
}
