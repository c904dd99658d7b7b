package gpu_test

// Tests of RunNative itself: indices, launch shapes, argument checks,
// panics and stuck barriers as errors, goroutine hygiene, and the
// element-wise throughput benchmark.

import (
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gokern/kern/gpu"
)

func d3(x, y, z int) gpu.Dim3 { return gpu.Dim3{X: x, Y: y, Z: z} }

// line records the source line after the one that calls next: a kernel
// marks the statement it expects an error to name.
type line struct{ n atomic.Int64 }

func (l *line) next() {
	_, _, n, _ := runtime.Caller(1)
	l.n.Store(int64(n) + 1)
}

func (l *line) String() string { return strconv.Itoa(int(l.n.Load())) }

func TestIndices(t *testing.T) {
	grid, block := d3(3, 2, 2), d3(8, 3, 5) // 120 threads: a partial last warp
	nb, nt := 3*2*2, 8*3*5
	type rec struct {
		tid, bid, bdim, gdim           gpu.Dim3
		linear, lane, warp, gx, gy, gz int
	}
	recs := make([]rec, nb*nt)
	var runs atomic.Int64
	err := gpu.RunNative(grid, block, 0, func(th gpu.Thread) {
		runs.Add(1)
		b := th.BlockIdx()
		bi := (b.Z*grid.Y+b.Y)*grid.X + b.X
		recs[bi*nt+th.LinearIdx()] = rec{th.ThreadIdx(), b, th.BlockDim(), th.GridDim(),
			th.LinearIdx(), th.Lane(), th.Warp(), th.GlobalX(), th.GlobalY(), th.GlobalZ()}
	})
	if err != nil {
		t.Fatal(err)
	}
	if runs.Load() != int64(nb*nt) {
		t.Fatalf("kernel ran %d times, want %d", runs.Load(), nb*nt)
	}
	for bi := range nb {
		bid := d3(bi%grid.X, bi/grid.X%grid.Y, bi/(grid.X*grid.Y))
		for li := range nt {
			tid := d3(li%block.X, li/block.X%block.Y, li/(block.X*block.Y))
			want := rec{tid, bid, block, grid, li, li % 32, li / 32,
				bid.X*block.X + tid.X, bid.Y*block.Y + tid.Y, bid.Z*block.Z + tid.Z}
			if got := recs[bi*nt+li]; got != want {
				t.Fatalf("block %d thread %d: got %+v, want %+v", bi, li, got, want)
			}
		}
	}
}

func TestZeroDimsAreOne(t *testing.T) {
	var n atomic.Int64
	var dims atomic.Value
	err := gpu.RunNative(gpu.Dim3{}, gpu.Dim3{X: 4}, 0, func(th gpu.Thread) {
		n.Add(1)
		dims.Store([2]gpu.Dim3{th.GridDim(), th.BlockDim()})
	})
	if err != nil {
		t.Fatal(err)
	}
	if n.Load() != 4 {
		t.Errorf("ran %d threads, want 4", n.Load())
	}
	if got := dims.Load().([2]gpu.Dim3); got != [2]gpu.Dim3{d3(1, 1, 1), d3(4, 1, 1)} {
		t.Errorf("grid, block = %v, want (1,1,1), (4,1,1)", got)
	}
}

