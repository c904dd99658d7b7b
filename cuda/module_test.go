package cuda

import (
	"errors"
	"strings"
	"testing"
)

// TestJITErrorLog checks that the JIT compiler's error log, which the
// driver only writes into the buffers passed as CU_JIT_ERROR_LOG_BUFFER,
// ends up in the returned error.
func TestJITErrorLog(t *testing.T) {
	ctx := stubContext(t)
	ptx := ".version 8.0\n.target sm_80\nSYNTAX_ERROR here\n"
	var err error
	do(t, ctx, func() error {
		_, err = LoadModuleData([]byte(ptx))
		return nil
	})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("LoadModuleData of bad PTX: %v, want *Error", err)
	}
	if e.Call != "cuModuleLoadDataEx" || e.Code != ErrorInvalidPTX || !errors.Is(err, ErrorInvalidPTX) {
		t.Errorf("got %s %v", e.Call, e.Code)
	}
	if !strings.Contains(e.Log, "line 3; error   : syntax error at 'SYNTAX_ERROR'") {
		t.Errorf("Log = %q, want the JIT's message with the line number", e.Log)
	}
	msg := err.Error()
	for _, want := range []string{"cuModuleLoadDataEx", "CUDA_ERROR_INVALID_PTX (218)", "(stub)", "line 3", "Ptx assembly aborted"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error message lacks %q:\n%s", want, msg)
		}
	}
}

func TestJITInfoLog(t *testing.T) {
	ctx := stubContext(t)
	do(t, ctx, func() error {
		m, info, err := LoadModuleDataEx([]byte(stubPTX), JITOptions{Verbose: true})
		if err != nil {
			return err
		}
		defer m.Unload()
		if info != "stub: compiled 3 entries, 2 globals\n" {
			t.Errorf("verbose info log = %q", info)
		}
		_, info, err = LoadModuleDataEx([]byte(stubPTX), JITOptions{})
		if err != nil || info != "" {
			t.Errorf("quiet load: info %q, %v", info, err)
		}
		// A NUL-terminated image is passed as is.
		_, err = LoadModuleData(append([]byte(stubPTX), 0))
		return err
	})
}

func TestModuleFunctionsAndGlobals(t *testing.T) {
	ctx := stubContext(t)
	do(t, ctx, func() error {
		m := loadPTX(t, stubPTX)
		for _, name := range []string{"add_one", "fault", "abi"} {
			if f, err := m.Function(name); err != nil || f == 0 {
				t.Errorf("Function(%q) = %#x, %v", name, f, err)
			}
		}
		_, err := m.Function("nope")
		var e *Error
		if !errors.As(err, &e) || e.Code != ErrorNotFound || !strings.Contains(e.Error(), "kernel nope") {
			t.Errorf("Function(nope) = %v", err)
		}

		table, size, err := m.Global("table")
		if err != nil || size != 64 || table == 0 {
			t.Errorf("Global(table) = %#x, %d, %v; want 64 bytes", table, size, err)
		}
		counter, size, err := m.Global("counter")
		if err != nil || size != 4 {
			t.Errorf("Global(counter) = %#x, %d, %v; want 4 bytes", counter, size, err)
		}
		if err := CopyHtoD(counter, []uint32{41}); err != nil {
			return err
		}
		got := []uint32{0}
		if err := CopyDtoH(got, counter); err != nil || got[0] != 41 {
			t.Errorf("global round trip: %d, %v", got[0], err)
		}
		if _, _, err := m.Global("missing"); !errors.Is(err, ErrorNotFound) || !strings.Contains(err.Error(), "global missing") {
			t.Errorf("Global(missing) = %v", err)
		}

		if err := m.Unload(); err != nil {
			return err
		}
		if _, err := m.Function("add_one"); !errors.Is(err, ErrorInvalidHandle) {
			t.Errorf("Function after Unload: %v", err)
		}
		return nil
	})
}

