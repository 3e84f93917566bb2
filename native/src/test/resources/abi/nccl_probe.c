/*
 * ABI probe for the NCCL bindings (org.mori4j.natives.nccl): compiled with gcc against the real nccl.h (from
 * libnccl-dev or pip's nvidia-nccl-cu* wheel; it includes cuda_runtime.h, so CUDA's include directory is needed
 * too) and run by NcclAbiConformanceTest. Lines: "name value"; data types as "type.<enumerator> value", ops as
 * "op.<enumerator> value", bound APIs as "symbol.<api> <symbol>".
 */
#include <stddef.h>
#include <stdio.h>
#include <nccl.h>

#define SIZE(type, name) printf("sizeof.%s %zu\n", name, sizeof(type))
#define C(constant) printf("%s %lld\n", #constant, (long long)(constant))
#define T(constant) printf("type.%s %lld\n", #constant, (long long)(constant))
#define OP(constant) printf("op.%s %lld\n", #constant, (long long)(constant))
#define STR(x) #x
#define XSTR(x) STR(x)
#define S(api) printf("symbol.%s %s\n", #api, XSTR(api))

int main(void) {
  SIZE(ncclUniqueId, "ncclUniqueId");
  printf("ncclUniqueId.internal %zu\n", offsetof(ncclUniqueId, internal));
  printf("ncclUniqueId.internal#size %zu\n", sizeof(((ncclUniqueId *)0)->internal));
  printf("NCCL_UNIQUE_ID_BYTES %d\n", NCCL_UNIQUE_ID_BYTES);
  C(ncclSuccess);
  C(ncclUnhandledCudaError);
  C(ncclSystemError);
  C(ncclInternalError);
  C(ncclInvalidArgument);
  C(ncclInvalidUsage);
  C(ncclRemoteError);
  C(ncclInProgress);
  T(ncclInt8);
  T(ncclUint8);
  T(ncclInt32);
  T(ncclUint32);
  T(ncclInt64);
  T(ncclUint64);
  T(ncclFloat16);
  T(ncclFloat32);
  T(ncclFloat64);
  T(ncclBfloat16);
  OP(ncclSum);
  OP(ncclProd);
  OP(ncclMax);
  OP(ncclMin);
  OP(ncclAvg);
  printf("header.version %d\n", NCCL_VERSION_CODE);
  S(ncclGetVersion);
  S(ncclGetUniqueId);
  S(ncclCommInitRank);
  S(ncclCommDestroy);
  S(ncclCommAbort);
  S(ncclCommCuDevice);
  S(ncclCommCount);
  S(ncclCommUserRank);
  S(ncclCommGetAsyncError);
  S(ncclAllReduce);
  S(ncclGroupStart);
  S(ncclGroupEnd);
  S(ncclGetErrorString);
  S(ncclGetLastError);
  return 0;
}
