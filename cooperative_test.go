package kern_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ebitengine/purego"

	"github.com/gokern/kern"
	"github.com/gokern/kern/cuda"
	"github.com/gokern/kern/gpu"
	tk "github.com/gokern/kern/internal/testkernels"
)

// TestGridSyncNormalizes: one cooperative launch sums x over the grid and
// scales it, against a float64 reference, on the emulator and natively,
// at sizes from one element to many per thread and grids of 1 to 16.
func TestGridSyncNormalizes(t *testing.T) {
	for _, n := range []int{1, 37, 2048, 50001} {
		xs := randFloats(n, uint64(n))
		for i := range xs {
			xs[i] = float32(math.Abs(float64(xs[i]))) + 1e-3 // a positive sum
		}
		sum, mag := 0.0, 0.0
		for _, v := range xs {
			sum += float64(v)
			mag += math.Abs(float64(v))
		}
		for _, blocks := range []int{1, 5, 16} {
			for _, dev := range devices() {
				x, _ := kern.Upload(dev, xs)
				out, _ := kern.Alloc[float32](dev, n)
				part, _ := kern.Alloc[float32](dev, blocks)
				grid := kern.Blocks(gpu.Dim3{X: blocks, Y: 1, Z: 1}, gpu.Dim3{X: 128, Y: 1, Z: 1})
				if err := tk.GridNormalizeKernel.Launch(dev, grid, x, out, part); err != nil {
					t.Fatalf("%s n=%d blocks=%d: %v", dev.Kind(), n, blocks, err)
				}
				got, err := out.Download()
				if err != nil {
					t.Fatal(err)
				}
				// float32 sums of n positive terms: relative error below
				// n·2^-24 of the sum of magnitudes, scaled by the sum.
				tol := float64(n+blocks) * 0x1p-24 * mag / sum
				for i, v := range got {
					want := float64(xs[i]) / sum
					if math.Abs(float64(v)-want) > tol*want+1e-30 {
						t.Fatalf("%s n=%d blocks=%d: out[%d] = %g, want %g (tol %.2g)", dev.Kind(), n, blocks, i, v, want, tol)
					}
				}
			}
		}
	}
}