func TestBadLaunch(t *testing.T) {
	k := func(gpu.Thread) {}
	for _, c := range []struct {
		name        string
		grid, block gpu.Dim3
		dyn         int
		kernel      func(gpu.Thread)
		want        string
	}{
		{"nil kernel", d3(1, 1, 1), d3(1, 1, 1), 0, nil, "nil kernel"},
		{"negative grid", d3(-1, 1, 1), d3(1, 1, 1), 0, k, "negative grid"},
		{"negative block", d3(1, 1, 1), d3(1, -2, 1), 0, k, "negative block"},
		{"big block", d3(1, 1, 1), d3(32, 33, 1), 0, k, "more than 1024 threads"},
		{"negative shared", d3(1, 1, 1), d3(1, 1, 1), -8, k, "negative dynamic shared"},
	} {
		err := gpu.RunNative(c.grid, c.block, c.dyn, c.kernel)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestPanicIsError(t *testing.T) {
	var at line
	err := gpu.RunNative(d3(4, 1, 1), d3(64, 1, 1), 0, func(th gpu.Thread) {
		s := make([]int, 64)
		i := th.LinearIdx()
		if th.BlockIdx().X == 2 && i == 37 {
			i = 64 + th.BlockIdx().X
		}
		at.next()
		s[i] = 1
	})
	var pe *gpu.PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v (%T), want a *gpu.PanicError", err, err)
	}
	if pe.Block != d3(2, 0, 0) || pe.Thread != d3(37, 0, 0) {
		t.Errorf("block %v thread %v, want (2,0,0) and (37,0,0)", pe.Block, pe.Thread)
	}
	if !strings.HasSuffix(pe.File, "native_launch_test.go") || strconv.Itoa(pe.Line) != at.String() {
		t.Errorf("position %s:%d, want native_launch_test.go:%v", pe.File, pe.Line, &at)
	}
	var re runtime.Error
	if !errors.As(err, &re) {
		t.Errorf("err does not wrap the runtime.Error")
	}
	want := "block (2,0,0) thread (37,0,0): panic at native_launch_test.go:"
	if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.Contains(msg, "index out of range [66] with length 64") {
		t.Errorf("message %q, want it to start %q and name the index", msg, want)
	}
	if !strings.Contains(pe.Stack, "native_launch_test.go") {
		t.Errorf("stack does not show the kernel:\n%s", pe.Stack)
	}
}

// A thread that panics while the rest of its block waits at a barrier must
// not leave them waiting.
func TestPanicWhileOthersWait(t *testing.T) {
	err := gpu.RunNative(d3(8, 1, 1), d3(128, 1, 1), 0, func(th gpu.Thread) {
		if th.LinearIdx() == 100 {
			panic("boom")
		}
		th.Sync()
		_ = gpu.WarpSum(th, 1)
	})
	var pe *gpu.PanicError
	if !errors.As(err, &pe) || pe.Value != "boom" || pe.Thread.X != 100 {
		t.Fatalf("err = %v, want thread 100's panic", err)
	}
}

func TestPanicInIntrinsicPointsAtKernel(t *testing.T) {
	var at line
	err := gpu.RunNative(d3(1, 1, 1), d3(33, 1, 1), 0, func(th gpu.Thread) {
		at.next()
		gpu.MMAF16(th, [4]uint32{}, [2]uint32{}, [4]float32{})
	})
	var pe *gpu.PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a panic", err)
	}
	if strconv.Itoa(pe.Line) != at.String() || !strings.Contains(err.Error(), "needs a full warp") {
		t.Errorf("err = %v at line %d, want line %v and 'needs a full warp'", err, pe.Line, &at)
	}
}

func TestGoexitIsError(t *testing.T) {
	err := gpu.RunNative(d3(2, 1, 1), d3(32, 1, 1), 0, func(th gpu.Thread) {
		if th.GlobalX() == 40 {
			runtime.Goexit()
		}
	})
	if err == nil || !strings.Contains(err.Error(), "Goexit") {
		t.Fatalf("err = %v, want a Goexit error", err)
	}
}

func TestBarrierDivergence(t *testing.T) {
	var at line
	err := gpu.RunNative(d3(2, 1, 1), d3(64, 1, 1), 0, func(th gpu.Thread) {
		if th.BlockIdx().X == 1 && th.LinearIdx() >= 48 {
			return
		}
		at.next()
		th.Sync()
	})
	var be *gpu.BarrierError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v (%T), want a *gpu.BarrierError", err, err)
	}
	want := "block (1,0,0): barrier divergence: 48 threads at Sync (native_launch_test.go:" + at.String() + "), 16 returned"
	if err.Error() != want {
		t.Errorf("err = %q\nwant  %q", err, want)
	}
}

