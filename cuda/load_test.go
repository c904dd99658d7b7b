package cuda

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestMissingRequiredSymbol(t *testing.T) {
	if stub.skip != "" {
		t.Skip("stub libcuda unavailable: " + stub.skip)
	}
	path, err := buildStub(t.TempDir(), "libcuda_nomemset.so", "STUB_OMIT_MEMSETD32")
	if err != nil {
		t.Fatal(err)
	}
	_, err = loadDriver([]string{path})
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("loading a driver without cuMemsetD32_v2: %v, want *LoadError", err)
	}
	if !slices.Equal(le.Missing, []string{"cuMemsetD32_v2"}) || le.Library != path {
		t.Errorf("LoadError = %+v", le)
	}
	if !strings.Contains(err.Error(), "cuMemsetD32_v2") {
		t.Errorf("message does not name the symbol: %q", err)
	}
	if errors.Is(err, ErrNoDriver) {
		t.Errorf("a driver that opened but is too old matched ErrNoDriver")
	}
}

func TestMissingOptionalSymbol(t *testing.T) {
	if stub.skip != "" {
		t.Skip("stub libcuda unavailable: " + stub.skip)
	}
	path, err := buildStub(t.TempDir(), "libcuda_nograph.so", "STUB_OMIT_GRAPH_INSTANTIATE")
	if err != nil {
		t.Fatal(err)
	}
	d, err := loadDriver([]string{path})
	if err != nil {
		t.Fatalf("an optional entry point made loading fail: %v", err)
	}
	if err := d.call(&d.cuInit, 0); err != nil {
		t.Fatal(err)
	}
	useDriver(t, d)
	ctx, err := PrimaryCtxRetain(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Release()
	err = ctx.Do(func() error {
		_, err := GraphInstantiate(0, 0)
		return err
	})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("GraphInstantiate: %v, want *Error", err)
	}
	if e.Call != "cuGraphInstantiateWithFlags" || e.Code != ErrorSharedObjectSymbolNotFound ||
		!strings.Contains(e.Log, "does not export cuGraphInstantiateWithFlags") {
		t.Errorf("error = %+v", e)
	}
}

func TestNoLibrary(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "libcuda.so.1")
	_, err := loadDriver([]string{missing, missing + ".other"})
	if !errors.Is(err, ErrNoDriver) {
		t.Fatalf("loadDriver of missing files: %v, want ErrNoDriver", err)
	}
	var le *LoadError
	if !errors.As(err, &le) || len(le.Tried) != 2 || !strings.Contains(err.Error(), missing) {
		t.Errorf("LoadError = %v", err)
	}
	if _, err := loadDriver(nil); !errors.Is(err, ErrNoDriver) {
		t.Errorf("loadDriver(nil) = %v", err)
	}
}

func TestLibraryCandidates(t *testing.T) {
	t.Setenv(LibraryEnv, "/opt/x/libcuda.so")
	if got := libraryCandidates(); !slices.Equal(got, []string{"/opt/x/libcuda.so"}) {
		t.Errorf("with %s set: %v", LibraryEnv, got)
	}
	t.Setenv(LibraryEnv, "")
	if got := libraryCandidates(); !slices.Equal(got, defaultLibraries) {
		t.Errorf("default candidates: %v", got)
	}
}

// TestSymbolNames guards the versioned names: the ones cuda.h #defines to
// _v2 must be resolved under the _v2 name.
func TestSymbolNames(t *testing.T) {
	useStub(t)
	d := stub.driver
	want := map[*proc]string{
		&d.cuCtxCreate: "cuCtxCreate_v2", &d.cuCtxDestroy: "cuCtxDestroy_v2",
		&d.cuCtxPushCurrent: "cuCtxPushCurrent_v2", &d.cuCtxPopCurrent: "cuCtxPopCurrent_v2",
		&d.cuMemAlloc: "cuMemAlloc_v2", &d.cuMemFree: "cuMemFree_v2", &d.cuMemGetInfo: "cuMemGetInfo_v2",
		&d.cuMemcpyHtoD: "cuMemcpyHtoD_v2", &d.cuMemcpyDtoH: "cuMemcpyDtoH_v2", &d.cuMemcpyDtoD: "cuMemcpyDtoD_v2",
		&d.cuMemcpyHtoDAsync: "cuMemcpyHtoDAsync_v2", &d.cuMemcpyDtoHAsync: "cuMemcpyDtoHAsync_v2",
		&d.cuMemcpyDtoDAsync: "cuMemcpyDtoDAsync_v2", &d.cuMemsetD8: "cuMemsetD8_v2", &d.cuMemsetD32: "cuMemsetD32_v2",
		&d.cuDeviceTotalMem: "cuDeviceTotalMem_v2", &d.cuModuleGetGlobal: "cuModuleGetGlobal_v2",
		&d.cuLinkCreate: "cuLinkCreate_v2", &d.cuLinkAddData: "cuLinkAddData_v2",
		&d.cuStreamDestroy: "cuStreamDestroy_v2", &d.cuEventDestroy: "cuEventDestroy_v2",
		&d.cuDevicePrimaryCtxRelease: "cuDevicePrimaryCtxRelease_v2", &d.cuDevicePrimaryCtxReset: "cuDevicePrimaryCtxReset_v2",
		&d.cuDevicePrimaryCtxSetFlags: "cuDevicePrimaryCtxSetFlags_v2", &d.cuStreamBeginCapture: "cuStreamBeginCapture_v2",
		&d.cuGraphInstantiateWithFlags: "cuGraphInstantiateWithFlags", &d.cuEventElapsedTime: "cuEventElapsedTime_v2",
	}
	for p, name := range want {
		if p.Name != name || p.Addr == 0 {
			t.Errorf("resolved %q (addr %#x), want %q", p.Name, p.Addr, name)
		}
	}
	// Every symbol in the table resolves against the stub.
	for _, s := range d.symbolTable() {
		if s.P.Addr == 0 {
			t.Errorf("%s unresolved against the stub", s.Names[0])
		}
	}
}

