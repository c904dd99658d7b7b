package cuda

import (
	"errors"
	"strings"
	"testing"
)

func TestInit(t *testing.T) {
	if gpuTag {
		t.Skip("with -tags gpu, Init loads the real driver (gpu_test.go)")
	}
	if stub.skip != "" {
		t.Skip("stub libcuda unavailable: " + stub.skip)
	}
	if err := Init(); err != nil {
		t.Fatal(err)
	}
	if got := Library(); got != stub.path {
		t.Errorf("Library() = %q, want the stub at %q", got, stub.path)
	}
	// Init through the public path must work on its own, not only via useStub.
	v, err := DriverVersion()
	if err != nil || v != 12040 {
		t.Errorf("DriverVersion() = %d, %v; want 12040", v, err)
	}
	if err := Init(); err != nil {
		t.Errorf("second Init: %v", err)
	}
}

func TestCallsBeforeInitFail(t *testing.T) {
	useDriver(t, nil) // the placeholder answers
	_, err := DeviceCount()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("DeviceCount before Init: %v, want *Error", err)
	}
	if e.Code != ErrorNotInitialized || e.Call != "cuDeviceGetCount" {
		t.Errorf("got %s / %v, want cuDeviceGetCount / CUDA_ERROR_NOT_INITIALIZED", e.Call, e.Code)
	}
	if _, err := MemAlloc(16); !errors.Is(err, ErrorNotInitialized) || !strings.Contains(err.Error(), "cuMemAlloc_v2") {
		t.Errorf("MemAlloc before Init: %v", err)
	}
}

func TestDeviceQueries(t *testing.T) {
	useStub(t)
	n, err := DeviceCount()
	if err != nil || n != 2 {
		t.Fatalf("DeviceCount() = %d, %v; want 2", n, err)
	}
	wantName := []string{"Kern Stub A100", "Kern Stub H100"}
	wantMem := []uint64{40 << 30, 80 << 30}
	wantCC := [][2]int{{8, 0}, {9, 0}}
	for ord := range 2 {
		dev, err := DeviceGet(ord)
		if err != nil {
			t.Fatal(err)
		}
		if name, err := dev.Name(); err != nil || name != wantName[ord] {
			t.Errorf("device %d Name() = %q, %v", ord, name, err)
		}
		if mem, err := dev.TotalMem(); err != nil || mem != wantMem[ord] {
			t.Errorf("device %d TotalMem() = %d, %v", ord, mem, err)
		}
		major, minor, err := dev.ComputeCapability()
		if err != nil || [2]int{major, minor} != wantCC[ord] {
			t.Errorf("device %d ComputeCapability() = %d.%d, %v", ord, major, minor, err)
		}
	}
	if _, err := DeviceGet(7); !errors.Is(err, ErrorInvalidDevice) {
		t.Errorf("DeviceGet(7) = %v, want CUDA_ERROR_INVALID_DEVICE", err)
	}
}

// TestDeviceAttributes checks the numeric attribute constants: the stub
// answers each cuda.h attribute number with a distinct value, so a wrong
// constant reads some other attribute's value or fails.
func TestDeviceAttributes(t *testing.T) {
	useStub(t)
	dev, err := DeviceGet(1)
	if err != nil {
		t.Fatal(err)
	}
	want := map[DeviceAttribute]int{
		AttrMaxThreadsPerBlock:            1024,
		AttrMaxBlockDimZ:                  64,
		AttrMaxGridDimX:                   2147483647,
		AttrMaxGridDimY:                   65535,
		AttrMaxSharedMemoryPerBlock:       49152,
		AttrTotalConstantMemory:           65536,
		AttrWarpSize:                      32,
		AttrMaxRegistersPerBlock:          65536,
		AttrClockRate:                     1755000,
		AttrMultiprocessorCount:           132,
		AttrMemoryClockRate:               2619000,
		AttrGlobalMemoryBusWidth:          5120,
		AttrL2CacheSize:                   52428800,
		AttrMaxThreadsPerMultiprocessor:   2048,
		AttrComputeCapabilityMajor:        9,
		AttrComputeCapabilityMinor:        0,
		AttrMaxSharedMemoryPerMultiproc:   233472,
		AttrMaxRegistersPerMultiprocessor: 65536,
		AttrMaxSharedMemoryPerBlockOptin:  232448,
		AttrMaxBlocksPerMultiprocessor:    32,
		AttrReservedSharedMemoryPerBlock:  1024,
	}
	for attr, v := range want {
		got, err := dev.Attribute(attr)
		if err != nil || got != v {
			t.Errorf("Attribute(%v = %d) = %d, %v; want %d", attr, int(attr), got, err, v)
		}
	}
	_, err = dev.Attribute(DeviceAttribute(9999))
	var e *Error
	if !errors.As(err, &e) || e.Code != ErrorInvalidValue || e.Call != "cuDeviceGetAttribute" {
		t.Errorf("Attribute(9999) = %v, want cuDeviceGetAttribute CUDA_ERROR_INVALID_VALUE", err)
	}
	if s := DeviceAttribute(9999).String(); s != "DeviceAttribute(9999)" {
		t.Errorf("String of unknown attribute = %q", s)
	}
}

