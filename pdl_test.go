package kern_test

import (
	"testing"

	"github.com/ebitengine/purego"

	"github.com/gokern/kern"
	"github.com/gokern/kern/cuda"
	"github.com/gokern/kern/gpu"
	tk "github.com/gokern/kern/internal/testkernels"
)

// stubPDLHooks binds the stub libcuda's records of the last launch's
// programmatic serialization and the last PTX it loaded.
func stubPDLHooks(t *testing.T) (lastPDL func() int32, ptxHas func(string) int32) {
	t.Helper()
	h, err := purego.Dlopen(cuda.Library(), purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	purego.RegisterLibFunc(&lastPDL, h, "stub_last_pdl")
	purego.RegisterLibFunc(&ptxHas, h, "stub_last_ptx_has")
	return lastPDL, ptxHas
}

// TestPDLOnTheStubDriver: on the stub's H100 a pdl kernel's module is
// loaded with griddepcontrol turned on and the kernel launched with
// programmatic serialization, directly and inside a graph; a kernel
// without pdl is not; on the stub's A100, and with KERN_PDL=0, nothing
// changes.
func TestPDLOnTheStubDriver(t *testing.T) {
	for _, c := range []struct {
		name    string
		ordinal int
		env     string
		pdl     bool
	}{
		{"H100", 1, "", true},
		{"H100 KERN_PDL=0", 1, "0", false},
		{"A100", 0, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("KERN_PDL", c.env)
			dev := openStubGPU(t, c.ordinal)
			defer dev.Close()
			lastPDL, ptxHas := stubPDLHooks(t)
			if dev.PDL() != c.pdl {
				t.Fatalf("Device.PDL() = %v, want %v", dev.PDL(), c.pdl)
			}
			x, err := kern.Upload(dev, []float32{1, 2, 3})
			if err != nil {
				t.Fatal(err)
			}
			y, err := kern.Alloc[float32](dev, 3)
			if err != nil {
				t.Fatal(err)
			}
			if err := tk.AxpyPDLKernel.Launch(dev, kern.Cover(3), 2, x, y); err != nil {
				t.Fatal(err)
			}
			if got := ptxHas("\tgriddepcontrol.wait;") == 1 && ptxHas(".target sm_90\n") == 1; got != c.pdl {
				t.Errorf("module loaded with griddepcontrol on and .target sm_90: %v, want %v", got, c.pdl)
			}
			if got := lastPDL() == 1; got != c.pdl {
				t.Errorf("AxpyPDL launched with programmatic serialization: %v, want %v", got, c.pdl)
			}
			if err := tk.AxpyKernel.Launch(dev, kern.Cover(3), 2, x, y); err != nil {
				t.Fatal(err)
			}
			if lastPDL() != 0 {
				t.Error("Axpy (no pdl) launched with programmatic serialization")
			}
			s, err := dev.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			g, err := s.Capture(func(s *kern.Stream) error {
				if err := tk.AxpyKernel.Launch(s, kern.Cover(3), 2, x, y); err != nil {
					return err
				}
				return tk.AxpyPDLKernel.Launch(s, kern.Cover(3), 2, x, y)
			})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if err := g.Launch(s); err != nil {
				t.Fatal(err)
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			if got := lastPDL() == 1; got != c.pdl {
				t.Errorf("graph replay: AxpyPDL with programmatic serialization: %v, want %v", got, c.pdl)
			}
		})
	}
}

// TestPDLKernelRunsOnTheEmulator: the pdl kernel computes what Axpy does.
func TestPDLKernelRunsOnTheEmulator(t *testing.T) {
	dev := kern.OpenEmulator()
	defer dev.Close()
	xs := []float32{1, -2, 3.5, 0, 7}
	x, _ := kern.Upload(dev, xs)
	y, _ := kern.Upload(dev, []float32{1, 1, 1, 1, 1})
	if err := tk.AxpyPDLKernel.Launch(dev, kern.Cover(len(xs)), 3, x, y); err != nil {
		t.Fatal(err)
	}
	got, err := y.Download()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range xs {
		if want := 3*v + 1; got[i] != want {
			t.Errorf("y[%d] = %v, want %v", i, got[i], want)
		}
	}
	if dev.PDL() {
		t.Error("the emulator reports PDL")
	}
}

// TestPDLFallsBackWhenRefused: a driver that turns programmatic
// serialization down gets the launch again without it, and the device
// stops asking (Device.PDL turns false).
func TestPDLFallsBackWhenRefused(t *testing.T) {
	dev := openStubGPU(t, 1)
	defer dev.Close()
	lastPDL, _ := stubPDLHooks(t)
	var failNext func(name string, code int32)
	h, err := purego.Dlopen(cuda.Library(), purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	purego.RegisterLibFunc(&failNext, h, "stub_fail_next")
	if !dev.PDL() {
		t.Fatal("the stub's H100 does not launch with PDL")
	}
	x, _ := kern.Upload(dev, []float32{1, 2, 3})
	y, _ := kern.Alloc[float32](dev, 3)
	failNext("cuLaunchKernelEx", int32(cuda.ErrorNotSupported))
	if err := tk.AxpyPDLKernel.Launch(dev, kern.Cover(3), 2, x, y); err != nil {
		t.Fatalf("launch after a refused attribute: %v", err)
	}
	if lastPDL() != 0 || dev.PDL() {
		t.Errorf("after the refusal: last launch pdl=%d, Device.PDL() = %v; want a plain launch and PDL off", lastPDL(), dev.PDL())
	}
	if err := tk.AxpyPDLKernel.Launch(dev, kern.Cover(3), 2, x, y); err != nil || lastPDL() != 0 {
		t.Errorf("next launch: %v, pdl=%d; want a plain launch", err, lastPDL())
	}
}

// TestPDLCooperative: a cooperative kernel that waits for the kernel
// before it is launched with both attributes; a driver that refuses the
// pair gets the launch again as a plain cooperative one, and from then on
// cooperative launches go without PDL while other kernels keep it. On the
// emulator the kernel computes what GridRotate does.
func TestPDLCooperative(t *testing.T) {
	dev := openStubGPU(t, 1)
	defer dev.Close()
	lastPDL, _ := stubPDLHooks(t)
	h := stubGridKernel(t, "GridRotatePDL")
	var failNext func(name string, code int32)
	var lastCoop func() int32
	purego.RegisterLibFunc(&failNext, h, "stub_fail_next")
	purego.RegisterLibFunc(&lastCoop, h, "stub_last_coop")
	buf, _ := kern.Alloc[int32](dev, 4*64)
	acc, _ := kern.Alloc[int32](dev, 4*64)
	x, _ := kern.Upload(dev, []float32{1, 2, 3})
	y, _ := kern.Alloc[float32](dev, 3)
	grid := kern.Blocks(gpu.Dim3{X: 4, Y: 1, Z: 1}, gpu.Dim3{X: 64, Y: 1, Z: 1})
	launch := func(want string, pdl int32) {
		t.Helper()
		if err := tk.GridRotatePDLKernel.Launch(dev, grid, buf, acc, 1); err != nil {
			t.Fatalf("%s: %v", want, err)
		}
		if lastCoop() != 1 || lastPDL() != pdl {
			t.Errorf("%s: cooperative %d, pdl %d; want 1, %d", want, lastCoop(), lastPDL(), pdl)
		}
	}
	launch("first launch", 1)
	failNext("cuLaunchKernelEx", int32(cuda.ErrorNotSupported))
	launch("launch the driver refused with PDL", 0)
	launch("next launch", 0)
	if err := tk.AxpyPDLKernel.Launch(dev, kern.Cover(3), 2, x, y); err != nil || lastPDL() != 1 || !dev.PDL() {
		t.Errorf("AxpyPDL after the refusal: %v, pdl %d, Device.PDL() %v; want PDL kept", err, lastPDL(), dev.PDL())
	}

	const blocks, threads, rounds = 6, 64, 3
	n := blocks * threads
	want := gridRotateWant(blocks, threads, rounds)
	for _, dev := range devices() {
		buf, _ := kern.Alloc[int32](dev, n)
		acc, _ := kern.Alloc[int32](dev, n)
		g := kern.Blocks(gpu.Dim3{X: blocks, Y: 1, Z: 1}, gpu.Dim3{X: threads, Y: 1, Z: 1})
		if err := tk.GridRotatePDLKernel.Launch(dev, g, buf, acc, rounds); err != nil {
			t.Fatalf("%s: %v", dev.Kind(), err)
		}
		expectScaled(t, dev.Kind(), acc, want, 1)
	}
}
