package cuda

import "strconv"

// DeviceAttribute is a CUdevice_attribute, queried with Device.Attribute.
// The values are the driver ABI from cuda.h.
type DeviceAttribute int32

const (
	AttrMaxThreadsPerBlock              DeviceAttribute = 1
	AttrMaxBlockDimX                    DeviceAttribute = 2
	AttrMaxBlockDimY                    DeviceAttribute = 3
	AttrMaxBlockDimZ                    DeviceAttribute = 4
	AttrMaxGridDimX                     DeviceAttribute = 5
	AttrMaxGridDimY                     DeviceAttribute = 6
	AttrMaxGridDimZ                     DeviceAttribute = 7
	AttrMaxSharedMemoryPerBlock         DeviceAttribute = 8 // bytes, without opt-in
	AttrTotalConstantMemory             DeviceAttribute = 9
	AttrWarpSize                        DeviceAttribute = 10
	AttrMaxPitch                        DeviceAttribute = 11
	AttrMaxRegistersPerBlock            DeviceAttribute = 12
	AttrClockRate                       DeviceAttribute = 13 // kHz
	AttrTextureAlignment                DeviceAttribute = 14
	AttrMultiprocessorCount             DeviceAttribute = 16
	AttrKernelExecTimeout               DeviceAttribute = 17
	AttrIntegrated                      DeviceAttribute = 18
	AttrCanMapHostMemory                DeviceAttribute = 19
	AttrComputeMode                     DeviceAttribute = 20
	AttrConcurrentKernels               DeviceAttribute = 31
	AttrECCEnabled                      DeviceAttribute = 32
	AttrPCIBusID                        DeviceAttribute = 33
	AttrPCIDeviceID                     DeviceAttribute = 34
	AttrTCCDriver                       DeviceAttribute = 35
	AttrMemoryClockRate                 DeviceAttribute = 36 // kHz
	AttrGlobalMemoryBusWidth            DeviceAttribute = 37 // bits
	AttrL2CacheSize                     DeviceAttribute = 38 // bytes
	AttrMaxThreadsPerMultiprocessor     DeviceAttribute = 39
	AttrAsyncEngineCount                DeviceAttribute = 40
	AttrUnifiedAddressing               DeviceAttribute = 41
	AttrPCIDomainID                     DeviceAttribute = 50
	AttrComputeCapabilityMajor          DeviceAttribute = 75
	AttrComputeCapabilityMinor          DeviceAttribute = 76
	AttrStreamPrioritiesSupported       DeviceAttribute = 78
	AttrGlobalL1CacheSupported          DeviceAttribute = 79
	AttrLocalL1CacheSupported           DeviceAttribute = 80
	AttrMaxSharedMemoryPerMultiproc     DeviceAttribute = 81 // bytes
	AttrMaxRegistersPerMultiprocessor   DeviceAttribute = 82
	AttrManagedMemory                   DeviceAttribute = 83
	AttrMultiGPUBoard                   DeviceAttribute = 84
	AttrSingleToDoublePrecisionPerfRate DeviceAttribute = 87
	AttrPageableMemoryAccess            DeviceAttribute = 88
	AttrConcurrentManagedAccess         DeviceAttribute = 89
	AttrComputePreemptionSupported      DeviceAttribute = 90
	AttrCooperativeLaunch               DeviceAttribute = 95
	AttrMaxSharedMemoryPerBlockOptin    DeviceAttribute = 97 // bytes, with cuFuncSetAttribute opt-in
	AttrMaxBlocksPerMultiprocessor      DeviceAttribute = 106
	AttrMaxPersistingL2CacheSize        DeviceAttribute = 108
	AttrReservedSharedMemoryPerBlock    DeviceAttribute = 111 // bytes the system reserves per block
	AttrMemoryPoolsSupported            DeviceAttribute = 115
)

