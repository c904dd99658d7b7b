package cuda

// Typed handles. Each is the driver's opaque value (a pointer-sized handle,
// CUdevice's int, or CUdeviceptr's 64-bit address); the zero value is the
// driver's NULL, which for Stream means the default stream.
type (
	// Device is a CUdevice: an ordinal-derived device handle.
	Device int32
	// Context is a CUcontext.
	Context uintptr
	// Module is a CUmodule: loaded PTX or cubin.
	Module uintptr
	// Function is a CUfunction: one kernel entry of a Module.
	Function uintptr
	// Stream is a CUstream. The zero Stream is the context's default
	// (legacy) stream.
	Stream uintptr
	// Event is a CUevent.
	Event uintptr
	// Graph is a CUgraph, the result of a stream capture.
	Graph uintptr
	// GraphExec is a CUgraphExec, an instantiated Graph ready to launch.
	GraphExec uintptr
	// DevicePtr is a CUdeviceptr: an address in the device's (unified)
	// virtual address space. Offsetting it with + is fine.
	DevicePtr uint64
)

// Special streams (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD).
const (
	StreamLegacy    Stream = 0x1
	StreamPerThread Stream = 0x2
)

// StreamFlags for StreamCreate (CUstream_flags).
type StreamFlags uint32

const (
	StreamDefault     StreamFlags = 0x0
	StreamNonBlocking StreamFlags = 0x1 // does not synchronize with the legacy stream
)

// EventFlags for EventCreate (CUevent_flags).
type EventFlags uint32

const (
	EventDefault       EventFlags = 0x0
	EventBlockingSync  EventFlags = 0x1 // Synchronize blocks instead of spinning
	EventDisableTiming EventFlags = 0x2 // cheaper; EventElapsedTime fails
)

// ContextFlags for PrimaryCtxSetFlags and CtxCreate (CUctx_flags).
type ContextFlags uint32

const (
	CtxSchedAuto         ContextFlags = 0x00
	CtxSchedSpin         ContextFlags = 0x01
	CtxSchedYield        ContextFlags = 0x02
	CtxSchedBlockingSync ContextFlags = 0x04
	CtxMapHost           ContextFlags = 0x08
	CtxLmemResizeToMax   ContextFlags = 0x10
)

// HostAllocFlags for MemHostAlloc (CU_MEMHOSTALLOC_*).
type HostAllocFlags uint32

const (
	HostAllocDefault       HostAllocFlags = 0x0
	HostAllocPortable      HostAllocFlags = 0x1 // pinned for every context
	HostAllocDeviceMap     HostAllocFlags = 0x2 // mapped into the device address space
	HostAllocWriteCombined HostAllocFlags = 0x4 // fast host writes, slow host reads
)

// CaptureMode for StreamBeginCapture (CUstreamCaptureMode).
type CaptureMode uint32

const (
	CaptureModeGlobal      CaptureMode = 0
	CaptureModeThreadLocal CaptureMode = 1
	CaptureModeRelaxed     CaptureMode = 2
)

// CaptureStatus from StreamIsCapturing (CUstreamCaptureStatus).
type CaptureStatus uint32

const (
	CaptureStatusNone        CaptureStatus = 0
	CaptureStatusActive      CaptureStatus = 1
	CaptureStatusInvalidated CaptureStatus = 2
)

// GraphInstantiateFlags for GraphInstantiate (CUgraphInstantiate_flags).
type GraphInstantiateFlags uint64

const (
	GraphInstantiateAutoFreeOnLaunch GraphInstantiateFlags = 1
	GraphInstantiateUpload           GraphInstantiateFlags = 2
	GraphInstantiateDeviceLaunch     GraphInstantiateFlags = 4
	GraphInstantiateUseNodePriority  GraphInstantiateFlags = 8
)
