package cuda

import "strconv"

// Result is a CUresult, the status code every driver entry point returns.
//
// A Result is also an error, so errors.Is(err, cuda.ErrorNotReady) works on
// any *Error this package returns.
type Result int32

// Result codes from cuda.h. The numeric values are the driver ABI and never
// change between releases; new codes are only appended.
const (
	Success                          Result = 0
	ErrorInvalidValue                Result = 1
	ErrorOutOfMemory                 Result = 2
	ErrorNotInitialized              Result = 3
	ErrorDeinitialized               Result = 4
	ErrorProfilerDisabled            Result = 5
	ErrorStubLibrary                 Result = 34
	ErrorDeviceUnavailable           Result = 46
	ErrorNoDevice                    Result = 100
	ErrorInvalidDevice               Result = 101
	ErrorDeviceNotLicensed           Result = 102
	ErrorInvalidImage                Result = 200
	ErrorInvalidContext              Result = 201
	ErrorContextAlreadyCurrent       Result = 202
	ErrorMapFailed                   Result = 205
	ErrorUnmapFailed                 Result = 206
	ErrorArrayIsMapped               Result = 207
	ErrorAlreadyMapped               Result = 208
	ErrorNoBinaryForGPU              Result = 209
	ErrorAlreadyAcquired             Result = 210
	ErrorNotMapped                   Result = 211
	ErrorNotMappedAsArray            Result = 212
	ErrorNotMappedAsPointer          Result = 213
	ErrorECCUncorrectable            Result = 214
	ErrorUnsupportedLimit            Result = 215
	ErrorContextAlreadyInUse         Result = 216
	ErrorPeerAccessUnsupported       Result = 217
	ErrorInvalidPTX                  Result = 218
	ErrorInvalidGraphicsContext      Result = 219
	ErrorNVLinkUncorrectable         Result = 220
	ErrorJITCompilerNotFound         Result = 221
	ErrorUnsupportedPTXVersion       Result = 222
	ErrorJITCompilationDisabled      Result = 223
	ErrorUnsupportedExecAffinity     Result = 224
	ErrorUnsupportedDevsideSync      Result = 225
	ErrorInvalidSource               Result = 300
	ErrorFileNotFound                Result = 301
	ErrorSharedObjectSymbolNotFound  Result = 302
	ErrorSharedObjectInitFailed      Result = 303
	ErrorOperatingSystem             Result = 304
	ErrorInvalidHandle               Result = 400
	ErrorIllegalState                Result = 401
	ErrorLossyQuery                  Result = 402
	ErrorNotFound                    Result = 500
	ErrorNotReady                    Result = 600
	ErrorIllegalAddress              Result = 700
	ErrorLaunchOutOfResources        Result = 701
	ErrorLaunchTimeout               Result = 702
	ErrorLaunchIncompatibleTexturing Result = 703
	ErrorPeerAccessAlreadyEnabled    Result = 704
	ErrorPeerAccessNotEnabled        Result = 705
	ErrorPrimaryContextActive        Result = 708
	ErrorContextIsDestroyed          Result = 709
	ErrorAssert                      Result = 710
	ErrorTooManyPeers                Result = 711
	ErrorHostMemoryAlreadyRegistered Result = 712
	ErrorHostMemoryNotRegistered     Result = 713
	ErrorHardwareStackError          Result = 714
	ErrorIllegalInstruction          Result = 715
	ErrorMisalignedAddress           Result = 716
	ErrorInvalidAddressSpace         Result = 717
	ErrorInvalidPC                   Result = 718
	ErrorLaunchFailed                Result = 719
	ErrorCooperativeLaunchTooLarge   Result = 720
	ErrorNotPermitted                Result = 800
	ErrorNotSupported                Result = 801
	ErrorSystemNotReady              Result = 802
	ErrorSystemDriverMismatch        Result = 803
	ErrorCompatNotSupportedOnDevice  Result = 804
	ErrorStreamCaptureUnsupported    Result = 900
	ErrorStreamCaptureInvalidated    Result = 901
	ErrorStreamCaptureMerge          Result = 902
	ErrorStreamCaptureUnmatched      Result = 903
	ErrorStreamCaptureUnjoined       Result = 904
	ErrorStreamCaptureIsolation      Result = 905
	ErrorStreamCaptureImplicit       Result = 906
	ErrorCapturedEvent               Result = 907
	ErrorStreamCaptureWrongThread    Result = 908
	ErrorTimeout                     Result = 909
	ErrorGraphExecUpdateFailure      Result = 910
	ErrorExternalDevice              Result = 911
	ErrorInvalidClusterSize          Result = 912
	ErrorUnknown                     Result = 999
)

// resultInfo is the built-in fallback for cuGetErrorName/cuGetErrorString,
// used when the driver is not loaded or does not know a code. The text is
// our own short description, not the driver's wording.
type resultInfo struct{ name, text string }

