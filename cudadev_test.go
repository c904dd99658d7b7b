package kern_test

import (
	"strings"
	"testing"

	"github.com/gokern/kern"
	tk "github.com/gokern/kern/internal/testkernels"

	"github.com/gokern/kern/internal/cudastub"
)

// openStubCUDA opens the CUDA device on the stub libcuda of package cuda's
// tests (testdata/stub): device memory is host memory and kernels do
// nothing, which exercises everything of the CUDA device but the GPU.
func openStubCUDA(t *testing.T) *kern.Device {
	t.Helper()
	return openStubGPU(t, 0)
}

// openStubGPU opens the stub's device ordinal: 0 looks like an A100
// (sm_80), 1 like an H100 (sm_90).
func openStubGPU(t *testing.T, ordinal int) *kern.Device {
	t.Helper()
	if gpuTag {
		// libcuda is loaded once per process: after the stub, the GPU
		// tests of this build would run on it and pass without a GPU.
		t.Skip("-tags gpu: this process keeps the real driver; the stub-driver tests run without the tag")
	}
	t.Setenv("KERN_LIBCUDA", cudastub.Libcuda(t))
	t.Setenv("KERN_DEVICE", "cuda")
	dev, err := kern.OpenCUDA(ordinal)
	if err != nil {
		t.Fatalf("opening the stub device: %v", err)
	}
	return dev
}

func TestCUDADeviceOnTheStubDriver(t *testing.T) {
	dev := openStubCUDA(t)
	defer dev.Close()
	if dev.Kind() != "cuda" || !strings.Contains(dev.Name(), "sm_") {
		t.Errorf("device %q", dev)
	}
	lim := dev.Limits()
	if lim.MaxThreadsPerBlock <= 0 || lim.MaxSharedPerBlock < 48<<10 {
		t.Errorf("limits %+v", lim)
	}
	xs := []float32{1, 2, 3, 4, 5}
	x, err := kern.Upload(dev, xs)
	if err != nil {
		t.Fatal(err)
	}
	y, err := kern.Alloc[float32](dev, 5)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := y.Download(); got[4] != 0 {
		t.Errorf("Alloc not zeroed: %v", got)
	}
	if got, err := x.Download(); err != nil || got[4] != 5 {
		t.Errorf("round trip: %v, %v", got, err)
	}
	// The stub runs no PTX: a launch goes through module loading, the
	// function lookup and argument packing, and does nothing.
	if err := tk.AxpyKernel.Launch(dev, kern.Cover(5), 2, x, y); err != nil {
		t.Fatal(err)
	}
	if err := dev.Sync(); err != nil {
		t.Fatal(err)
	}
	s, err := dev.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := s.Record()
	g, err := s.Capture(func(s *kern.Stream) error { return tk.AxpyKernel.Launch(s, kern.Cover(5), 2, x, y) })
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Launch(s); err != nil {
		t.Fatal(err)
	}
	b, _ := s.Record()
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := kern.Elapsed(a, b); err != nil {
		t.Fatal(err)
	}
	g.Close()
	s.Close()
	if err := x.Free(); err != nil {
		t.Fatal(err)
	}
}

// Bad case 4 on the CUDA path: after Close the context is released, so
// every operation must stop before it reaches the driver.
func TestClosedCUDADeviceOnTheStubDriver(t *testing.T) {
	checkClosed(t, openStubCUDA(t))
}

func TestCUDAAllocChecksOnTheStubDriver(t *testing.T) {
	dev := openStubCUDA(t)
	defer dev.Close()
	_, err := kern.Alloc[float32](dev, 1<<62)
	wantErr(t, "1<<62 float32s", err, "overflow")
	lim := dev.Limits().MaxAlloc
	if lim == 0 {
		t.Fatal("the stub device reports no memory size")
	}
	_, err = kern.Alloc[byte](dev, int(lim)+1)
	wantErr(t, "more than the GPU has", err, "exceed", "memory of cuda device #")
}
