//go:build gpu

package kern_test

// Run on a machine with an NVIDIA GPU: go test -tags gpu -run GPU .

import (
	"errors"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	tk "github.com/gokern/kern/internal/testkernels"
)

// On a real GPU the kernel itself writes the 5-word error slot: the fault
// comes back from Sync as the same DeviceError as on emu and native, with
// the 3-D block and thread.
func TestGPUFaultsAreDeviceErrors(t *testing.T) {
	dev, err := kern.OpenCUDA(0)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	cases := []struct {
		mode, arg int32
		site      string
		panicked  bool
	}{
		{0, 9, "kernels.go:181:4", false},
		{1, 0, "kernels.go:183:8", true},
		{2, 0, "kernels.go:185:10", true},
	}
	for _, c := range cases {
		err := faultAt(t, dev, c.mode, c.arg)
		if err == nil {
			err = dev.Sync()
		}
		var de *kern.DeviceError
		if !errors.As(err, &de) || de.Kernel != "FaultAt" || de.Site != c.site || de.Panic != c.panicked ||
			de.Block != (gpu.Dim3{X: 2, Y: 1, Z: 1}) || de.Thread != (gpu.Dim3{X: 3, Y: 2, Z: 1}) {
			t.Errorf("mode %d: %v (%#v), want FaultAt at %s in block (2,1,1) thread (3,2,1)", c.mode, err, de, c.site)
		}
		if err := dev.Sync(); err != nil {
			t.Errorf("mode %d: the error slot was not cleared: %v", c.mode, err)
		}
	}
}

// The steps of the fault path one by one, so that a failure above says
// which one broke: the faulting thread runs (an in-range write lands), and
// an out-of-range write leaves a non-empty slot behind.
func TestGPUFaultPathSteps(t *testing.T) {
	dev, err := kern.OpenCUDA(0)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	where, _ := kern.Upload(dev, []int32{2, 1, 1, 3, 2, 1, 0, 3})
	x, _ := kern.Alloc[int32](dev, 5)
	if err := tk.FaultAtKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: 3, Y: 2, Z: 2}, gpu.Dim3{X: 4, Y: 3, Z: 2}), where, x); err != nil {
		t.Fatal(err)
	}
	got, err := x.Download()
	if err != nil {
		t.Fatal(err)
	}
	if got[3] != 1 {
		t.Errorf("in-range write: x = %v, want x[3] = 1 (the chosen thread did not run its branch)", got)
	}
	back, _ := where.Download()
	t.Logf("where read back: %v", back)
	if err := where.CopyFrom([]int32{2, 1, 1, 3, 2, 1, 0, 9}); err != nil {
		t.Fatal(err)
	}
	if err := tk.FaultAtKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: 3, Y: 2, Z: 2}, gpu.Dim3{X: 4, Y: 3, Z: 2}), where, x); err != nil {
		t.Fatal(err)
	}
	slots, err := kern.RawErrorSlots(dev)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("slots after an out-of-range write: %x", slots)
	if s := slots["github.com/gokern/kern/internal/testkernels"]; kern.ErrorSlotCode(s) == 0 {
		t.Errorf("out-of-range write left the slot empty: %x", slots)
	}
	if err := dev.Sync(); err == nil {
		t.Error("Sync after the fault: nil")
	}
}
