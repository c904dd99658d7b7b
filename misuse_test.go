package kern_test

// Tests of the run-time misuses docs/errors.md lists: each returns an
// error (or, for an empty grid, launches nothing) on every device, where
// before it computed garbage, ran, or killed the process.

import (
	"errors"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	tk "github.com/gokern/kern/internal/testkernels"
)

func wantErr(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want one containing %q", what, want)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not contain %q", what, err, w)
		}
	}
}

// Bad case 1: a buffer or scalar of another element type of the same
// size was reinterpreted (emu) or panicked in the generated file (native).
func TestUntypedLaunchChecksElementTypes(t *testing.T) {
	for _, dev := range devices() {
		x, _ := kern.Upload(dev, []float32{1, 2, 3})
		y, _ := kern.Upload(dev, []float32{1, 1, 1})
		ints, _ := kern.Upload(dev, []int32{1, 2, 3})
		uints, _ := kern.Upload(dev, []uint32{1, 2, 3})
		k := tk.AxpyKernel.Kernel()
		a := kern.ScalarArg(float32(2))
		wantErr(t, dev.Kind()+" []int32 for []float32", k.Launch(dev, kern.Cover(3), a, kern.BufferArg(ints), kern.BufferArg(y)),
			"Axpy", "parameter x", "want a buffer of float32, got a buffer of int32")
		wantErr(t, dev.Kind()+" []uint32 for []float32", k.Launch(dev, kern.Cover(3), a, kern.BufferArg(x), kern.BufferArg(uints)),
			"parameter y", "want a buffer of float32, got a buffer of uint32")
		wantErr(t, dev.Kind()+" int32 for float32", k.Launch(dev, kern.Cover(3), kern.ScalarArg(int32(2)), kern.BufferArg(x), kern.BufferArg(y)),
			"parameter a", "want a float32 scalar, got a scalar of type int32")
		// Nothing ran: y is unchanged.
		if got, _ := y.Download(); got[0] != 1 || got[2] != 1 {
			t.Errorf("%s: a rejected launch wrote y = %v", dev.Kind(), got)
		}
		g := tk.DivideKernel.Kernel()
		f, _ := kern.Upload(dev, []float32{1, 2, 3})
		out, _ := kern.Alloc[int32](dev, 3)
		wantErr(t, dev.Kind()+" []float32 for []int32", g.Launch(dev, kern.Cover(3), kern.BufferArg(ints), kern.BufferArg(f), kern.BufferArg(out)),
			"Divide", "parameter d", "want a buffer of int32, got a buffer of float32")
		// The right types still launch.
		if err := k.Launch(dev, kern.Cover(3), a, kern.BufferArg(x), kern.BufferArg(y)); err != nil {
			t.Errorf("%s: %v", dev.Kind(), err)
		}
	}
}

// Bad case 2: zero dimensions were normalised to 1 and the kernel ran.
func TestEmptyAndNegativeGrids(t *testing.T) {
	for _, dev := range devices() {
		x, _ := kern.Upload(dev, []float32{-1, -1})
		// Checked panics on a negative input: any thread that runs fails.
		empty := map[string]kern.Grid{
			"Grid{}":              {},
			"Blocks X=0":          kern.Blocks(gpu.Dim3{X: 0}, gpu.Dim3{X: 32}),
			"Blocks Y=0 with Z":   kern.Blocks(gpu.Dim3{X: 1, Y: 0, Z: 1}, gpu.Dim3{X: 32}),
			"Blocks Z=0 explicit": kern.Blocks(gpu.Dim3{X: 1, Y: 1}, gpu.Dim3{X: 32, Y: 0, Z: 1}),
			"threads X=0":         kern.Blocks(gpu.Dim3{X: 2}, gpu.Dim3{}),
			"Cover(0)":            kern.Cover(0),
			"Cover2(4, 0)":        kern.Cover2(4, 0),
			"Cover3(4, 4, 0)":     kern.Cover3(4, 4, 0),
		}
		for name, g := range empty {
			if err := tk.CheckedKernel.Launch(dev, g, x); err != nil {
				t.Errorf("%s %s: %v, want a launch of nothing", dev.Kind(), name, err)
			}
		}
		// The shorthand gpu.Dim3{X: n} is still n×1×1: it runs (and panics).
		if err := tk.CheckedKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: 1}, gpu.Dim3{X: 2}), x); err == nil {
			t.Errorf("%s: Blocks({X: 1}, {X: 2}) ran nothing", dev.Kind())
		}
		wantErr(t, dev.Kind()+" negative blocks", tk.CheckedKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: 2, Y: -3}, gpu.Dim3{X: 32}), x),
			"Checked", "kern.Blocks(2x-3x0, 32x0x0)", "negative")
		wantErr(t, dev.Kind()+" negative threads", tk.CheckedKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: 2}, gpu.Dim3{X: -32}), x),
			"-32", "negative")
		wantErr(t, dev.Kind()+" negative cover", tk.CheckedKernel.Launch(dev, kern.Cover(-5), x), "-5", "negative")
		// An empty launch still checks its arguments.
		wantErr(t, dev.Kind()+" empty launch, bad args", tk.CheckedKernel.Kernel().Launch(dev, kern.Cover(0)), "got 0 arguments, want 1")
	}
}