func TestBarrierMismatch(t *testing.T) {
	var l1, l2 line
	err := gpu.RunNative(d3(1, 1, 1), d3(64, 1, 1), 0, func(th gpu.Thread) {
		if th.Warp() == 0 {
			l1.next()
			th.Sync()
		} else {
			l2.next()
			th.Sync()
		}
	})
	var be *gpu.BarrierError
	if !errors.As(err, &be) || be.Kind != "barrier mismatch" {
		t.Fatalf("err = %v, want a barrier mismatch", err)
	}
	for _, l := range []*line{&l1, &l2} {
		if !strings.Contains(be.Detail, "32 threads at Sync (native_launch_test.go:"+l.String()+")") {
			t.Errorf("detail %q does not name line %v", be.Detail, l)
		}
	}
}

func TestWarpDeadlock(t *testing.T) {
	// Half of warp 1 shuffles, the other half waits at the block barrier:
	// neither can ever complete.
	var l1, l2 line
	err := gpu.RunNative(d3(1, 1, 1), d3(64, 1, 1), 0, func(th gpu.Thread) {
		if th.Warp() == 1 && th.Lane() < 16 {
			l1.next()
			gpu.ShflXor(th, 1.0, 1)
		}
		l2.next()
		th.Sync()
	})
	var be *gpu.BarrierError
	if !errors.As(err, &be) || be.Kind != "deadlock" {
		t.Fatalf("err = %v, want a deadlock", err)
	}
	for _, want := range []string{
		"16 threads at Shfl (native_launch_test.go:" + l1.String() + ")",
		"48 threads at Sync (native_launch_test.go:" + l2.String() + ")",
		"0 returned",
	} {
		if !strings.Contains(be.Detail, want) {
			t.Errorf("detail %q lacks %q", be.Detail, want)
		}
	}
}

func TestWarpCollectiveMismatch(t *testing.T) {
	err := gpu.RunNative(d3(1, 1, 1), d3(32, 1, 1), 0, func(th gpu.Thread) {
		if th.Lane() < 8 {
			gpu.Ballot(th, true)
		} else {
			gpu.ShflIdx(th, 1, 0)
		}
	})
	var be *gpu.BarrierError
	if !errors.As(err, &be) || be.Kind != "warp collective mismatch" ||
		!strings.Contains(be.Detail, "8 threads at Ballot/Any/All") || !strings.Contains(be.Detail, "24 threads at Shfl") {
		t.Fatalf("err = %v, want a warp collective mismatch of 8 Ballot and 24 Shfl", err)
	}
}

// Failed launches must not leave goroutines behind or hang.
func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	for range 20 {
		_ = gpu.RunNative(d3(16, 1, 1), d3(256, 1, 1), 0, func(th gpu.Thread) {
			if th.LinearIdx() == 255 {
				return
			}
			th.Sync()
		})
		_ = gpu.RunNative(d3(16, 1, 1), d3(256, 1, 1), 0, func(th gpu.Thread) {
			th.Sync()
			if th.GlobalX() == 1000 {
				panic("x")
			}
			th.Sync()
		})
		_ = gpu.RunNative(d3(4, 1, 1), d3(64, 1, 1), 0, func(th gpu.Thread) { th.Sync() })
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines before, %d after", before, n)
	}
}

// After a failure no further blocks start. Blocks other than the failing
// one take 100µs each, so that even if the failing block's worker is
// descheduled for a long while, the others get nowhere near the end.
func TestFailureStopsLaunch(t *testing.T) {
	const blocks = 100000
	var ran atomic.Int64
	err := gpu.RunNative(d3(blocks, 1, 1), d3(32, 1, 1), 0, func(th gpu.Thread) {
		if th.BlockIdx().X == 0 {
			panic("stop")
		}
		if th.LinearIdx() == 0 {
			ran.Add(1)
			time.Sleep(100 * time.Microsecond)
		}
	})
	if err == nil {
		t.Fatal("no error")
	}
	if n := ran.Load(); n > blocks/2 {
		t.Errorf("%d of %d blocks ran after a failure in block 0", n, blocks)
	}
}

