package cuda

import "github.com/gokern/kern/internal/dynlib"

// proc is one entry point (dynlib.Proc): the name it was found under and
// its address, or 0 when the library does not export it.
type proc = dynlib.Proc

// procs holds every entry point this package calls. Field names are the
// unversioned API names; the table in symbolTable says which exported name
// (usually a _v2 one) each resolves to.
type procs struct {
	cuInit, cuDriverGetVersion, cuGetErrorName, cuGetErrorString proc

	cuDeviceGet, cuDeviceGetCount, cuDeviceGetName, cuDeviceGetAttribute, cuDeviceTotalMem proc

	cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxReset, cuDevicePrimaryCtxSetFlags proc
	cuCtxCreate, cuCtxDestroy                                                                                proc
	cuCtxSetCurrent, cuCtxGetCurrent, cuCtxPushCurrent, cuCtxPopCurrent, cuCtxSynchronize, cuCtxGetDevice    proc

	cuModuleLoadDataEx, cuModuleUnload, cuModuleGetFunction, cuModuleGetGlobal proc
	cuLinkCreate, cuLinkAddData, cuLinkComplete, cuLinkDestroy                 proc

	cuFuncGetAttribute, cuFuncSetAttribute, cuLaunchKernel, cuLaunchKernelEx      proc
	cuOccupancyMaxActiveBlocksPerMultiprocessor, cuOccupancyMaxPotentialBlockSize proc

	cuMemAlloc, cuMemFree, cuMemAllocAsync, cuMemFreeAsync, cuMemGetInfo, cuMemHostAlloc, cuMemFreeHost proc
	cuMemcpyHtoD, cuMemcpyDtoH, cuMemcpyDtoD, cuMemcpyHtoDAsync, cuMemcpyDtoHAsync, cuMemcpyDtoDAsync   proc
	cuMemsetD8, cuMemsetD32, cuMemsetD8Async, cuMemsetD32Async                                          proc

	cuStreamCreate, cuStreamDestroy, cuStreamSynchronize, cuStreamQuery, cuStreamWaitEvent proc
	cuEventCreate, cuEventRecord, cuEventSynchronize, cuEventQuery, cuEventElapsedTime     proc
	cuEventDestroy                                                                         proc

	cuStreamBeginCapture, cuStreamEndCapture, cuStreamIsCapturing                  proc
	cuGraphInstantiateWithFlags, cuGraphLaunch, cuGraphDestroy, cuGraphExecDestroy proc

	cuTensorMapEncodeTiled proc
}