var attrNames = map[DeviceAttribute]string{
	AttrMaxThreadsPerBlock:              "MAX_THREADS_PER_BLOCK",
	AttrMaxBlockDimX:                    "MAX_BLOCK_DIM_X",
	AttrMaxBlockDimY:                    "MAX_BLOCK_DIM_Y",
	AttrMaxBlockDimZ:                    "MAX_BLOCK_DIM_Z",
	AttrMaxGridDimX:                     "MAX_GRID_DIM_X",
	AttrMaxGridDimY:                     "MAX_GRID_DIM_Y",
	AttrMaxGridDimZ:                     "MAX_GRID_DIM_Z",
	AttrMaxSharedMemoryPerBlock:         "MAX_SHARED_MEMORY_PER_BLOCK",
	AttrTotalConstantMemory:             "TOTAL_CONSTANT_MEMORY",
	AttrWarpSize:                        "WARP_SIZE",
	AttrMaxPitch:                        "MAX_PITCH",
	AttrMaxRegistersPerBlock:            "MAX_REGISTERS_PER_BLOCK",
	AttrClockRate:                       "CLOCK_RATE",
	AttrTextureAlignment:                "TEXTURE_ALIGNMENT",
	AttrMultiprocessorCount:             "MULTIPROCESSOR_COUNT",
	AttrKernelExecTimeout:               "KERNEL_EXEC_TIMEOUT",
	AttrIntegrated:                      "INTEGRATED",
	AttrCanMapHostMemory:                "CAN_MAP_HOST_MEMORY",
	AttrComputeMode:                     "COMPUTE_MODE",
	AttrConcurrentKernels:               "CONCURRENT_KERNELS",
	AttrECCEnabled:                      "ECC_ENABLED",
	AttrPCIBusID:                        "PCI_BUS_ID",
	AttrPCIDeviceID:                     "PCI_DEVICE_ID",
	AttrTCCDriver:                       "TCC_DRIVER",
	AttrMemoryClockRate:                 "MEMORY_CLOCK_RATE",
	AttrGlobalMemoryBusWidth:            "GLOBAL_MEMORY_BUS_WIDTH",
	AttrL2CacheSize:                     "L2_CACHE_SIZE",
	AttrMaxThreadsPerMultiprocessor:     "MAX_THREADS_PER_MULTIPROCESSOR",
	AttrAsyncEngineCount:                "ASYNC_ENGINE_COUNT",
	AttrUnifiedAddressing:               "UNIFIED_ADDRESSING",
	AttrPCIDomainID:                     "PCI_DOMAIN_ID",
	AttrComputeCapabilityMajor:          "COMPUTE_CAPABILITY_MAJOR",
	AttrComputeCapabilityMinor:          "COMPUTE_CAPABILITY_MINOR",
	AttrStreamPrioritiesSupported:       "STREAM_PRIORITIES_SUPPORTED",
	AttrGlobalL1CacheSupported:          "GLOBAL_L1_CACHE_SUPPORTED",
	AttrLocalL1CacheSupported:           "LOCAL_L1_CACHE_SUPPORTED",
	AttrMaxSharedMemoryPerMultiproc:     "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
	AttrMaxRegistersPerMultiprocessor:   "MAX_REGISTERS_PER_MULTIPROCESSOR",
	AttrManagedMemory:                   "MANAGED_MEMORY",
	AttrMultiGPUBoard:                   "MULTI_GPU_BOARD",
	AttrSingleToDoublePrecisionPerfRate: "SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO",
	AttrPageableMemoryAccess:            "PAGEABLE_MEMORY_ACCESS",
	AttrConcurrentManagedAccess:         "CONCURRENT_MANAGED_ACCESS",
	AttrComputePreemptionSupported:      "COMPUTE_PREEMPTION_SUPPORTED",
	AttrCooperativeLaunch:               "COOPERATIVE_LAUNCH",
	AttrMaxSharedMemoryPerBlockOptin:    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
	AttrMaxBlocksPerMultiprocessor:      "MAX_BLOCKS_PER_MULTIPROCESSOR",
	AttrMaxPersistingL2CacheSize:        "MAX_PERSISTING_L2_CACHE_SIZE",
	AttrReservedSharedMemoryPerBlock:    "RESERVED_SHARED_MEMORY_PER_BLOCK",
	AttrMemoryPoolsSupported:            "MEMORY_POOLS_SUPPORTED",
}

// String returns the cuda.h name without its CU_DEVICE_ATTRIBUTE_ prefix.
func (a DeviceAttribute) String() string {
	if n, ok := attrNames[a]; ok {
		return n
	}
	return "DeviceAttribute(" + strconv.Itoa(int(a)) + ")"
}

// FunctionAttribute is a CUfunction_attribute, for Function.Attribute and
// Function.SetAttribute.
type FunctionAttribute int32

const (
	FuncAttrMaxThreadsPerBlock            FunctionAttribute = 0 // for this kernel, given its registers
	FuncAttrSharedSizeBytes               FunctionAttribute = 1 // static shared memory
	FuncAttrConstSizeBytes                FunctionAttribute = 2
	FuncAttrLocalSizeBytes                FunctionAttribute = 3 // local memory per thread (spills)
	FuncAttrNumRegs                       FunctionAttribute = 4
	FuncAttrPTXVersion                    FunctionAttribute = 5 // major*10+minor
	FuncAttrBinaryVersion                 FunctionAttribute = 6 // major*10+minor
	FuncAttrCacheModeCA                   FunctionAttribute = 7
	FuncAttrMaxDynamicSharedSizeBytes     FunctionAttribute = 8 // settable: opt in above 48 KiB
	FuncAttrPreferredSharedMemoryCarveout FunctionAttribute = 9 // settable: percent of L1 as shared, -1 = default
)

var funcAttrNames = [...]string{
	"MAX_THREADS_PER_BLOCK", "SHARED_SIZE_BYTES", "CONST_SIZE_BYTES", "LOCAL_SIZE_BYTES", "NUM_REGS",
	"PTX_VERSION", "BINARY_VERSION", "CACHE_MODE_CA", "MAX_DYNAMIC_SHARED_SIZE_BYTES",
	"PREFERRED_SHARED_MEMORY_CARVEOUT",
}

// String returns the cuda.h name without its CU_FUNC_ATTRIBUTE_ prefix.
func (a FunctionAttribute) String() string {
	if a >= 0 && int(a) < len(funcAttrNames) {
		return funcAttrNames[a]
	}
	return "FunctionAttribute(" + strconv.Itoa(int(a)) + ")"
}