// A failure stops blocks that are already running at their next barrier.
func TestFailureStopsRunningBlocks(t *testing.T) {
	const rounds = 1_000_000 // minutes of barriers if nothing stopped them
	var done atomic.Int64
	start := time.Now()
	err := gpu.RunNative(d3(4, 1, 1), d3(64, 1, 1), 0, func(th gpu.Thread) {
		for r := range rounds {
			if th.BlockIdx().X == 0 && r == 100 {
				panic("stop")
			}
			th.Sync()
			gpu.WarpSum(th, 1)
		}
		done.Add(1)
	})
	if err == nil || !strings.Contains(err.Error(), "stop") {
		t.Fatalf("err = %v, want the panic", err)
	}
	if done.Load() != 0 {
		t.Errorf("%d threads finished all rounds", done.Load())
	}
	t.Logf("stopped after %v", time.Since(start))
}

const elementwiseN = 1 << 20

func elementwise(x, y, out []float32) error {
	return gpu.RunNative(d3((len(out)+255)/256, 1, 1), d3(256, 1, 1), 0, func(th gpu.Thread) {
		i := th.GlobalX()
		if i < len(out) {
			xi := x[i]
			out[i] = xi / (1 + gpu.Exp(-xi)) * y[i]
		}
	})
}

func TestElementwise1M(t *testing.T) {
	x, y, out := make([]float32, elementwiseN), make([]float32, elementwiseN), make([]float32, elementwiseN)
	for i := range x {
		x[i], y[i] = float32(i%1000)/100-5, float32(i%7)
	}
	start := time.Now()
	if err := elementwise(x, y, out); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d threads in %v", elementwiseN, time.Since(start))
	for i := range out {
		xi := x[i]
		if want := xi / (1 + gpu.Exp(-xi)) * y[i]; out[i] != want {
			t.Fatalf("out[%d] = %v, want %v", i, out[i], want)
		}
	}
}

func BenchmarkElementwise1M(b *testing.B) {
	x, y, out := make([]float32, elementwiseN), make([]float32, elementwiseN), make([]float32, elementwiseN)
	for b.Loop() {
		if err := elementwise(x, y, out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWarpSum1M reduces 1M values with a WarpSum per warp: five
// 32-lane rendezvous per warp.
func BenchmarkWarpSum1M(b *testing.B) {
	x, out := make([]float32, elementwiseN), make([]float32, elementwiseN/32)
	for b.Loop() {
		err := gpu.RunNative(d3(elementwiseN/256, 1, 1), d3(256, 1, 1), 0, func(th gpu.Thread) {
			s := gpu.WarpSum(th, x[th.GlobalX()])
			if th.Lane() == 0 {
				out[th.GlobalX()/32] = s
			}
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBlockSum1M reduces 1M values with a BlockSum per 256-thread
// block.
func BenchmarkBlockSum1M(b *testing.B) {
	x, out := make([]float32, elementwiseN), make([]float32, elementwiseN/256)
	for b.Loop() {
		err := gpu.RunNative(d3(elementwiseN/256, 1, 1), d3(256, 1, 1), 0, func(th gpu.Thread) {
			s := gpu.BlockSum(th, x[th.GlobalX()])
			if th.LinearIdx() == 0 {
				out[th.BlockIdx().X] = s
			}
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSync measures one block barrier of 256 threads.
func BenchmarkSync(b *testing.B) {
	for b.Loop() {
		err := gpu.RunNative(d3(1, 1, 1), d3(256, 1, 1), 0, func(th gpu.Thread) {
			for range 100 {
				th.Sync()
			}
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
