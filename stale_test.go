package kern_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gokern/kern"
	tk "github.com/gokern/kern/internal/testkernels"
)

// TestStaleGeneratedCodeIsRefused: a kernel whose recorded source hash
// does not match its source (edited after kern gen) fails its first launch
// on every device with ErrStaleKernel, naming the kernel and the command
// to run; the committed generated code matches, and KERN_SOURCE_CHECK=off
// skips the check.
func TestStaleGeneratedCodeIsRefused(t *testing.T) {
	spec := *tk.AxpyKernel.Kernel().Spec()
	if spec.SourceHash == "" || len(spec.Source) == 0 {
		t.Fatalf("the generated spec records no source: %q %v", spec.SourceHash, spec.Source)
	}
	spec.Module = nil // a copy must not join the package's module
	n := 64
	launch := func(k *kern.Kernel, dev *kern.Device) error {
		x, _ := kern.Upload(dev, make([]float32, n))
		y, _ := kern.Upload(dev, make([]float32, n))
		return k.Launch(dev, kern.Cover(n), kern.ScalarArg(float32(2)), kern.BufferArg(x), kern.BufferArg(y))
	}
	if err := launch(kern.NewKernel(spec), kern.OpenNative()); err != nil {
		t.Fatalf("fresh kernel: %v", err)
	}
	spec.SourceHash = "0123456789abcdef"
	for _, dev := range devices() {
		err := launch(kern.NewKernel(spec), dev)
		if !errors.Is(err, kern.ErrStaleKernel) {
			t.Fatalf("%s: stale kernel launched: %v", dev, err)
		}
		for _, want := range []string{"Axpy", "kernels.go (Axpy)", "go generate", "testkernels"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error lacks %q: %v", dev, want, err)
			}
		}
	}
	t.Setenv("KERN_SOURCE_CHECK", "off")
	if err := launch(kern.NewKernel(spec), kern.OpenNative()); err != nil {
		t.Errorf("KERN_SOURCE_CHECK=off: %v", err)
	}
}
