package cuda

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
)

// abiCase is one kernel parameter: how to append it and the bytes the
// kernel must receive, encoded independently of Args.
type abiCase struct {
	name string
	add  func(*Args)
	want []byte
}

func le16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func abiCases() []abiCase {
	vec := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	return []abiCase{
		{"u8", func(a *Args) { a.Uint8(0xab) }, []byte{0xab}},
		{"s8", func(a *Args) { a.Int8(-2) }, []byte{0xfe}},
		{"u16", func(a *Args) { a.Uint16(0xbeef) }, le16(0xbeef)},
		{"s16", func(a *Args) { a.Int16(-300) }, le16(uint16(0x10000 - 300))},
		{"u32", func(a *Args) { a.Uint32(0xdeadbeef) }, le32(0xdeadbeef)},
		{"s32", func(a *Args) { a.Int32(-123456) }, le32(uint32(1<<32 - 123456))},
		{"u64", func(a *Args) { a.Uint64(0x0123456789abcdef) }, le64(0x0123456789abcdef)},
		{"s64", func(a *Args) { a.Int64(-5) }, le64(math.MaxUint64 - 4)},
		{"f16", func(a *Args) { a.Half(0x3c00) }, le16(0x3c00)},
		{"bf16", func(a *Args) { a.BFloat16(0x3f80) }, le16(0x3f80)},
		{"f32", func(a *Args) { a.Float32(1.5) }, le32(math.Float32bits(1.5))},
		{"f64", func(a *Args) { a.Float64(-2.25) }, le64(math.Float64bits(-2.25))},
		{"bool", func(a *Args) { a.Bool(true) }, []byte{1}},
		{"ptr", func(a *Args) { a.Ptr(0x7f0000001000) }, le64(0x7f0000001000)},
		{"slice.ptr+len", func(a *Args) { a.Slice(0x7f0000002000, 77) }, nil}, // expands to two params below
		{"vec16", func(a *Args) { a.Bytes(vec) }, vec},
		{"u8 after vec", func(a *Args) { a.Uint8(9) }, []byte{9}},
	}
}

// TestLaunchABI launches a kernel whose signature has every parameter type
// and checks, through the stub, the exact bytes each kernelParams[i]
// pointed at, and the launch shape.
func TestLaunchABI(t *testing.T) {
	ctx := stubContext(t)
	var sizes []int32
	var want [][]byte
	args := new(Args)
	for _, c := range abiCases() {
		c.add(args)
		if c.want == nil { // the slice: pointer then length
			want = append(want, le64(0x7f0000002000), le64(77))
			sizes = append(sizes, 8, 8)
			continue
		}
		want = append(want, c.want)
		sizes = append(sizes, int32(len(c.want)))
	}
	setParamSizes(t, "abi", sizes...)
	if args.Len() != len(want) {
		t.Fatalf("Args.Len() = %d, want %d", args.Len(), len(want))
	}
	do(t, ctx, func() error {
		m := loadPTX(t, stubPTX)
		defer m.Unload()
		fn, err := m.Function("abi")
		if err != nil {
			return err
		}
		s, err := StreamCreate(StreamDefault)
		if err != nil {
			return err
		}
		defer s.Destroy()
		return Launch(fn, [3]uint32{3, 2, 1}, [3]uint32{32, 4, 2}, 1024, s, args)
	})
	got := lastLaunch()
	if got.name != "abi" {
		t.Fatalf("last launch was %q", got.name)
	}
	if got.dims != [7]uint32{3, 2, 1, 32, 4, 2, 1024} {
		t.Errorf("grid, block, shared = %v", got.dims)
	}
	if got.stream == 0 {
		t.Errorf("launch went to the default stream, not the one passed")
	}
	if len(got.params) != len(want) {
		t.Fatalf("kernel received %d params, want %d", len(got.params), len(want))
	}
	for i := range want {
		if !bytes.Equal(got.params[i], want[i]) {
			t.Errorf("param %d: kernel received % x, want % x", i, got.params[i], want[i])
		}
		if v := args.Value(i); !bytes.Equal(v, want[i]) {
			t.Errorf("param %d: Args.Value = % x, want % x", i, v, want[i])
		}
	}
}