func TestDeviceInfo(t *testing.T) {
	useStub(t)
	info, err := Device(0).Info()
	if err != nil {
		t.Fatal(err)
	}
	want := DeviceInfo{
		Name: "Kern Stub A100", Major: 8, Minor: 0, TotalMem: 40 << 30,
		Multiprocessors: 108, WarpSize: 32, MaxThreadsPerBlock: 1024,
		MaxBlockDim: [3]int{1024, 1024, 64}, MaxGridDim: [3]int{2147483647, 65535, 65535},
		SharedPerBlock: 49152, SharedPerBlockOptin: 166912, SharedPerMultiprocessor: 167936,
		RegistersPerBlock: 65536, MaxThreadsPerMultiprocessor: 2048, L2CacheSize: 41943040,
		ClockRateKHz: 1410000, MemoryClockRateKHz: 1215000, MemoryBusWidth: 5120,
	}
	if info != want {
		t.Errorf("Info() =\n%+v\nwant\n%+v", info, want)
	}
}

func TestErrorMapping(t *testing.T) {
	ctx := stubContext(t)
	do(t, ctx, func() error {
		// A code the stub knows: name and text come from the driver.
		stub.failNext("cuMemAlloc_v2", int32(ErrorOutOfMemory))
		_, err := MemAlloc(64)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("MemAlloc: %v, want *Error", err)
		}
		want := Error{Call: "cuMemAlloc_v2", Code: ErrorOutOfMemory, Name: "CUDA_ERROR_OUT_OF_MEMORY", Text: "out of memory (stub)"}
		if *e != want {
			t.Errorf("error = %+v, want %+v", *e, want)
		}
		if msg := e.Error(); msg != "cuda: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory (stub)" {
			t.Errorf("message = %q", msg)
		}
		if !errors.Is(err, ErrorOutOfMemory) || errors.Is(err, ErrorInvalidValue) {
			t.Errorf("errors.Is does not match the code")
		}

		// A code the stub's cuGetErrorName rejects: the built-in table answers.
		stub.failNext("cuMemsetD8_v2", int32(ErrorNVLinkUncorrectable))
		err = MemsetD8(0, 0, 0)
		if !errors.As(err, &e) || e.Name != "CUDA_ERROR_NVLINK_UNCORRECTABLE" || e.Text != builtinText(ErrorNVLinkUncorrectable) {
			t.Errorf("fallback: %+v", err)
		}

		// A code nobody knows.
		stub.failNext("cuCtxSynchronize", 4242)
		err = CtxSynchronize()
		if !errors.As(err, &e) || e.Name != "CUresult(4242)" || e.Code != 4242 {
			t.Errorf("unknown code: %+v", err)
		}
		return nil
	})
	if got := ErrorName(ErrorInvalidPTX); got != "CUDA_ERROR_INVALID_PTX" {
		t.Errorf("ErrorName = %q", got)
	}
	if got := ErrorString(ErrorInvalidPTX); got != "a PTX JIT compilation failed (stub)" {
		t.Errorf("ErrorString = %q, want the driver's text", got)
	}
	if got := ErrorString(ErrorTimeout); got != builtinText(ErrorTimeout) || got == "" {
		t.Errorf("ErrorString fallback = %q", got)
	}
}

func TestResultTable(t *testing.T) {
	seen := map[string]Result{}
	for r, info := range resultTable {
		if !strings.HasPrefix(info.Name, "CUDA_") || info.Text == "" {
			t.Errorf("%d: bad entry %+v", r, info)
		}
		if prev, dup := seen[info.Name]; dup {
			t.Errorf("%s used by %d and %d", info.Name, prev, r)
		}
		seen[info.Name] = r
	}
	// Spot-check values against cuda.h.
	for r, want := range map[Result]string{
		2: "CUDA_ERROR_OUT_OF_MEMORY", 201: "CUDA_ERROR_INVALID_CONTEXT", 218: "CUDA_ERROR_INVALID_PTX",
		600: "CUDA_ERROR_NOT_READY", 700: "CUDA_ERROR_ILLEGAL_ADDRESS", 719: "CUDA_ERROR_LAUNCH_FAILED",
		908: "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", 999: "CUDA_ERROR_UNKNOWN",
	} {
		if r.String() != want {
			t.Errorf("Result(%d) = %s, want %s", int(r), r, want)
		}
	}
	if ErrorNotReady.Error() != "CUDA_ERROR_NOT_READY: the operation has not completed yet" {
		t.Errorf("Result.Error() = %q", ErrorNotReady.Error())
	}
}
