package kern_test

// Bad case 8: every kernel fault is a *kern.DeviceError on every device,
// with the kernel, file:line:col, and the block and thread in 3-D.

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
	tk "github.com/gokern/kern/internal/testkernels"
)

// faultAt launches FaultAt on a 3×2×2 grid of 4×3×2 blocks, failing at
// block (2,1,1) thread (3,2,1) as mode says.
func faultAt(t *testing.T, dev *kern.Device, mode, arg int32) error {
	t.Helper()
	where, _ := kern.Upload(dev, []int32{2, 1, 1, 3, 2, 1, mode, arg})
	x, _ := kern.Alloc[int32](dev, 5)
	return tk.FaultAtKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: 3, Y: 2, Z: 2}, gpu.Dim3{X: 4, Y: 3, Z: 2}), where, x)
}

func TestEveryFaultIsADeviceError(t *testing.T) {
	block, thread := gpu.Dim3{X: 2, Y: 1, Z: 1}, gpu.Dim3{X: 3, Y: 2, Z: 1}
	cases := []struct {
		name      string
		mode, arg int32
		site      string
		panicked  bool
		message   string
	}{
		{"index out of range", 0, 9, "kernels.go:181:4", false, "index out of range"},
		{"panic", 1, 0, "kernels.go:183:8", true, "fault requested"},
		{"divide by zero", 2, 0, "kernels.go:185:10", true, "integer divide by zero"},
		// x[9:] and x[:9] of a 5-element x: Go's messages, the bound and
		// its limit as Index and Length.
		{"slice low", 3, 9, "kernels.go:188:9", false, "slice bounds out of range [9:5]"},
		{"slice high", 4, 9, "kernels.go:191:9", false, "slice bounds out of range [:9] with capacity 5"},
	}
	for _, dev := range devices() {
		for _, c := range cases {
			err := faultAt(t, dev, c.mode, c.arg)
			var de *kern.DeviceError
			if !errors.As(err, &de) {
				t.Errorf("%s %s: %T %v, want a *kern.DeviceError", dev.Kind(), c.name, err, err)
				continue
			}
			if de.Kernel != "FaultAt" || de.Site != c.site || de.Panic != c.panicked || de.Message != c.message ||
				de.Block != block || de.Thread != thread {
				t.Errorf("%s %s: %+v\nwant kernel FaultAt at %s, panic %v, message %q, block %v thread %v",
					dev.Kind(), c.name, *de, c.site, c.panicked, c.message, block, thread)
			}
			if (c.mode == 0 || c.mode >= 3) && (de.Index != 9 || de.Length != 5) {
				t.Errorf("%s: index %d length %d, want 9 and 5", dev.Kind(), de.Index, de.Length)
			}
			for _, want := range []string{"FaultAt", c.site, "block (2,1,1)", "thread (3,2,1)", c.message} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s %s: %q does not say %q", dev.Kind(), c.name, err, want)
				}
			}
		}
	}
}

// A nobounds kernel reading outside every allocation is an emulator fault
// (and a Go panic in native mode): a DeviceError too, wrapping the
// device's own error.
func TestUncheckedFaultsAreDeviceErrors(t *testing.T) {
	for _, dev := range devices() {
		err := gatherOutOfBounds(dev)
		var de *kern.DeviceError
		if !errors.As(err, &de) || de.Kernel != "GatherUnchecked" || !strings.HasPrefix(de.Site, "kernels.go:36") ||
			de.Thread != (gpu.Dim3{X: 3}) || de.Err == nil {
			t.Errorf("%s: %v (%#v), want a DeviceError of GatherUnchecked at kernels.go:36, thread (3,0,0)", dev.Kind(), err, de)
			continue
		}
		if dev.Kind() == "emu" && !errors.Is(err, emu.ErrOutOfBounds) {
			t.Errorf("emu: %v does not wrap emu.ErrOutOfBounds", err)
		}
	}
}

// spin launches Spin for one warp with a limit of n iterations.
func spin(q kern.Queue, dev *kern.Device, n int32) (*kern.Buffer[int32], error) {
	return spinWith(func() kern.Queue { return q }, dev, n)
}