// TestLaunchArgsAdd checks the any-typed path matches the typed one,
// including named types such as gpu.Half (a uint16).
func TestLaunchArgsAdd(t *testing.T) {
	type half uint16
	type index int32
	a, err := NewArgs(uint8(1), int8(-1), uint16(2), int16(-2), uint32(3), int32(-3), uint64(4), int64(-4),
		float32(0.5), float64(0.25), true, DevicePtr(0x1000), half(0x3c00), index(-7), 9, uint(10))
	if err != nil {
		t.Fatal(err)
	}
	b := new(Args).Uint8(1).Int8(-1).Uint16(2).Int16(-2).Uint32(3).Int32(-3).Uint64(4).Int64(-4).
		Float32(0.5).Float64(0.25).Bool(true).Ptr(0x1000).Half(0x3c00).Int32(-7).Int64(9).Uint64(10)
	if a.Len() != b.Len() {
		t.Fatalf("Len %d vs %d", a.Len(), b.Len())
	}
	for i := range a.Len() {
		if !bytes.Equal(a.Value(i), b.Value(i)) {
			t.Errorf("param %d: Add gave % x, typed gave % x", i, a.Value(i), b.Value(i))
		}
	}
	if _, err := NewArgs("a string"); err == nil || !strings.Contains(err.Error(), "string") {
		t.Errorf("NewArgs(string) = %v, want an unsupported-type error", err)
	}
}

// TestLaunchManyParams goes past the inline storage (24 params, 48 words)
// and checks every value still reaches the kernel, then reuses the Args.
func TestLaunchManyParams(t *testing.T) {
	ctx := stubContext(t)
	const n = 40
	sizes := make([]int32, n)
	for i := range sizes {
		sizes[i] = 8
	}
	setParamSizes(t, "abi", sizes...)
	args := new(Args)
	for i := range n {
		args.Uint64(uint64(i+1) * 0x0101010101)
	}
	var fn Function
	do(t, ctx, func() error {
		m := loadPTX(t, stubPTX)
		var err error
		if fn, err = m.Function("abi"); err != nil {
			return err
		}
		return Launch(fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, 0, args)
	})
	got := lastLaunch()
	for i := range n {
		if want := le64(uint64(i+1) * 0x0101010101); !bytes.Equal(got.params[i], want) {
			t.Errorf("param %d = % x, want % x", i, got.params[i], want)
		}
	}
	// Reset and reuse with fewer, different values: no stale bytes.
	setParamSizes(t, "abi", 4, 8)
	args.Reset().Uint32(5).Float64(3)
	do(t, ctx, func() error { return Launch(fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, 0, args) })
	got = lastLaunch()
	if len(got.params) != 2 || !bytes.Equal(got.params[0], le32(5)) || !bytes.Equal(got.params[1], le64(math.Float64bits(3))) {
		t.Errorf("after Reset: params = %x", got.params)
	}
}

func TestLaunchErrors(t *testing.T) {
	ctx := stubContext(t)
	do(t, ctx, func() error {
		m := loadPTX(t, stubPTX)
		fn, err := m.Function("fault")
		if err != nil {
			return err
		}
		err = Launch(fn, [3]uint32{1, 1, 1}, [3]uint32{64, 32, 1}, 0, 0, nil)
		var e *Error
		if !errors.As(err, &e) || e.Code != ErrorInvalidValue || e.Call != "cuLaunchKernel" {
			t.Fatalf("2048-thread block: %v", err)
		}
		if !strings.Contains(e.Error(), "block=[64 32 1]") {
			t.Errorf("launch error does not show the shape: %q", e.Error())
		}
		// A kernel fault surfaces at the next synchronization, as on a GPU.
		if err := Launch(fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, 0, nil); err != nil {
			t.Errorf("launch of a faulting kernel: %v", err)
		}
		if err := CtxSynchronize(); !errors.Is(err, ErrorIllegalAddress) {
			t.Errorf("synchronize after fault: %v, want CUDA_ERROR_ILLEGAL_ADDRESS", err)
		}
		// Dynamic shared memory above 48 KiB needs the opt-in attribute.
		if err := Launch(fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 64<<10, 0, nil); !errors.Is(err, ErrorInvalidValue) {
			t.Errorf("64 KiB shared without opt-in: %v", err)
		}
		if err := fn.SetAttribute(FuncAttrMaxDynamicSharedSizeBytes, 64<<10); err != nil {
			return err
		}
		return Launch(fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 64<<10, 0, nil)
	})
}

