package kern_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gokern/kern"
	tk "github.com/gokern/kern/internal/testkernels"
)

// BenchmarkKernelLaunch measures the host cost of one typed launch
// (AxpyKernel.Launch: argument and grid checks, parameter packing, the
// driver call) on the CUDA device over the stub libcuda, whose
// cuLaunchKernel copies the parameters out and returns. The stub is built
// here, not through openStubCUDA, so that the benchmark also runs on
// older trees for comparison.
func BenchmarkKernelLaunch(b *testing.B) {
	srcs, _ := filepath.Glob(filepath.Join("cuda", "testdata", "stub", "*.c"))
	lib := filepath.Join(b.TempDir(), "libcuda_stub.so")
	args := append([]string{"-shared", "-fPIC", "-fvisibility=hidden", "-O1", "-o", lib}, srcs...)
	if out, err := exec.Command("cc", append(args, "-lpthread")...).CombinedOutput(); err != nil {
		b.Skipf("building the stub: %v\n%s", err, out)
	}
	os.Setenv("KERN_LIBCUDA", lib)
	os.Setenv("KERN_DEVICE", "cuda")
	defer os.Unsetenv("KERN_LIBCUDA")
	defer os.Unsetenv("KERN_DEVICE")
	dev, err := kern.Open()
	if err != nil {
		b.Fatal(err)
	}
	defer dev.Close()
	x, _ := kern.Alloc[float32](dev, 1024)
	y, _ := kern.Alloc[float32](dev, 1024)
	grid := kern.Cover(1024)
	if err := tk.AxpyKernel.Launch(dev, grid, 2, x, y); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := tk.AxpyKernel.Launch(dev, grid, 2, x, y); err != nil {
			b.Fatal(err)
		}
	}
}