// spinWith is spin with the queue made after the buffers, so that a
// deadline in it starts only then.
func spinWith(q func() kern.Queue, dev *kern.Device, n int32) (*kern.Buffer[int32], error) {
	stop, _ := kern.Alloc[int32](dev, 1)
	limit, _ := kern.Upload(dev, []int32{n})
	out, _ := kern.Alloc[int32](dev, 32)
	return out, tk.SpinKernel.Launch(q(), kern.Cover(32), stop, limit, out)
}

// Runaway kernels: the emulator's step limit names the kernel and the Go
// line of the loop.
func TestStepLimitNamesTheLoop(t *testing.T) {
	dev := kern.OpenEmulator(emu.Options{MaxSteps: 20000})
	_, err := spin(dev, dev, 1<<30)
	var de *kern.DeviceError
	if !errors.As(err, &de) || !errors.Is(err, emu.ErrStepLimit) || de.Kernel != "Spin" || !strings.HasPrefix(de.Site, "kernels.go:20") {
		t.Fatalf("%v, want a step-limit DeviceError of Spin at its loop (kernels.go:20x)", err)
	}
	if !strings.Contains(err.Error(), "Spin") || !strings.Contains(err.Error(), de.Site) {
		t.Errorf("message %q names neither the kernel nor the line", err)
	}
}

func TestLaunchHonoursContext(t *testing.T) {
	for _, dev := range devices() {
		// A finished context launches nothing.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		out, err := spin(kern.WithContext(ctx, dev), dev, 5)
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "Spin") {
			t.Errorf("%s: cancelled context: %v", dev.Kind(), err)
		}
		if got, _ := out.Download(); got[0] != 0 {
			t.Errorf("%s: a cancelled launch ran", dev.Kind())
		}
		// A live one runs to the end.
		out, err = spin(kern.WithContext(context.Background(), dev), dev, 5)
		if got, _ := out.Download(); err != nil || got[31] != 5 {
			t.Errorf("%s: %v, out %v", dev.Kind(), err, got)
		}
	}
	// The emulator stops a runaway launch at the deadline and says where.
	dev := kern.OpenEmulator()
	s, _ := dev.NewStream()
	// Load the module first: parsing the PTX must not use up the deadline.
	if _, err := spin(s, dev, 1); err != nil {
		t.Fatal(err)
	}
	_, err := spinWith(func() kern.Queue {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		t.Cleanup(cancel)
		return kern.WithContext(ctx, s)
	}, dev, 1<<30)
	var de *kern.DeviceError
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &de) || de.Kernel != "Spin" || !strings.HasPrefix(de.Site, "kernels.go:20") {
		t.Errorf("emu: %v, want a DeadlineExceeded DeviceError at Spin's loop", err)
	}
	if _, err := kern.Alloc[int32](dev, 1); err != nil {
		t.Errorf("emu: the device is unusable after a stopped launch: %v", err)
	}
}

// Native mode cannot stop a goroutine: the launch returns at the
// deadline and the device refuses further work.
func TestNativeAbandonsARunawayLaunch(t *testing.T) {
	dev := kern.OpenNative()
	// Size the loop to run about four seconds, eight times the deadline
	// plus gpu's grace period (half a second), from the fastest of three
	// short runs: a probe slowed by a loaded machine would size a loop
	// that ends inside the grace period once the load goes.
	const probe = 1 << 22
	fastest := time.Duration(1<<63 - 1)
	for range 3 {
		start := time.Now()
		if _, err := spin(dev, dev, probe); err != nil {
			t.Fatal(err)
		}
		fastest = min(fastest, time.Since(start))
	}
	limit := min(4*float64(probe)/fastest.Seconds(), float64(1<<31-1))
	goroutines := runtime.NumGoroutine()
	_, err := spinWith(func() kern.Queue {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		t.Cleanup(cancel)
		return kern.WithContext(ctx, dev)
	}, dev, int32(limit))
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, gpu.ErrAbandoned) || !strings.Contains(err.Error(), "Spin") {
		t.Fatalf("%v, want DeadlineExceeded and gpu.ErrAbandoned naming Spin", err)
	}
	_, err = kern.Alloc[int32](dev, 1)
	wantErr(t, "Alloc after an abandoned launch", err, "unusable", "Spin")
	// Let the abandoned threads finish their loop, so that they do not
	// slow the tests that follow.
	for runtime.NumGoroutine() > goroutines {
		time.Sleep(10 * time.Millisecond)
	}
}
