package kern_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	tk "github.com/gokern/kern/internal/testkernels"
)

// devices are the devices every host-API test runs on.
func devices() []*kern.Device {
	return []*kern.Device{kern.OpenNative(), kern.OpenEmulator()}
}

func randFloats(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3)))
	}
	return out
}

func TestAxpyMatchesReferenceOnEveryDevice(t *testing.T) {
	for _, n := range []int{1, 127, 128, 1000} {
		xs, ys := randFloats(n, 1), randFloats(n, 2)
		for _, dev := range devices() {
			x, _ := kern.Upload(dev, xs)
			y, _ := kern.Upload(dev, ys)
			if err := tk.AxpyKernel.Launch(dev, kern.Cover(n), 1.5, x, y); err != nil {
				t.Fatalf("%s n=%d: %v", dev.Kind(), n, err)
			}
			got, err := y.Download()
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				// Each float32 op rounds once, and PTX's mul.rn/add.rn do
				// exactly what Go does (no contraction): bit-exact.
				want := float32(1.5)*xs[i] + ys[i]
				if got[i] != want {
					t.Fatalf("%s n=%d: y[%d] = %v, want %v", dev.Kind(), n, i, got[i], want)
				}
			}
		}
	}
}

func TestScalarParameterABI(t *testing.T) {
	for _, dev := range devices() {
		out, _ := kern.Alloc[float64](dev, 8)
		err := tk.ScalarsKernel.Launch(dev, kern.Cover(1), true, -7, 65000, -123456, 1<<40+3, math.Pi,
			gpu.ToHalf(0.5), gpu.ToBFloat16(-2.5), out)
		if err != nil {
			t.Fatalf("%s: %v", dev.Kind(), err)
		}
		got, _ := out.Download()
		want := []float64{1, -7, 65000, -123456, 1<<40 + 3, math.Pi, 0.5, -2.5}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: out[%d] = %v, want %v", dev.Kind(), i, got[i], want[i])
			}
		}
	}
}

func TestDynamicSharedAndBlockSum(t *testing.T) {
	const n = 1000
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(i % 7)
	}
	for _, dev := range devices() {
		x, _ := kern.Upload(dev, xs)
		sums, _ := kern.Alloc[float32](dev, 4)
		if err := tk.BlockSumsKernel.Launch(dev, kern.Cover(n).WithShared(256*4), x, sums); err != nil {
			t.Fatalf("%s: %v", dev.Kind(), err)
		}
		got, _ := sums.Download()
		for b := range 4 {
			want := float32(0)
			for i := b * 256; i < min(n, (b+1)*256); i++ {
				want += xs[i]
			}
			if got[b] != want {
				t.Errorf("%s: block %d sum %v, want %v", dev.Kind(), b, got[b], want)
			}
		}
	}
}

func TestDeviceBoundsErrorNamesTheSource(t *testing.T) {
	for _, dev := range devices() {
		x, _ := kern.Upload(dev, []float32{1, 2, 3})
		idx, _ := kern.Upload(dev, []int32{0, 2, 5, 1})
		out, _ := kern.Alloc[float32](dev, 4)
		err := tk.GatherKernel.Launch(dev, kern.Cover(4), x, idx, out)
		if err == nil {
			t.Fatalf("%s: out-of-range gather succeeded", dev.Kind())
		}
		msg := err.Error()
		for _, want := range []string{"Gather", "kernels.go:", "5", "3"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: error %q does not mention %q", dev.Kind(), msg, want)
			}
		}
		var de *kern.DeviceError
		if !errors.As(err, &de) || de.Index != 5 || de.Length != 3 || de.Thread != (gpu.Dim3{X: 2}) {
			t.Errorf("%s: error %#v, want a DeviceError index 5 length 3 thread 2", dev.Kind(), err)
		}
	}
}

func TestPanicReachesTheHost(t *testing.T) {
	for _, dev := range devices() {
		x, _ := kern.Upload(dev, []float32{1, -1})
		err := tk.CheckedKernel.Launch(dev, kern.Cover(2), x)
		if err == nil || !strings.Contains(err.Error(), "kernels.go:") {
			t.Errorf("%s: error %v, want a panic naming kernels.go", dev.Kind(), err)
		}
	}
}

func TestLaunchChecks(t *testing.T) {
	for _, dev := range devices() {
		launchChecks(t, dev)
	}
}