// TestGridSyncRounds runs rounds in which every thread reads, after a
// GridSync, what a thread of the next block wrote before it: exact
// integers, repeated launches on one queue (the barrier is cleared
// before each), and a captured graph of three launches replayed twice.
func TestGridSyncRounds(t *testing.T) {
	const blocks, threads, rounds = 6, 64, 4
	n := blocks * threads
	want := gridRotateWant(blocks, threads, rounds)
	grid := kern.Blocks(gpu.Dim3{X: blocks, Y: 1, Z: 1}, gpu.Dim3{X: threads, Y: 1, Z: 1})
	for _, dev := range devices() {
		buf, _ := kern.Alloc[int32](dev, n)
		acc, _ := kern.Alloc[int32](dev, n)
		for k := 1; k <= 2; k++ {
			if err := tk.GridRotateKernel.Launch(dev, grid, buf, acc, rounds); err != nil {
				t.Fatalf("%s: %v", dev.Kind(), err)
			}
			expectScaled(t, dev.Kind(), acc, want, int32(k))
		}
		s, err := dev.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		acc2, _ := kern.Alloc[int32](dev, n)
		// Three launches in one capture share a region of barrier slots,
		// cleared once ahead of the first (cooperative.go).
		g, err := s.Capture(func(s *kern.Stream) error {
			for range 3 {
				if err := tk.GridRotateKernel.Launch(s, grid, buf, acc2, rounds); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: capture: %v", dev.Kind(), err)
		}
		for k := 1; k <= 2; k++ {
			if err := g.Launch(s); err != nil {
				t.Fatalf("%s: replay: %v", dev.Kind(), err)
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			expectScaled(t, dev.Kind()+" graph", acc2, want, int32(3*k))
		}
		s.Close()
	}
}

// gridRotateWant is GridRotate's acc after one launch of rounds on blocks
// of threads (internal/testkernels/grid.go).
func gridRotateWant(blocks, threads, rounds int) []int32 {
	n := blocks * threads
	want := make([]int32, n)
	for i := range want {
		for r := 0; r < rounds; r++ {
			want[i] += int32(r*n + (i+threads*(r+1))%n)
		}
	}
	return want
}

// stubGridKernel opens the stub libcuda's test hooks and registers the
// signature of a GridRotate-shaped kernel (two slices, the rounds, the
// hidden barrier), returning the library's handle.
func stubGridKernel(t *testing.T, kernel string) uintptr {
	t.Helper()
	h, err := purego.Dlopen(cuda.Library(), purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	var setSizes func(kernel string, n int32, sizes *int32) int32
	purego.RegisterLibFunc(&setSizes, h, "stub_set_param_sizes")
	sizes := []int32{8, 8, 8, 8, 8, 8} // buf ptr, len, acc ptr, len, rounds, kern_grid
	if setSizes(kernel, int32(len(sizes)), &sizes[0]) != 0 {
		t.Fatal("stub_set_param_sizes failed")
	}
	return h
}

func expectScaled(t *testing.T, what string, b *kern.Buffer[int32], want []int32, k int32) {
	t.Helper()
	got, err := b.Download()
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != k*want[i] {
			t.Fatalf("%s: launch %d: acc[%d] = %d, want %d", what, k, i, got[i], k*want[i])
		}
	}
}

// TestGridSyncEndsOnAFailedCheck: a bounds check that fails in one block
// before a GridSync ends the launch with its DeviceError; the blocks at
// the grid barrier do not wait for the block that never arrives.
func TestGridSyncEndsOnAFailedCheck(t *testing.T) {
	for _, dev := range devices() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		x, _ := kern.Upload(dev, []float32{1, 2, 3})
		out, _ := kern.Alloc[float32](dev, 4*32)
		grid := kern.Blocks(gpu.Dim3{X: 4, Y: 1, Z: 1}, gpu.Dim3{X: 32, Y: 1, Z: 1})
		err := tk.GridFaultKernel.Launch(kern.WithContext(ctx, dev), grid, x, out, 7)
		cancel()
		var de *kern.DeviceError
		if !errors.As(err, &de) || de.Index != 7 || de.Length != 3 || de.Block != (gpu.Dim3{X: 1}) || de.Thread != (gpu.Dim3{X: 3}) || !strings.Contains(err.Error(), "grid.go:") {
			t.Fatalf("%s: got %v, want the DeviceError of x[7] at block 1 thread 3", dev.Kind(), err)
		}
		// The next launch on the device runs normally: its barrier is
		// cleared, whatever the failed one left in it.
		if err := tk.GridFaultKernel.Launch(dev, grid, x, out, 2); err != nil {
			t.Fatalf("%s: after the failure: %v", dev.Kind(), err)
		}
	}
}

// TestCooperativeGridLimit: a grid larger than the device holds at once is
// refused before it runs, naming MaxCooperativeBlocks.
func TestCooperativeGridLimit(t *testing.T) {
	for _, dev := range devices() {
		max, err := tk.GridRotateKernel.Kernel().MaxCooperativeBlocks(dev, gpu.Dim3{X: 64, Y: 1, Z: 1}, 0)
		if err != nil || max != 128 {
			t.Fatalf("%s: MaxCooperativeBlocks = %d, %v; want 128", dev.Kind(), max, err)
		}
		n := (max + 1) * 64
		buf, _ := kern.Alloc[int32](dev, n)
		acc, _ := kern.Alloc[int32](dev, n)
		err = tk.GridRotateKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: max + 1, Y: 1, Z: 1}, gpu.Dim3{X: 64, Y: 1, Z: 1}), buf, acc, 1)
		if err == nil || !strings.Contains(err.Error(), "GridRotate") || !strings.Contains(err.Error(), "MaxCooperativeBlocks") || !strings.Contains(err.Error(), "at most 128") {
			t.Fatalf("%s: got %v", dev.Kind(), err)
		}
	}
}

