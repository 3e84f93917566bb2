/*
 * ABI probe for the NVRTC bindings (org.mori4j.natives.cuda.Nvrtc): compiled with gcc against the real
 * nvrtc.h (CUDA's include directory; the CUDA installs on the build machines may lack it, see
 * NvrtcAbiConformanceTest) and run by NvrtcAbiConformanceTest. Same line format as cuda_probe.c.
 */
#include <stddef.h>
#include <stdio.h>
#include <nvrtc.h>

#define SIZE(type, name) printf("sizeof.%s %zu\n", name, sizeof(type))
#define C(constant) printf("%s %lld\n", #constant, (long long)(constant))
#define STR(x) #x
#define XSTR(x) STR(x)
#define S(api) printf("symbol.%s %s\n", #api, XSTR(api))

int main(void) {
  SIZE(nvrtcResult, "nvrtcResult");
  SIZE(nvrtcProgram, "nvrtcProgram");
  SIZE(size_t, "size_t");
  C(NVRTC_SUCCESS);
  C(NVRTC_ERROR_INVALID_INPUT);
  C(NVRTC_ERROR_INVALID_PROGRAM);
  C(NVRTC_ERROR_INVALID_OPTION);
  C(NVRTC_ERROR_COMPILATION);
  S(nvrtcVersion);
  S(nvrtcCreateProgram);
  S(nvrtcCompileProgram);
  S(nvrtcDestroyProgram);
  S(nvrtcGetProgramLogSize);
  S(nvrtcGetProgramLog);
  S(nvrtcGetCUBINSize);
  S(nvrtcGetCUBIN);
  S(nvrtcGetPTXSize);
  S(nvrtcGetPTX);
  S(nvrtcGetErrorString);
  return 0;
}
