package kern_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gokern/kern"
	tk "github.com/gokern/kern/internal/testkernels"
)

// A gpu.Load4 whose address is not 16-byte aligned (x[off+4i] with off
// not a multiple of 4) stops the kernel with the same DeviceError on every
// device: a panic at the call, with the compiler's message; an aligned
// one copies.
func TestMisalignedVectorLoadIsReported(t *testing.T) {
	xs := make([]float32, 20)
	for i := range xs {
		xs[i] = float32(i)
	}
	for _, dev := range devices() {
		x, _ := kern.Upload(dev, xs)
		out, _ := kern.Alloc[float32](dev, 8)
		if err := tk.Vec4AtKernel.Launch(dev, kern.Cover(2), x, out, 4); err != nil {
			t.Fatalf("%s: aligned Load4: %v", dev.Kind(), err)
		}
		got, _ := out.Download()
		if fmt.Sprint(got) != "[4 5 6 7 8 9 10 11]" {
			t.Errorf("%s: aligned Load4 copied %v", dev.Kind(), got)
		}
		err := tk.Vec4AtKernel.Launch(dev, kern.Cover(2), x, out, 1)
		var de *kern.DeviceError
		if !errors.As(err, &de) {
			t.Fatalf("%s: misaligned Load4: error %v, want a *kern.DeviceError", dev.Kind(), err)
		}
		want := "gpu.Load4: misaligned access: the address of s[i] must be a multiple of 16 bytes"
		if !de.Panic || !strings.HasPrefix(de.Message, want) || !strings.HasPrefix(de.Site, "kernels.go:") || strings.Count(de.Site, ":") != 2 {
			t.Errorf("%s: misaligned Load4: %#v, want a panic at kernels.go:line:col saying %q", dev.Kind(), de, want)
		}
		if !strings.Contains(err.Error(), "Vec4At") {
			t.Errorf("%s: error %q does not name the kernel", dev.Kind(), err)
		}
	}
}