// Bad case 3: n*elemSize overflowed, Len reported 4.6e18 and a native
// launch killed the process.
func TestAllocSizeOverflowAndHostLimit(t *testing.T) {
	for _, dev := range devices() {
		b, err := kern.Alloc[float32](dev, 1<<62)
		wantErr(t, dev.Kind()+" 1<<62 float32s", err, "kern.Alloc", "4611686018427387904 elements of 4 bytes overflow")
		if b != nil {
			t.Errorf("%s: got a buffer of %d elements", dev.Kind(), b.Len())
		}
		if lim := dev.Limits().MaxAlloc; lim > 0 {
			_, err := kern.Alloc[float64](dev, int(lim/8)+1)
			wantErr(t, dev.Kind()+" more than the host has", err, "kern.Alloc", "exceed", "host memory")
		}
	}
}

// Bad case 4: a closed emulator or native device kept working.
func TestClosedDeviceFailsEverywhere(t *testing.T) {
	for _, dev := range devices() {
		checkClosed(t, dev)
	}
}

func checkClosed(t *testing.T, dev *kern.Device) {
	t.Helper()
	x, _ := kern.Upload(dev, []float32{1, 2})
	y, _ := kern.Upload(dev, []float32{1, 2})
	s, err := dev.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.Capture(func(s *kern.Stream) error { return tk.AxpyKernel.Launch(s, kern.Cover(2), 1, x, y) })
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	kind := dev.Kind()
	closed := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, kern.ErrClosed) {
			t.Errorf("%s: %s on a closed device: %v, want ErrClosed", kind, what, err)
		}
	}
	_, err = kern.Alloc[float32](dev, 4)
	closed("Alloc", err)
	_, err = kern.Upload(dev, []float32{1})
	closed("Upload", err)
	closed("CopyFrom", x.CopyFrom([]float32{3, 4}))
	closed("CopyTo", x.CopyTo(make([]float32, 2)))
	_, err = x.Download()
	closed("Download", err)
	closed("Launch", tk.AxpyKernel.Launch(dev, kern.Cover(2), 1, x, y))
	closed("Launch on a stream", tk.AxpyKernel.Launch(s, kern.Cover(2), 1, x, y))
	closed("Graph.Launch", g.Launch(s))
	closed("Sync", dev.Sync())
	closed("Stream.Sync", s.Sync())
	_, err = s.Record()
	closed("Record", err)
	_, err = dev.NewStream()
	closed("NewStream", err)
	_, err = s.Capture(func(*kern.Stream) error { return nil })
	closed("Capture", err)
	closed("Free", x.Free())
	if err := dev.Close(); err != nil {
		t.Errorf("%s: second Close: %v", kind, err)
	}
	// Releasing what the device owned is not an error.
	if err := g.Close(); err != nil {
		t.Errorf("%s: Graph.Close after the device: %v", kind, err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("%s: Stream.Close after the device: %v", kind, err)
	}
}

// Buffers of two devices of one kind are told apart in errors.
func TestTwoDevicesAreNamedApart(t *testing.T) {
	a, b := kern.OpenEmulator(), kern.OpenEmulator()
	x, _ := kern.Upload(a, []float32{1})
	y, _ := kern.Upload(b, []float32{1})
	err := tk.AxpyKernel.Launch(b, kern.Cover(1), 1, x, y)
	wantErr(t, "buffer of another emulator", err, "emu device #", "parameter x")
	if err != nil {
		msg := err.Error()
		if a.ID() == b.ID() {
			t.Errorf("two devices have one ID, %d", a.ID())
		}
		on, launch, _ := strings.Cut(msg, "launch is on")
		if strings.TrimSpace(launch) == "" || strings.Contains(on, strings.TrimSpace(launch)) {
			t.Errorf("error %q names both devices alike", msg)
		}
	}
	if s := x.String(); !strings.Contains(s, "Buffer[float32] of 1 on emu device #") {
		t.Errorf("Buffer.String() = %q", s)
	}
}

// PTX generated by an older kern has a smaller error slot than this
// version decodes: the launch says to regenerate rather than misread it.
func TestOldErrorSlotAsksToRegenerate(t *testing.T) {
	spec := *tk.AxpyKernel.Kernel().Spec()
	old := *spec.Module
	old.PTX = strings.Replace(old.PTX, ".align 16 .b64 kern_error[6]", ".align 8 .b64 kern_error[5]", 1)
	if old.PTX == spec.Module.PTX {
		t.Fatal("the test kernels' PTX has no 6-word error slot")
	}
	spec.Module = &kern.Module{Pkg: old.Pkg, Arch: old.Arch, PTX: old.PTX}
	k := kern.NewKernel(spec)
	dev := kern.OpenEmulator()
	x, _ := kern.Upload(dev, []float32{1})
	y, _ := kern.Upload(dev, []float32{1})
	err := k.Launch(dev, kern.Cover(1), kern.ScalarArg(float32(1)), kern.BufferArg(x), kern.BufferArg(y))
	wantErr(t, "a 5-word error slot", err, "Axpy", "40-byte error slot", "re-run go generate")
}