func launchChecks(t *testing.T, dev *kern.Device) {
	other := kern.OpenEmulator()
	x, _ := kern.Upload(dev, []float32{1, 2})
	y, _ := kern.Upload(dev, []float32{1, 2})
	z, _ := kern.Upload(other, []float32{1, 2})
	freed, _ := kern.Upload(dev, []float32{1, 2})
	freed.Free()
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"aliased output", tk.AxpyKernel.Launch(dev, kern.Cover(2), 1, y, y), "parameter y is written by the kernel and overlaps parameter x"},
		{"other device", tk.AxpyKernel.Launch(dev, kern.Cover(2), 1, z, y), "parameter x: buffer lives on"},
		{"freed", tk.AxpyKernel.Launch(dev, kern.Cover(2), 1, x, freed), "parameter y: buffer was freed"},
		{"nil buffer", tk.AxpyKernel.Launch(dev, kern.Cover(2), 1, nil, y), "parameter x: nil buffer"},
		{"block over hint", tk.AxpyKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: 1}, gpu.Dim3{X: 256}), 1, x, y), "exceeds the kernel's block=128"},
		{"block over device", tk.CheckedKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: 1}, gpu.Dim3{X: 2048}), x), "exceeds the device's 1024"},
		{"shared over limit", tk.BlockSumsKernel.Launch(dev, kern.Cover(2).WithShared(100<<10), x, y), "shared memory"},
		{"wrong arg count", tk.AxpyKernel.Kernel().Launch(dev, kern.Cover(2), kern.ScalarArg(float32(1))), "got 1 arguments, want 3"},
		{"scalar for buffer", tk.AxpyKernel.Kernel().Launch(dev, kern.Cover(2), kern.ScalarArg(float32(1)), kern.ScalarArg(float32(1)), kern.BufferArg(y)), "want a buffer of float32, got a scalar"},
		{"wrong element size", tk.AxpyKernel.Kernel().Launch(dev, kern.Cover(2), kern.ScalarArg(1.0), kern.BufferArg(x), kern.BufferArg(y)), "want float32"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s %s: error %v, want one containing %q", dev.Kind(), c.name, c.err, c.want)
		}
	}
	if err := tk.CheckedKernel.Launch(dev, kern.Cover(0), x); err != nil {
		t.Errorf("Cover(0): %v, want a launch of nothing", err)
	}
	wantErr(t, dev.Kind()+" CopyFrom of the wrong length", x.CopyFrom([]float32{1, 2, 3}), "CopyFrom: 3 elements into a buffer of 2")
	wantErr(t, dev.Kind()+" CopyTo of the wrong length", x.CopyTo(make([]float32, 1)), "CopyTo: a buffer of 2 elements into 1")
	_, err := kern.Alloc[float32](dev, -1)
	wantErr(t, dev.Kind()+" negative Alloc", err, "negative length -1")
	if err := freed.Free(); err == nil {
		t.Error("double Free succeeded")
	}
	if _, err := freed.Download(); err == nil {
		t.Error("Download of a freed buffer succeeded")
	}
}

func TestOpenHonoursKernDevice(t *testing.T) {
	t.Setenv("KERN_DEVICE", "emu")
	d, err := kern.Open()
	if err != nil || d.Kind() != "emu" {
		t.Fatalf("KERN_DEVICE=emu: %v, %v", d, err)
	}
	t.Setenv("KERN_DEVICE", "native")
	if d, err := kern.Open(); err != nil || d.Kind() != "native" {
		t.Fatalf("KERN_DEVICE=native: %v, %v", d, err)
	}
	t.Setenv("KERN_DEVICE", "tpu")
	if _, err := kern.Open(); err == nil || !strings.Contains(err.Error(), "want auto, cuda, cuda:N, emu or native") {
		t.Fatalf("KERN_DEVICE=tpu: %v", err)
	}
}