var resultTable = map[Result]resultInfo{
	Success:                          {"CUDA_SUCCESS", "no error"},
	ErrorInvalidValue:                {"CUDA_ERROR_INVALID_VALUE", "an argument is out of range"},
	ErrorOutOfMemory:                 {"CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
	ErrorNotInitialized:              {"CUDA_ERROR_NOT_INITIALIZED", "the driver is not initialized"},
	ErrorDeinitialized:               {"CUDA_ERROR_DEINITIALIZED", "the driver is shutting down"},
	ErrorProfilerDisabled:            {"CUDA_ERROR_PROFILER_DISABLED", "profiler disabled"},
	ErrorStubLibrary:                 {"CUDA_ERROR_STUB_LIBRARY", "the loaded libcuda is the toolkit's link stub, not a driver"},
	ErrorDeviceUnavailable:           {"CUDA_ERROR_DEVICE_UNAVAILABLE", "the device is busy or unavailable"},
	ErrorNoDevice:                    {"CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is present"},
	ErrorInvalidDevice:               {"CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
	ErrorDeviceNotLicensed:           {"CUDA_ERROR_DEVICE_NOT_LICENSED", "the device is not licensed"},
	ErrorInvalidImage:                {"CUDA_ERROR_INVALID_IMAGE", "the module image is invalid"},
	ErrorInvalidContext:              {"CUDA_ERROR_INVALID_CONTEXT", "no valid context is current on this thread"},
	ErrorContextAlreadyCurrent:       {"CUDA_ERROR_CONTEXT_ALREADY_CURRENT", "context already current"},
	ErrorMapFailed:                   {"CUDA_ERROR_MAP_FAILED", "map failed"},
	ErrorUnmapFailed:                 {"CUDA_ERROR_UNMAP_FAILED", "unmap failed"},
	ErrorArrayIsMapped:               {"CUDA_ERROR_ARRAY_IS_MAPPED", "array is mapped"},
	ErrorAlreadyMapped:               {"CUDA_ERROR_ALREADY_MAPPED", "already mapped"},
	ErrorNoBinaryForGPU:              {"CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for this device"},
	ErrorAlreadyAcquired:             {"CUDA_ERROR_ALREADY_ACQUIRED", "already acquired"},
	ErrorNotMapped:                   {"CUDA_ERROR_NOT_MAPPED", "not mapped"},
	ErrorNotMappedAsArray:            {"CUDA_ERROR_NOT_MAPPED_AS_ARRAY", "not mapped as an array"},
	ErrorNotMappedAsPointer:          {"CUDA_ERROR_NOT_MAPPED_AS_POINTER", "not mapped as a pointer"},
	ErrorECCUncorrectable:            {"CUDA_ERROR_ECC_UNCORRECTABLE", "uncorrectable ECC error"},
	ErrorUnsupportedLimit:            {"CUDA_ERROR_UNSUPPORTED_LIMIT", "limit not supported by the device"},
	ErrorContextAlreadyInUse:         {"CUDA_ERROR_CONTEXT_ALREADY_IN_USE", "context already in use by another thread"},
	ErrorPeerAccessUnsupported:       {"CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "peer access unsupported"},
	ErrorInvalidPTX:                  {"CUDA_ERROR_INVALID_PTX", "PTX JIT compilation failed"},
	ErrorInvalidGraphicsContext:      {"CUDA_ERROR_INVALID_GRAPHICS_CONTEXT", "invalid graphics context"},
	ErrorNVLinkUncorrectable:         {"CUDA_ERROR_NVLINK_UNCORRECTABLE", "uncorrectable NVLink error"},
	ErrorJITCompilerNotFound:         {"CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "the PTX JIT compiler library is missing"},
	ErrorUnsupportedPTXVersion:       {"CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the PTX ISA version is newer than this driver supports"},
	ErrorJITCompilationDisabled:      {"CUDA_ERROR_JIT_COMPILATION_DISABLED", "PTX JIT compilation is disabled"},
	ErrorUnsupportedExecAffinity:     {"CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY", "unsupported execution affinity"},
	ErrorUnsupportedDevsideSync:      {"CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC", "device-side sync unsupported"},
	ErrorInvalidSource:               {"CUDA_ERROR_INVALID_SOURCE", "invalid kernel source"},
	ErrorFileNotFound:                {"CUDA_ERROR_FILE_NOT_FOUND", "file not found"},
	ErrorSharedObjectSymbolNotFound:  {"CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", "a symbol was not found"},
	ErrorSharedObjectInitFailed:      {"CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", "shared object initialization failed"},
	ErrorOperatingSystem:             {"CUDA_ERROR_OPERATING_SYSTEM", "an operating system call failed"},
	ErrorInvalidHandle:               {"CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
	ErrorIllegalState:                {"CUDA_ERROR_ILLEGAL_STATE", "the resource is in an illegal state for this operation"},
	ErrorLossyQuery:                  {"CUDA_ERROR_LOSSY_QUERY", "the query would lose information"},
	ErrorNotFound:                    {"CUDA_ERROR_NOT_FOUND", "named symbol not found"},
	ErrorNotReady:                    {"CUDA_ERROR_NOT_READY", "the operation has not completed yet"},
	ErrorIllegalAddress:              {"CUDA_ERROR_ILLEGAL_ADDRESS", "a kernel accessed an illegal memory address"},
	ErrorLaunchOutOfResources:        {"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
	ErrorLaunchTimeout:               {"CUDA_ERROR_LAUNCH_TIMEOUT", "the kernel ran past the watchdog timeout"},
	ErrorLaunchIncompatibleTexturing: {"CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING", "incompatible texturing mode"},
	ErrorPeerAccessAlreadyEnabled:    {"CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "peer access already enabled"},
	ErrorPeerAccessNotEnabled:        {"CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", "peer access not enabled"},
	ErrorPrimaryContextActive:        {"CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE", "the primary context is already active"},
	ErrorContextIsDestroyed:          {"CUDA_ERROR_CONTEXT_IS_DESTROYED", "the context has been destroyed"},
	ErrorAssert:                      {"CUDA_ERROR_ASSERT", "a device-side assert fired"},
	ErrorTooManyPeers:                {"CUDA_ERROR_TOO_MANY_PEERS", "too many peers"},
	ErrorHostMemoryAlreadyRegistered: {"CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", "host memory already registered"},
	ErrorHostMemoryNotRegistered:     {"CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", "host memory not registered"},
	ErrorHardwareStackError:          {"CUDA_ERROR_HARDWARE_STACK_ERROR", "device hardware stack error"},
	ErrorIllegalInstruction:          {"CUDA_ERROR_ILLEGAL_INSTRUCTION", "a kernel executed an illegal instruction"},
	ErrorMisalignedAddress:           {"CUDA_ERROR_MISALIGNED_ADDRESS", "a kernel made a misaligned memory access"},
	ErrorInvalidAddressSpace:         {"CUDA_ERROR_INVALID_ADDRESS_SPACE", "a kernel used an address in the wrong address space"},
	ErrorInvalidPC:                   {"CUDA_ERROR_INVALID_PC", "invalid program counter"},
	ErrorLaunchFailed:                {"CUDA_ERROR_LAUNCH_FAILED", "the kernel failed while running"},
	ErrorCooperativeLaunchTooLarge:   {"CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", "cooperative launch grid too large"},
	ErrorNotPermitted:                {"CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
	ErrorNotSupported:                {"CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
	ErrorSystemNotReady:              {"CUDA_ERROR_SYSTEM_NOT_READY", "system not ready"},
	ErrorSystemDriverMismatch:        {"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "driver and kernel module versions differ"},
	ErrorCompatNotSupportedOnDevice:  {"CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "forward compatibility not supported on this device"},
	ErrorStreamCaptureUnsupported:    {"CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted while capturing"},
	ErrorStreamCaptureInvalidated:    {"CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "the stream capture was invalidated"},
	ErrorStreamCaptureMerge:          {"CUDA_ERROR_STREAM_CAPTURE_MERGE", "capture would merge two independent captures"},
	ErrorStreamCaptureUnmatched:      {"CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", "capture was not begun on this stream"},
	ErrorStreamCaptureUnjoined:       {"CUDA_ERROR_STREAM_CAPTURE_UNJOINED", "capture forked a stream that was not joined"},
	ErrorStreamCaptureIsolation:      {"CUDA_ERROR_STREAM_CAPTURE_ISOLATION", "capture would cross a capture boundary"},
	ErrorStreamCaptureImplicit:       {"CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", "capture would depend on the legacy stream"},
	ErrorCapturedEvent:               {"CUDA_ERROR_CAPTURED_EVENT", "the event was recorded in a capture"},
	ErrorStreamCaptureWrongThread:    {"CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", "capture ended on a different thread"},
	ErrorTimeout:                     {"CUDA_ERROR_TIMEOUT", "wait timed out"},
	ErrorGraphExecUpdateFailure:      {"CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", "graph update not possible"},
	ErrorExternalDevice:              {"CUDA_ERROR_EXTERNAL_DEVICE", "an external device failed"},
	ErrorInvalidClusterSize:          {"CUDA_ERROR_INVALID_CLUSTER_SIZE", "invalid cluster size"},
	ErrorUnknown:                     {"CUDA_ERROR_UNKNOWN", "unknown error"},
}

// builtinName returns the CUDA spelling of r from the built-in table, or
// "CUresult(N)" for a code the table does not know.
func builtinName(r Result) string {
	if info, ok := resultTable[r]; ok {
		return info.name
	}
	return "CUresult(" + strconv.Itoa(int(r)) + ")"
}

// builtinText returns the built-in description of r, or "" if unknown.
func builtinText(r Result) string {
	return resultTable[r].text
}

// String returns the CUDA name of r, e.g. "CUDA_ERROR_OUT_OF_MEMORY".
func (r Result) String() string { return builtinName(r) }

// Error makes a Result usable as an error and as an errors.Is target.
func (r Result) Error() string {
	if t := builtinText(r); t != "" {
		return builtinName(r) + ": " + t
	}
	return builtinName(r)
}