// TestCooperativeOnTheStubDriver: on the stub GPU a cooperative kernel is
// launched through cuLaunchKernelEx with the cooperative attribute and its
// grid barrier as the hidden last parameter, one slot per queue and one
// per captured launch; MaxCooperativeBlocks is the occupancy calculator's
// figure times the SMs; a kernel without GridSync is launched as before.
func TestCooperativeOnTheStubDriver(t *testing.T) {
	dev := openStubGPU(t, 0)
	defer dev.Close()
	h := stubGridKernel(t, "GridRotate")
	var lastCoop func() int32
	var lastParam func(i int32, out *uint64, cap int32) int32
	purego.RegisterLibFunc(&lastCoop, h, "stub_last_coop")
	purego.RegisterLibFunc(&lastParam, h, "stub_last_param")
	block := gpu.Dim3{X: 64, Y: 1, Z: 1}
	max, err := tk.GridRotateKernel.Kernel().MaxCooperativeBlocks(dev, block, 0)
	per, sms := 2048/64, dev.Multiprocessors() // the stub's occupancy rule: min(2048/bs, 32, regs)
	if err != nil || max != min(per, 32)*sms {
		t.Fatalf("MaxCooperativeBlocks = %d, %v; want %d×%d", max, err, min(per, 32), sms)
	}
	buf, _ := kern.Alloc[int32](dev, 4*64)
	acc, _ := kern.Alloc[int32](dev, 4*64)
	grid := kern.Blocks(gpu.Dim3{X: 4, Y: 1, Z: 1}, block)
	slot := func() uint64 {
		var v uint64
		if lastParam(5, &v, 8) != 8 { // buf ptr, len, acc ptr, len, rounds, kern_grid
			t.Fatal("the last launch has no sixth parameter")
		}
		return v
	}
	if err := tk.GridRotateKernel.Launch(dev, grid, buf, acc, 1); err != nil {
		t.Fatal(err)
	}
	if lastCoop() != 1 {
		t.Error("GridRotate was not launched cooperatively")
	}
	first := slot()
	if err := tk.GridRotateKernel.Launch(dev, grid, buf, acc, 1); err != nil {
		t.Fatal(err)
	}
	if s := slot(); s != first || s == 0 {
		t.Errorf("two launches on one queue used barriers %#x and %#x, want one", first, s)
	}
	s, err := dev.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := tk.GridRotateKernel.Launch(s, grid, buf, acc, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if other := slot(); other == first {
		t.Error("a second queue shares the first queue's barrier")
	}
	x, _ := kern.Upload(dev, []float32{1})
	y, _ := kern.Alloc[float32](dev, 1)
	if err := tk.AxpyKernel.Launch(dev, kern.Cover(1), 2, x, y); err != nil {
		t.Fatal(err)
	}
	if lastCoop() != 0 {
		t.Error("Axpy (no GridSync) was launched cooperatively")
	}
}

// TestCooperativeCaptureClearsOnce: a captured cooperative launch takes
// its barrier from its capture's region of slots, and the capture clears
// a region once, ahead of its first launch: 3 launches record one memset,
// 70 record two (64 slots a region), where launches on a queue clear
// their slot each time. Each captured launch still has a slot of its own.
func TestCooperativeCaptureClearsOnce(t *testing.T) {
	dev := openStubGPU(t, 0)
	defer dev.Close()
	h := stubGridKernel(t, "GridRotate")
	var calls func(name string) int64
	var lastParam func(i int32, out *uint64, cap int32) int32
	purego.RegisterLibFunc(&calls, h, "stub_calls")
	purego.RegisterLibFunc(&lastParam, h, "stub_last_param")
	buf, _ := kern.Alloc[int32](dev, 4*64)
	acc, _ := kern.Alloc[int32](dev, 4*64)
	grid := kern.Blocks(gpu.Dim3{X: 4, Y: 1, Z: 1}, gpu.Dim3{X: 64, Y: 1, Z: 1})
	s, err := dev.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	memsets := func() int64 { return calls("cuMemsetD32Async") }
	slot := func() uint64 {
		var v uint64
		if lastParam(5, &v, 8) != 8 {
			t.Fatal("the last launch has no sixth parameter")
		}
		return v
	}
	seen := map[uint64]bool{}

	before := memsets()
	for range 3 {
		if err := tk.GridRotateKernel.Launch(s, grid, buf, acc, 1); err != nil {
			t.Fatal(err)
		}
	}
	if n := memsets() - before; n != 3 {
		t.Errorf("3 launches on a queue made %d memsets, want 3", n)
	}
	seen[slot()] = true
	for _, c := range []struct{ launches, memsets int }{{3, 1}, {70, 2}} {
		before := memsets()
		g, err := s.Capture(func(s *kern.Stream) error {
			for range c.launches {
				if err := tk.GridRotateKernel.Launch(s, grid, buf, acc, 1); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := memsets() - before; n != int64(c.memsets) {
			t.Errorf("a capture of %d cooperative launches recorded %d memsets, want %d", c.launches, n, c.memsets)
		}
		// The stub replays a graph's launches in order, so the last
		// launch's barrier is the capture's last slot: a slot of its own.
		if err := g.Launch(s); err != nil {
			t.Fatal(err)
		}
		if last := slot(); last == 0 || seen[last] {
			t.Errorf("the last of %d captured launches has barrier %#x, used before", c.launches, last)
		} else {
			seen[last] = true
		}
		g.Close()
	}
}

// TestGridSyncDivergenceIsReported: a block that returns before a
// GridSync the others wait at ends the launch with an error naming the
// barrier, on the emulator (every block still running only polls, and
// nothing writes) and natively, instead of waiting forever as a GPU would.
func TestGridSyncDivergenceIsReported(t *testing.T) {
	for _, dev := range devices() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		out, _ := kern.Alloc[float32](dev, 4*32)
		start := time.Now()
		err := tk.GridDivergeKernel.Launch(kern.WithContext(ctx, dev), kern.Blocks(gpu.Dim3{X: 4, Y: 1, Z: 1}, gpu.Dim3{X: 32, Y: 1, Z: 1}), out)
		cancel()
		if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "grid barrier") {
			t.Fatalf("%s: got %v after %v, want a grid barrier error", dev.Kind(), err, time.Since(start))
		}
		t.Logf("%s (%v): %v", dev.Kind(), time.Since(start), err)
	}
}