// TestConcurrentLaunches launches from many goroutines through one context.
// Each Do may run on a different OS thread, where the stub's thread-local
// current context starts out empty; without Do's SetCurrent the launches
// would fail with CUDA_ERROR_INVALID_CONTEXT.
func TestConcurrentLaunches(t *testing.T) {
	ctx := stubContext(t)
	setParamSizes(t, "add_one", 8, 8)
	var fn Function
	do(t, ctx, func() error {
		m := loadPTX(t, stubPTX)
		var err error
		fn, err = m.Function("add_one")
		return err
	})
	const workers, iters, n = 16, 40, 257
	before := stub.launches()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- worker(ctx, fn, w, iters, n)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := stub.launches() - before; got != workers*iters {
		t.Errorf("stub ran %d launches, want %d", got, workers*iters)
	}
}

// worker uploads its own buffer, adds one iters times, and checks the result.
func worker(ctx Context, fn Function, w, iters, n int) error {
	var p DevicePtr
	host := make([]uint32, n)
	for i := range host {
		host[i] = uint32(w * 1000)
	}
	err := ctx.Do(func() error {
		var err error
		if p, err = MemAlloc(uint64(4 * n)); err != nil {
			return err
		}
		return CopyHtoD(p, host)
	})
	if err != nil {
		return err
	}
	args := new(Args)
	for range iters {
		err := ctx.Do(func() error {
			args.Reset().Slice(p, n)
			return Launch(fn, [3]uint32{uint32((n + 127) / 128), 1, 1}, [3]uint32{128, 1, 1}, 0, 0, args)
		})
		if err != nil {
			return err
		}
	}
	return ctx.Do(func() error {
		if err := CopyDtoH(host, p); err != nil {
			return err
		}
		for i, v := range host {
			if v != uint32(w*1000+iters) {
				return fmt.Errorf("worker %d: element %d = %d, want %d", w, i, v, w*1000+iters)
			}
		}
		return MemFree(p)
	})
}

// TestLaunchWithoutContextFails is the control for TestConcurrentLaunches.
func TestLaunchWithoutContextFails(t *testing.T) {
	ctx := stubContext(t)
	var fn Function
	do(t, ctx, func() error {
		var err error
		fn, err = loadPTX(t, stubPTX).Function("fault")
		return err
	})
	errc := make(chan error)
	go func() {
		lockThreadForever()
		if err := CtxSetCurrent(0); err != nil {
			errc <- err
			return
		}
		errc <- Launch(fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, 0, nil)
	}()
	if err := <-errc; !errors.Is(err, ErrorInvalidContext) {
		t.Errorf("launch on a thread without a context: %v, want CUDA_ERROR_INVALID_CONTEXT", err)
	}
}

func TestLaunchAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	ctx := stubContext(t)
	setParamSizes(t, "abi", 8, 8, 8, 8, 4, 4)
	var fn Function
	do(t, ctx, func() error {
		var err error
		fn, err = loadPTX(t, stubPTX).Function("abi")
		return err
	})
	args := new(Args)
	launch := func() error {
		args.Reset().Slice(0x1000, 10).Slice(0x2000, 10).Float32(2).Uint32(10)
		return Launch(fn, [3]uint32{1, 1, 1}, [3]uint32{128, 1, 1}, 0, 0, args)
	}
	do(t, ctx, func() error {
		allocs := testing.AllocsPerRun(200, func() {
			if err := launch(); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("Launch with a reused Args allocates %.1f times, want 0", allocs)
		}
		return nil
	})
	allocs := testing.AllocsPerRun(200, func() {
		if err := ctx.Do(launch); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Do+Launch allocates %.1f times, want 0", allocs)
	}
}
