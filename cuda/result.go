package cuda

import "github.com/gokern/kern/internal/dynlib"

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

// resultTable is the built-in fallback for cuGetErrorName/cuGetErrorString,
// used when the driver is not loaded or does not know a code. The text is
// our own short description, not the driver's wording.
var resultTable = dynlib.Codes[Result]{
	Success:                          {Name: "CUDA_SUCCESS", Text: "no error"},
	ErrorInvalidValue:                {Name: "CUDA_ERROR_INVALID_VALUE", Text: "an argument is out of range"},
	ErrorOutOfMemory:                 {Name: "CUDA_ERROR_OUT_OF_MEMORY", Text: "out of memory"},
	ErrorNotInitialized:              {Name: "CUDA_ERROR_NOT_INITIALIZED", Text: "the driver is not initialized"},
	ErrorDeinitialized:               {Name: "CUDA_ERROR_DEINITIALIZED", Text: "the driver is shutting down"},
	ErrorProfilerDisabled:            {Name: "CUDA_ERROR_PROFILER_DISABLED", Text: "profiler disabled"},
	ErrorStubLibrary:                 {Name: "CUDA_ERROR_STUB_LIBRARY", Text: "the loaded libcuda is the toolkit's link stub, not a driver"},
	ErrorDeviceUnavailable:           {Name: "CUDA_ERROR_DEVICE_UNAVAILABLE", Text: "the device is busy or unavailable"},
	ErrorNoDevice:                    {Name: "CUDA_ERROR_NO_DEVICE", Text: "no CUDA-capable device is present"},
	ErrorInvalidDevice:               {Name: "CUDA_ERROR_INVALID_DEVICE", Text: "invalid device ordinal"},
	ErrorDeviceNotLicensed:           {Name: "CUDA_ERROR_DEVICE_NOT_LICENSED", Text: "the device is not licensed"},
	ErrorInvalidImage:                {Name: "CUDA_ERROR_INVALID_IMAGE", Text: "the module image is invalid"},
	ErrorInvalidContext:              {Name: "CUDA_ERROR_INVALID_CONTEXT", Text: "no valid context is current on this thread"},
	ErrorContextAlreadyCurrent:       {Name: "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", Text: "context already current"},
	ErrorMapFailed:                   {Name: "CUDA_ERROR_MAP_FAILED", Text: "map failed"},
	ErrorUnmapFailed:                 {Name: "CUDA_ERROR_UNMAP_FAILED", Text: "unmap failed"},
	ErrorArrayIsMapped:               {Name: "CUDA_ERROR_ARRAY_IS_MAPPED", Text: "array is mapped"},
	ErrorAlreadyMapped:               {Name: "CUDA_ERROR_ALREADY_MAPPED", Text: "already mapped"},
	ErrorNoBinaryForGPU:              {Name: "CUDA_ERROR_NO_BINARY_FOR_GPU", Text: "no kernel image is available for this device"},
	ErrorAlreadyAcquired:             {Name: "CUDA_ERROR_ALREADY_ACQUIRED", Text: "already acquired"},
	ErrorNotMapped:                   {Name: "CUDA_ERROR_NOT_MAPPED", Text: "not mapped"},
	ErrorNotMappedAsArray:            {Name: "CUDA_ERROR_NOT_MAPPED_AS_ARRAY", Text: "not mapped as an array"},
	ErrorNotMappedAsPointer:          {Name: "CUDA_ERROR_NOT_MAPPED_AS_POINTER", Text: "not mapped as a pointer"},
	ErrorECCUncorrectable:            {Name: "CUDA_ERROR_ECC_UNCORRECTABLE", Text: "uncorrectable ECC error"},
	ErrorUnsupportedLimit:            {Name: "CUDA_ERROR_UNSUPPORTED_LIMIT", Text: "limit not supported by the device"},
	ErrorContextAlreadyInUse:         {Name: "CUDA_ERROR_CONTEXT_ALREADY_IN_USE", Text: "context already in use by another thread"},
	ErrorPeerAccessUnsupported:       {Name: "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", Text: "peer access unsupported"},
	ErrorInvalidPTX:                  {Name: "CUDA_ERROR_INVALID_PTX", Text: "PTX JIT compilation failed"},
	ErrorInvalidGraphicsContext:      {Name: "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT", Text: "invalid graphics context"},
	ErrorNVLinkUncorrectable:         {Name: "CUDA_ERROR_NVLINK_UNCORRECTABLE", Text: "uncorrectable NVLink error"},
	ErrorJITCompilerNotFound:         {Name: "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", Text: "the PTX JIT compiler library is missing"},
	ErrorUnsupportedPTXVersion:       {Name: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", Text: "the PTX ISA version is newer than this driver supports"},
	ErrorJITCompilationDisabled:      {Name: "CUDA_ERROR_JIT_COMPILATION_DISABLED", Text: "PTX JIT compilation is disabled"},
	ErrorUnsupportedExecAffinity:     {Name: "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY", Text: "unsupported execution affinity"},
	ErrorUnsupportedDevsideSync:      {Name: "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC", Text: "device-side sync unsupported"},
	ErrorInvalidSource:               {Name: "CUDA_ERROR_INVALID_SOURCE", Text: "invalid kernel source"},
	ErrorFileNotFound:                {Name: "CUDA_ERROR_FILE_NOT_FOUND", Text: "file not found"},
	ErrorSharedObjectSymbolNotFound:  {Name: "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", Text: "a symbol was not found"},
	ErrorSharedObjectInitFailed:      {Name: "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", Text: "shared object initialization failed"},
	ErrorOperatingSystem:             {Name: "CUDA_ERROR_OPERATING_SYSTEM", Text: "an operating system call failed"},
	ErrorInvalidHandle:               {Name: "CUDA_ERROR_INVALID_HANDLE", Text: "invalid resource handle"},
	ErrorIllegalState:                {Name: "CUDA_ERROR_ILLEGAL_STATE", Text: "the resource is in an illegal state for this operation"},
	ErrorLossyQuery:                  {Name: "CUDA_ERROR_LOSSY_QUERY", Text: "the query would lose information"},
	ErrorNotFound:                    {Name: "CUDA_ERROR_NOT_FOUND", Text: "named symbol not found"},
	ErrorNotReady:                    {Name: "CUDA_ERROR_NOT_READY", Text: "the operation has not completed yet"},
	ErrorIllegalAddress:              {Name: "CUDA_ERROR_ILLEGAL_ADDRESS", Text: "a kernel accessed an illegal memory address"},
	ErrorLaunchOutOfResources:        {Name: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", Text: "too many resources requested for launch"},
	ErrorLaunchTimeout:               {Name: "CUDA_ERROR_LAUNCH_TIMEOUT", Text: "the kernel ran past the watchdog timeout"},
	ErrorLaunchIncompatibleTexturing: {Name: "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING", Text: "incompatible texturing mode"},
	ErrorPeerAccessAlreadyEnabled:    {Name: "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", Text: "peer access already enabled"},
	ErrorPeerAccessNotEnabled:        {Name: "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", Text: "peer access not enabled"},
	ErrorPrimaryContextActive:        {Name: "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE", Text: "the primary context is already active"},
	ErrorContextIsDestroyed:          {Name: "CUDA_ERROR_CONTEXT_IS_DESTROYED", Text: "the context has been destroyed"},
	ErrorAssert:                      {Name: "CUDA_ERROR_ASSERT", Text: "a device-side assert fired"},
	ErrorTooManyPeers:                {Name: "CUDA_ERROR_TOO_MANY_PEERS", Text: "too many peers"},
	ErrorHostMemoryAlreadyRegistered: {Name: "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", Text: "host memory already registered"},
	ErrorHostMemoryNotRegistered:     {Name: "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", Text: "host memory not registered"},
	ErrorHardwareStackError:          {Name: "CUDA_ERROR_HARDWARE_STACK_ERROR", Text: "device hardware stack error"},
	ErrorIllegalInstruction:          {Name: "CUDA_ERROR_ILLEGAL_INSTRUCTION", Text: "a kernel executed an illegal instruction"},
	ErrorMisalignedAddress:           {Name: "CUDA_ERROR_MISALIGNED_ADDRESS", Text: "a kernel made a misaligned memory access"},
	ErrorInvalidAddressSpace:         {Name: "CUDA_ERROR_INVALID_ADDRESS_SPACE", Text: "a kernel used an address in the wrong address space"},
	ErrorInvalidPC:                   {Name: "CUDA_ERROR_INVALID_PC", Text: "invalid program counter"},
	ErrorLaunchFailed:                {Name: "CUDA_ERROR_LAUNCH_FAILED", Text: "the kernel failed while running"},
	ErrorCooperativeLaunchTooLarge:   {Name: "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", Text: "cooperative launch grid too large"},
	ErrorNotPermitted:                {Name: "CUDA_ERROR_NOT_PERMITTED", Text: "operation not permitted"},
	ErrorNotSupported:                {Name: "CUDA_ERROR_NOT_SUPPORTED", Text: "operation not supported"},
	ErrorSystemNotReady:              {Name: "CUDA_ERROR_SYSTEM_NOT_READY", Text: "system not ready"},
	ErrorSystemDriverMismatch:        {Name: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", Text: "driver and kernel module versions differ"},
	ErrorCompatNotSupportedOnDevice:  {Name: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", Text: "forward compatibility not supported on this device"},
	ErrorStreamCaptureUnsupported:    {Name: "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", Text: "operation not permitted while capturing"},
	ErrorStreamCaptureInvalidated:    {Name: "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", Text: "the stream capture was invalidated"},
	ErrorStreamCaptureMerge:          {Name: "CUDA_ERROR_STREAM_CAPTURE_MERGE", Text: "capture would merge two independent captures"},
	ErrorStreamCaptureUnmatched:      {Name: "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", Text: "capture was not begun on this stream"},
	ErrorStreamCaptureUnjoined:       {Name: "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", Text: "capture forked a stream that was not joined"},
	ErrorStreamCaptureIsolation:      {Name: "CUDA_ERROR_STREAM_CAPTURE_ISOLATION", Text: "capture would cross a capture boundary"},
	ErrorStreamCaptureImplicit:       {Name: "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", Text: "capture would depend on the legacy stream"},
	ErrorCapturedEvent:               {Name: "CUDA_ERROR_CAPTURED_EVENT", Text: "the event was recorded in a capture"},
	ErrorStreamCaptureWrongThread:    {Name: "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", Text: "capture ended on a different thread"},
	ErrorTimeout:                     {Name: "CUDA_ERROR_TIMEOUT", Text: "wait timed out"},
	ErrorGraphExecUpdateFailure:      {Name: "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", Text: "graph update not possible"},
	ErrorExternalDevice:              {Name: "CUDA_ERROR_EXTERNAL_DEVICE", Text: "an external device failed"},
	ErrorInvalidClusterSize:          {Name: "CUDA_ERROR_INVALID_CLUSTER_SIZE", Text: "invalid cluster size"},
	ErrorUnknown:                     {Name: "CUDA_ERROR_UNKNOWN", Text: "unknown error"},
}

// builtinName returns the CUDA spelling of r from the built-in table, or
// "CUresult(N)" for a code the table does not know.
func builtinName(r Result) string { return resultTable.Name(r, "CUresult") }

// builtinText returns the built-in description of r, or "" if unknown.
func builtinText(r Result) string { return resultTable.Text(r) }

// String returns the CUDA name of r, e.g. "CUDA_ERROR_OUT_OF_MEMORY".
func (r Result) String() string { return builtinName(r) }

// Error makes a Result usable as an error and as an errors.Is target.
func (r Result) Error() string {
	if t := builtinText(r); t != "" {
		return builtinName(r) + ": " + t
	}
	return builtinName(r)
}
