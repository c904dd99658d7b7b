//go:build gpu

package kern_test

// Run on a machine with an NVIDIA GPU: go test -tags gpu -run GPU .

import (
	"errors"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
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
