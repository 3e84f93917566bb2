package org.mori4j.natives.hip;

/**
 * The values from {@code hip_runtime_api.h} and {@code hiprtc.h} that the HIP bindings use, named exactly as
 * in the headers (as jextract would) so that the ABI conformance test can compare each with the value a C
 * probe compiled against Debian's HIP 5.2 headers prints; any field the probe does not print fails that
 * test. {@code hipMemoryType} changed its values in ROCm 6: {@link Rocm6} holds the new ones, which
 * {@link HipRuntime} picks by the runtime's reported version; those cannot be probed here (no ROCm 6 headers
 * in Debian) and are taken from ROCm 6's published header.
 */
public final class HipConstants {
  private HipConstants() {}

  // hipError_t
  public static final int hipSuccess = 0;
  public static final int hipErrorInvalidValue = 1;
  public static final int hipErrorOutOfMemory = 2;
  public static final int hipErrorNotInitialized = 3;
  public static final int hipErrorInvalidDevicePointer = 17;
  public static final int hipErrorNoDevice = 100;
  public static final int hipErrorInvalidDevice = 101;
  public static final int hipErrorInvalidHandle = 400;
  public static final int hipErrorNotFound = 500;
  /** Not an error: hipStreamQuery/hipEventQuery say the work is still running. */
  public static final int hipErrorNotReady = 600;
  public static final int hipErrorPeerAccessAlreadyEnabled = 704;
  public static final int hipErrorHostMemoryAlreadyRegistered = 712;
  public static final int hipErrorNotSupported = 801;

  // hipMemcpyKind
  public static final int hipMemcpyHostToHost = 0;
  public static final int hipMemcpyHostToDevice = 1;
  public static final int hipMemcpyDeviceToHost = 2;
  public static final int hipMemcpyDeviceToDevice = 3;
  public static final int hipMemcpyDefault = 4;

  // hipMemoryType as of HIP 5.x (the probed header)
  public static final int hipMemoryTypeHost = 0;
  public static final int hipMemoryTypeDevice = 1;
  public static final int hipMemoryTypeArray = 2;
  public static final int hipMemoryTypeUnified = 3;

  // hipDeviceAttribute_t
  public static final int hipDeviceAttributeComputeCapabilityMajor = 23;
  public static final int hipDeviceAttributeComputeCapabilityMinor = 61;
  public static final int hipDeviceAttributeMultiprocessorCount = 63;
  public static final int hipDeviceAttributePciBusId = 67;
  public static final int hipDeviceAttributePciDeviceId = 68;
  public static final int hipDeviceAttributePciDomainID = 69;

  // flags
  public static final int hipHostMallocDefault = 0x0;
  public static final int hipHostMallocPortable = 0x1;
  public static final int hipHostRegisterDefault = 0x0;
  public static final int hipHostRegisterPortable = 0x1;
  public static final int hipHostRegisterMapped = 0x2;
  public static final int hipStreamDefault = 0x0;
  public static final int hipStreamNonBlocking = 0x1;
  public static final int hipEventDefault = 0x0;
  public static final int hipEventBlockingSync = 0x1;
  public static final int hipEventDisableTiming = 0x2;
  public static final int hipEventInterprocess = 0x4;
  public static final int hipIpcMemLazyEnablePeerAccess = 0;
  public static final int HIP_IPC_HANDLE_SIZE = 64;

  // hiprtcResult
  public static final int HIPRTC_SUCCESS = 0;
  public static final int HIPRTC_ERROR_INVALID_INPUT = 3;
  public static final int HIPRTC_ERROR_INVALID_OPTION = 5;
  public static final int HIPRTC_ERROR_COMPILATION = 6;

  /** {@code hipMemoryType} from ROCm 6 on, which renumbered it to match CUDA's and added "unregistered". */
  public static final class Rocm6 {
    private Rocm6() {}

    public static final int hipMemoryTypeUnregistered = 0;
    public static final int hipMemoryTypeHost = 1;
    public static final int hipMemoryTypeDevice = 2;
    public static final int hipMemoryTypeManaged = 3;
    public static final int hipMemoryTypeArray = 10;
    public static final int hipMemoryTypeUnified = 11;
  }
}