// symbolTable says how each proc is found: the exported names to try, in
// order, and whether loading fails without it (dynlib.Req, dynlib.Opt).
//
// Versioned names matter: cuda.h #defines cuMemAlloc to cuMemAlloc_v2 and
// so on, and the unversioned export is the old ABI kept for binaries built
// against CUDA 3.x (32-bit sizes), so calling it with 64-bit sizes is
// wrong. Where a newer version has the same signature (cuEventElapsedTime_v2
// in CUDA 12.8+) it is tried first.
func (d *driver) symbolTable() []dynlib.Symbol {
	req, opt := dynlib.Req, dynlib.Opt
	return []dynlib.Symbol{
		req(&d.cuInit, "cuInit"),
		req(&d.cuDriverGetVersion, "cuDriverGetVersion"),
		req(&d.cuGetErrorName, "cuGetErrorName"),
		req(&d.cuGetErrorString, "cuGetErrorString"),

		req(&d.cuDeviceGet, "cuDeviceGet"),
		req(&d.cuDeviceGetCount, "cuDeviceGetCount"),
		req(&d.cuDeviceGetName, "cuDeviceGetName"),
		req(&d.cuDeviceGetAttribute, "cuDeviceGetAttribute"),
		req(&d.cuDeviceTotalMem, "cuDeviceTotalMem_v2"),

		req(&d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
		req(&d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
		req(&d.cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset_v2"),
		req(&d.cuDevicePrimaryCtxSetFlags, "cuDevicePrimaryCtxSetFlags_v2"),
		opt(&d.cuCtxCreate, "cuCtxCreate_v2"),
		opt(&d.cuCtxDestroy, "cuCtxDestroy_v2"),
		req(&d.cuCtxSetCurrent, "cuCtxSetCurrent"),
		req(&d.cuCtxGetCurrent, "cuCtxGetCurrent"),
		req(&d.cuCtxPushCurrent, "cuCtxPushCurrent_v2"),
		req(&d.cuCtxPopCurrent, "cuCtxPopCurrent_v2"),
		req(&d.cuCtxSynchronize, "cuCtxSynchronize"),
		req(&d.cuCtxGetDevice, "cuCtxGetDevice"),

		req(&d.cuModuleLoadDataEx, "cuModuleLoadDataEx"),
		req(&d.cuModuleUnload, "cuModuleUnload"),
		req(&d.cuModuleGetFunction, "cuModuleGetFunction"),
		req(&d.cuModuleGetGlobal, "cuModuleGetGlobal_v2"),
		opt(&d.cuLinkCreate, "cuLinkCreate_v2"),
		opt(&d.cuLinkAddData, "cuLinkAddData_v2"),
		opt(&d.cuLinkComplete, "cuLinkComplete"),
		opt(&d.cuLinkDestroy, "cuLinkDestroy"),

		req(&d.cuFuncGetAttribute, "cuFuncGetAttribute"),
		req(&d.cuFuncSetAttribute, "cuFuncSetAttribute"),
		req(&d.cuLaunchKernel, "cuLaunchKernel"),
		opt(&d.cuLaunchKernelEx, "cuLaunchKernelEx"), // CUDA 11.8+
		req(&d.cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor"),
		req(&d.cuOccupancyMaxPotentialBlockSize, "cuOccupancyMaxPotentialBlockSize"),

		req(&d.cuMemAlloc, "cuMemAlloc_v2"),
		req(&d.cuMemFree, "cuMemFree_v2"),
		opt(&d.cuMemAllocAsync, "cuMemAllocAsync"),
		opt(&d.cuMemFreeAsync, "cuMemFreeAsync"),
		req(&d.cuMemGetInfo, "cuMemGetInfo_v2"),
		req(&d.cuMemHostAlloc, "cuMemHostAlloc"),
		req(&d.cuMemFreeHost, "cuMemFreeHost"),
		req(&d.cuMemcpyHtoD, "cuMemcpyHtoD_v2"),
		req(&d.cuMemcpyDtoH, "cuMemcpyDtoH_v2"),
		req(&d.cuMemcpyDtoD, "cuMemcpyDtoD_v2"),
		req(&d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
		req(&d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
		req(&d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
		req(&d.cuMemsetD8, "cuMemsetD8_v2"),
		req(&d.cuMemsetD32, "cuMemsetD32_v2"),
		opt(&d.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled"), // CUDA 12.0+
		req(&d.cuMemsetD8Async, "cuMemsetD8Async"),
		req(&d.cuMemsetD32Async, "cuMemsetD32Async"),

		req(&d.cuStreamCreate, "cuStreamCreate"),
		req(&d.cuStreamDestroy, "cuStreamDestroy_v2"),
		req(&d.cuStreamSynchronize, "cuStreamSynchronize"),
		req(&d.cuStreamQuery, "cuStreamQuery"),
		req(&d.cuStreamWaitEvent, "cuStreamWaitEvent"),
		req(&d.cuEventCreate, "cuEventCreate"),
		req(&d.cuEventRecord, "cuEventRecord"),
		req(&d.cuEventSynchronize, "cuEventSynchronize"),
		req(&d.cuEventQuery, "cuEventQuery"),
		req(&d.cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
		req(&d.cuEventDestroy, "cuEventDestroy_v2"),

		opt(&d.cuStreamBeginCapture, "cuStreamBeginCapture_v2"),
		opt(&d.cuStreamEndCapture, "cuStreamEndCapture"),
		opt(&d.cuStreamIsCapturing, "cuStreamIsCapturing"),
		opt(&d.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags"),
		opt(&d.cuGraphLaunch, "cuGraphLaunch"),
		opt(&d.cuGraphDestroy, "cuGraphDestroy"),
		opt(&d.cuGraphExecDestroy, "cuGraphExecDestroy"),
	}
}

// resolve looks every symbol up through lookup (which returns 0 for a
// missing name) and returns the required ones that are missing, by their
// preferred name. Missing optional procs keep addr 0 and fail when called.
func (d *driver) resolve(lookup func(name string) uintptr) (missing []string) {
	return dynlib.Resolve(d.symbolTable(), lookup)
}
