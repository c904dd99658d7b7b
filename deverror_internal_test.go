package kern

import (
	"errors"
	"testing"

	"github.com/gokern/kern/gpu"
)

// nativeFault maps every native-mode kernel fault to a DeviceError; a
// barrier that can never complete has no one thread, so Thread is -1s.
func TestNativeBarrierFaultIsADeviceError(t *testing.T) {
	k := NewKernel(KernelSpec{Name: "Stencil"})
	be := &gpu.BarrierError{Block: gpu.Dim3{X: 1, Y: 2}, Kind: "barrier divergence", Detail: "48 threads at Sync (k.go:12), 16 returned"}
	err := nativeFault(k, be)
	var de *DeviceError
	if !errors.As(err, &de) || de.Kernel != "Stencil" || de.Block != be.Block || de.Thread != blockWide || !errors.Is(err, be) {
		t.Fatalf("%v (%#v), want a DeviceError of Stencil in block (1,2,0) wrapping the BarrierError", err, de)
	}
	if want := "kern: kernel Stencil: barrier divergence: 48 threads at Sync (k.go:12), 16 returned (block (1,2,0))"; err.Error() != want {
		t.Errorf("%q\nwant %q", err, want)
	}
	other := errors.New("no native body was generated")
	if nativeFault(k, other) != other {
		t.Error("a launch error that is not a fault was changed")
	}
}