// TestOpenWithoutADriver runs in a child process: the driver library is
// loaded once per process, and other tests load the stub.
func TestOpenWithoutADriver(t *testing.T) {
	if os.Getenv("KERN_TEST_CHILD") == "1" {
		if _, err := kern.Open(); !errors.Is(err, kern.ErrNoDriver) || !strings.Contains(err.Error(), "KERN_DEVICE=emu") {
			t.Fatalf("without a driver: %v, want ErrNoDriver saying how to use the emulator", err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenWithoutADriver$")
	cmd.Env = append(os.Environ(), "KERN_TEST_CHILD=1", "KERN_DEVICE=cuda", "KERN_LIBCUDA=/nonexistent/libcuda.so.1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func TestStreamsEventsAndGraphs(t *testing.T) {
	for _, dev := range devices() {
		s, err := dev.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		x, _ := kern.Upload(dev, []float32{1, 2, 3})
		y, _ := kern.Upload(dev, []float32{0, 0, 0})
		start, _ := s.Record()
		if err := tk.AxpyKernel.Launch(s, kern.Cover(3), 1, x, y); err != nil {
			t.Fatalf("%s: %v", dev.Kind(), err)
		}
		end, _ := s.Record()
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
		if d, err := kern.Elapsed(start, end); err != nil || d < 0 {
			t.Errorf("%s: Elapsed = %v, %v", dev.Kind(), d, err)
		}
		if err := start.Close(); err != nil {
			t.Error(err)
		}
		end.Close()
		// Capturing runs nothing; each replay adds x once more.
		g, err := s.Capture(func(s *kern.Stream) error {
			if err := tk.AxpyKernel.Launch(s, kern.Cover(3), 2, x, y); err != nil {
				return err
			}
			return tk.AxpyKernel.Launch(s, kern.Cover(3), -1, x, y)
		})
		if err != nil {
			t.Fatalf("%s: %v", dev.Kind(), err)
		}
		if got, _ := y.Download(); got[2] != 3 {
			t.Fatalf("%s: capture ran the launches: y = %v", dev.Kind(), got)
		}
		for range 3 {
			if err := g.Launch(s); err != nil {
				t.Fatalf("%s: %v", dev.Kind(), err)
			}
		}
		s.Sync()
		got, _ := y.Download()
		for i, want := range []float32{4, 8, 12} {
			if got[i] != want {
				t.Errorf("%s: after 3 replays y[%d] = %v, want %v", dev.Kind(), i, got[i], want)
			}
		}
		g.Close()
		s.Close()
	}
}

func TestIntegerDivideByZeroPanics(t *testing.T) {
	for _, dev := range devices() {
		x, _ := kern.Upload(dev, []int32{7, 8, 9})
		d, _ := kern.Upload(dev, []int32{2, 0, 3})
		out, _ := kern.Alloc[int32](dev, 3)
		err := tk.DivideKernel.Launch(dev, kern.Cover(3), x, d, out)
		if err == nil || !strings.Contains(err.Error(), "divide by zero") || !strings.Contains(err.Error(), "kernels.go:") {
			t.Errorf("%s: %v, want an integer divide by zero panic naming kernels.go", dev.Kind(), err)
		}
	}
	dev := kern.OpenEmulator()
	x, _ := kern.Upload(dev, []int32{7, -8, 9})
	d, _ := kern.Upload(dev, []int32{2, 3, -4})
	out, _ := kern.Alloc[int32](dev, 3)
	if err := tk.DivideKernel.Launch(dev, kern.Cover(3), x, d, out); err != nil {
		t.Fatal(err)
	}
	if got, _ := out.Download(); got[0] != 3 || got[1] != -2 || got[2] != -2 {
		t.Errorf("quotients %v, want [3 -2 -2] (truncated toward zero)", got)
	}
}

func TestPanicMessageReachesTheHost(t *testing.T) {
	dev := kern.OpenEmulator()
	x, _ := kern.Upload(dev, []float32{1, -1})
	err := tk.CheckedKernel.Launch(dev, kern.Cover(2), x)
	if err == nil || !strings.Contains(err.Error(), "negative input") {
		t.Errorf("error %v, want the panic's message", err)
	}
}

func TestSliceToArrayConversions(t *testing.T) {
	for _, dev := range devices() {
		xs := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}
		x, _ := kern.Upload(dev, xs)
		sums, _ := kern.Alloc[float32](dev, 2)
		rev, _ := kern.Alloc[float32](dev, 8)
		if err := tk.WindowsKernel.Launch(dev, kern.Cover(3), x, sums, rev); err != nil {
			t.Fatalf("%s: %v", dev.Kind(), err)
		}
		s, _ := sums.Download()
		r, _ := rev.Download()
		if s[0] != 10 || s[1] != 26 || r[0] != 4 || r[3] != 1 || r[4] != 8 || r[7] != 5 {
			t.Errorf("%s: sums %v, reversed %v", dev.Kind(), s, r)
		}
		// rev has 8 elements: a third group would need rev[8:12].
		short, _ := kern.Alloc[float32](dev, 6)
		if err := tk.WindowsKernel.Launch(dev, kern.Cover(3), x, sums, short); err == nil {
			t.Errorf("%s: converting a 2-element slice to [4]float32 succeeded", dev.Kind())
		}
	}
}

func TestUnrolledLoopsWithOtherSteps(t *testing.T) {
	for _, dev := range devices() {
		xs := make([]float32, 64)
		for i := range xs {
			xs[i] = float32(i)
		}
		x, _ := kern.Upload(dev, xs)
		sums, _ := kern.Alloc[float32](dev, 2)
		out, _ := kern.Alloc[int32](dev, 64)
		if err := tk.WarpSumsKernel.Launch(dev, kern.Cover(64), x, sums, out); err != nil {
			t.Fatalf("%s: %v", dev.Kind(), err)
		}
		s, _ := sums.Download()
		o, _ := out.Download()
		if s[0] != 496 || s[1] != 1520 {
			t.Errorf("%s: warp sums %v, want [496 1520]", dev.Kind(), s)
		}
		for i, v := range o {
			if want := int32(28 * (i % 32)); v != want {
				t.Fatalf("%s: out[%d] = %d, want %d", dev.Kind(), i, v, want)
			}
		}
	}
}

func TestVotesInAPartialWarp(t *testing.T) {
	const n = 45 // a full warp and a partial one of 13 lanes
	var results []string
	for _, dev := range devices() {
		for _, fill := range []bool{false, true} {
			preds := make([]bool, n)
			for i := range preds {
				preds[i] = fill || i%3 == 0
			}
			p, _ := kern.Upload(dev, preds)
			b, _ := kern.Alloc[uint32](dev, n)
			anyB, _ := kern.Alloc[bool](dev, n)
			allB, _ := kern.Alloc[bool](dev, n)
			if err := tk.VotesKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: 1}, gpu.Dim3{X: n}), p, b, anyB, allB); err != nil {
				t.Fatalf("%s: %v", dev.Kind(), err)
			}
			bs, _ := b.Download()
			as, _ := anyB.Download()
			ls, _ := allB.Download()
			if fill && (!ls[0] || !ls[44] || bs[44] != 1<<13-1) {
				t.Errorf("%s: all-true votes: ballot %#x, all %v/%v", dev.Kind(), bs[44], ls[0], ls[44])
			}
			results = append(results, fmt.Sprint(bs, as, ls))
		}
	}
	if results[0] != results[2] || results[1] != results[3] {
		t.Errorf("native and emu disagree:\n%s\n%s", results[1], results[3])
	}
}