func TestFunctionAttributes(t *testing.T) {
	ctx := stubContext(t)
	do(t, ctx, func() error {
		fn, err := loadPTX(t, stubPTX).Function("add_one")
		if err != nil {
			return err
		}
		for attr, want := range map[FunctionAttribute]int{
			FuncAttrNumRegs: 32, FuncAttrMaxThreadsPerBlock: 1024, FuncAttrSharedSizeBytes: 0,
			FuncAttrMaxDynamicSharedSizeBytes: 49152, FuncAttrPreferredSharedMemoryCarveout: -1,
		} {
			if got, err := fn.Attribute(attr); err != nil || got != want {
				t.Errorf("Attribute(%v) = %d, %v; want %d", attr, got, err, want)
			}
		}
		if err := fn.SetAttribute(FuncAttrMaxDynamicSharedSizeBytes, 100000); err != nil {
			return err
		}
		if got, _ := fn.Attribute(FuncAttrMaxDynamicSharedSizeBytes); got != 100000 {
			t.Errorf("after SetAttribute: %d", got)
		}
		if err := fn.SetAttribute(FuncAttrMaxDynamicSharedSizeBytes, 166913); !errors.Is(err, ErrorInvalidValue) {
			t.Errorf("above the opt-in limit: %v", err)
		}
		if err := fn.SetAttribute(FuncAttrPreferredSharedMemoryCarveout, 50); err != nil {
			return err
		}
		if got, _ := fn.Attribute(FuncAttrPreferredSharedMemoryCarveout); got != 50 {
			t.Errorf("carveout = %d", got)
		}
		if err := fn.SetAttribute(FuncAttrPreferredSharedMemoryCarveout, -1); err != nil {
			t.Errorf("carveout -1 (default) rejected: %v", err)
		}
		if FuncAttrNumRegs.String() != "NUM_REGS" || FunctionAttribute(42).String() != "FunctionAttribute(42)" {
			t.Errorf("FunctionAttribute.String")
		}
		return nil
	})
}

func TestOccupancy(t *testing.T) {
	ctx := stubContext(t)
	do(t, ctx, func() error {
		fn, err := loadPTX(t, stubPTX).Function("add_one")
		if err != nil {
			return err
		}
		for _, c := range []struct {
			block int
			dyn   uint64
			want  int
		}{{256, 0, 8}, {1024, 0, 2}, {128, 100000, 1}, {64, 0, 32}} {
			got, err := OccupancyMaxActiveBlocksPerMultiprocessor(fn, c.block, c.dyn)
			if err != nil || got != c.want {
				t.Errorf("occupancy(block %d, dyn %d) = %d, %v; want %d", c.block, c.dyn, got, err, c.want)
			}
		}
		grid, block, err := OccupancyMaxPotentialBlockSize(fn, 0, 256)
		if err != nil || grid != 108*8 || block != 256 {
			t.Errorf("OccupancyMaxPotentialBlockSize = %d, %d, %v; want 864, 256", grid, block, err)
		}
		return nil
	})
}

func TestLinker(t *testing.T) {
	ctx := stubContext(t)
	do(t, ctx, func() error {
		l, err := NewLinker(JITOptions{})
		if err != nil {
			return err
		}
		defer l.Destroy()
		if err := l.AddPTX("a.ptx", []byte(".visible .entry first() { ret; }")); err != nil {
			return err
		}
		if err := l.AddPTX("b.ptx", []byte(".visible .entry second() { ret; }")); err != nil {
			return err
		}
		image, err := l.Complete()
		if err != nil {
			return err
		}
		m, err := LoadModuleData(image)
		if err != nil {
			return err
		}
		for _, name := range []string{"first", "second"} {
			if _, err := m.Function(name); err != nil {
				t.Errorf("linked module lacks %s: %v", name, err)
			}
		}
		err = l.AddPTX("bad.ptx", []byte("SYNTAX_ERROR"))
		var e *Error
		if !errors.As(err, &e) || e.Code != ErrorInvalidPTX || !strings.Contains(e.Log, "syntax error") {
			t.Errorf("linking bad PTX: %v", err)
		}
		return nil
	})
}