// TestDebugLog loads a second instance of the stub with KERN_CUDA_DEBUG set
// and checks what it writes.
func TestDebugLog(t *testing.T) {
	if stub.skip != "" {
		t.Skip("stub libcuda unavailable: " + stub.skip)
	}
	t.Setenv(DebugEnv, "1")
	d, err := loadDriver([]string{stub.path})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	d.logw = &buf
	useDriver(t, d)
	stub.reset()
	setParamSizes(t, "add_one", 8, 8)
	ctx, err := PrimaryCtxRetain(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Release()
	err = ctx.Do(func() error {
		p, err := MemAlloc(256)
		if err != nil {
			return err
		}
		_ = MemFree(p + 1) // fails, and is logged as failing
		fn, err := loadPTX(t, stubPTX).Function("add_one")
		if err != nil {
			return err
		}
		return Launch(fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, 0, new(Args).Slice(p, 3))
	})
	if err != nil {
		t.Fatal(err)
	}
	log := buf.String()
	for _, want := range []string{
		"cuda: cuDevicePrimaryCtxRetain(0x",
		"cuda: cuMemAlloc_v2(0x",
		", 0x100) = CUDA_SUCCESS\n",
		"cuda: cuMemFree_v2(0x",
		") = CUDA_ERROR_INVALID_VALUE\n",
		"cuda: cuLaunchKernel(0x",
		"kernel params [8B:0x",
		", 8B:0x0000000000000003]",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("debug log lacks %q:\n%s", want, log)
		}
	}
}

// TestDebugSync checks KERN_CUDA_DEBUG=sync: a kernel fault is reported by
// the Launch that caused it, and capture is not disturbed.
func TestDebugSync(t *testing.T) {
	if stub.skip != "" {
		t.Skip("stub libcuda unavailable: " + stub.skip)
	}
	t.Setenv(DebugEnv, "sync")
	d, err := loadDriver([]string{stub.path})
	if err != nil {
		t.Fatal(err)
	}
	d.logw = new(bytes.Buffer)
	useDriver(t, d)
	stub.reset()
	ctx, err := PrimaryCtxRetain(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Release()
	err = ctx.Do(func() error {
		fn, err := loadPTX(t, stubPTX).Function("fault")
		if err != nil {
			return err
		}
		err = Launch(fn, [3]uint32{2, 1, 1}, [3]uint32{1, 1, 1}, 0, 0, nil)
		var e *Error
		if !errors.As(err, &e) || e.Code != ErrorIllegalAddress || e.Call != "cuLaunchKernel" ||
			!strings.Contains(e.Log, "KERN_CUDA_DEBUG=sync") || !strings.Contains(e.Log, "grid=[2 1 1]") {
			t.Errorf("faulting launch under sync: %v", err)
		}
		s, err := StreamCreate(StreamNonBlocking)
		if err != nil {
			return err
		}
		if err := StreamBeginCapture(s, CaptureModeGlobal); err != nil {
			return err
		}
		// cuCtxSynchronize would fail during a global capture; Launch must skip it.
		if err := Launch(fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, s, nil); err != nil {
			t.Errorf("launch during capture under sync: %v", err)
		}
		_, err = StreamEndCapture(s)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestParseDebug(t *testing.T) {
	for v, want := range map[string]debugMode{
		"": debugOff, "0": debugOff, "off": debugOff, "false": debugOff,
		"1": debugLog, "true": debugLog, "log": debugLog, "sync": debugSync, " SYNC ": debugSync,
	} {
		if got := parseDebug(v); got != want {
			t.Errorf("parseDebug(%q) = %d, want %d", v, got, want)
		}
	}
}