// kern.Open with KERN_DEVICE unset (or auto) falls back to the emulator,
// with a banner on stderr, where the examples did so by hand; runs in a
// child process for the same reason as TestOpenWithoutADriver.
func TestOpenFallsBackToTheEmulator(t *testing.T) {
	if os.Getenv("KERN_TEST_CHILD") == "1" {
		d, err := kern.Open()
		if err != nil || d.Kind() != "emu" {
			t.Fatalf("KERN_DEVICE=%q without a driver: %v, %v; want the emulator", os.Getenv("KERN_DEVICE"), d, err)
		}
		if _, err := kern.Open(); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, spec := range []string{"", "auto"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestOpenFallsBackToTheEmulator$")
		cmd.Env = append(os.Environ(), "KERN_TEST_CHILD=1", "KERN_DEVICE="+spec, "KERN_LIBCUDA=/nonexistent/libcuda.so.1")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if out, err := cmd.Output(); err != nil {
			t.Fatalf("KERN_DEVICE=%q: child: %v\n%s%s", spec, err, out, stderr.String())
		}
		if n := strings.Count(stderr.String(), "no GPU found: running on the kern PTX emulator"); n != 1 {
			t.Errorf("KERN_DEVICE=%q: the banner appeared %d times on stderr, want once:\n%s", spec, n, stderr.String())
		}
	}
}
