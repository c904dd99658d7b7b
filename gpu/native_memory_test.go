package gpu_test

// Tests of native-mode shared memory and atomics.

import (
	"math"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/gokern/kern/gpu"
)

func TestSharedPerCallSite(t *testing.T) {
	const threads = 64
	type res struct {
		sameInLoop, distinctSites, zeroed bool
		aligned                           bool
		lenA, lenB                        int
	}
	got := make([]res, 3*threads)
	err := gpu.RunNative(d3(3, 1, 1), d3(threads, 1, 1), 0, func(th gpu.Thread) {
		var r res
		var first *float32
		r.sameInLoop = true
		for k := range 4 {
			a := gpu.Shared[float32](th, 33)
			if k == 0 {
				first = &a[0]
			} else if &a[0] != first {
				r.sameInLoop = false
			}
			r.lenA = len(a)
		}
		b := gpu.Shared[float32](th, 33)
		r.lenB = len(b)
		r.distinctSites = &b[0] != first
		r.aligned = uintptr(unsafe.Pointer(first))%16 == 0 && uintptr(unsafe.Pointer(&b[0]))%16 == 0
		// Every block must see zeroed memory, although the previous block
		// run by the same worker filled it.
		c := gpu.Shared[float32](th, 33)
		r.distinctSites = r.distinctSites && &c[0] != first && &c[0] != &b[0]
		r.zeroed = c[th.LinearIdx()%33] == 0 && b[th.LinearIdx()%33] == 0
		th.Sync()
		if i := th.LinearIdx(); i < 33 {
			c[i], b[i] = 1, 2
		}
		// All threads of a block share one array per site.
		th.Sync()
		for i := range 33 {
			if c[i] != 1 || b[i] != 2 {
				r.zeroed = false
			}
		}
		got[th.GlobalX()] = r
	})
	if err != nil {
		t.Fatal(err)
	}
	want := res{sameInLoop: true, distinctSites: true, zeroed: true, aligned: true, lenA: 33, lenB: 33}
	for i, r := range got {
		if r != want {
			t.Fatalf("thread %d: %+v, want %+v", i, r, want)
		}
	}
}

func TestSharedIsPerBlock(t *testing.T) {
	const blocks = 64
	sums := make([]int, blocks)
	err := gpu.RunNative(d3(blocks, 1, 1), d3(32, 1, 1), 0, func(th gpu.Thread) {
		s := gpu.Shared[int](th, 32)
		s[th.Lane()] = th.BlockIdx().X
		th.Sync()
		if th.Lane() == 0 {
			for _, v := range s {
				sums[th.BlockIdx().X] += v
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for b, s := range sums {
		if s != 32*b {
			t.Fatalf("block %d: sum %d, want %d (blocks running at once share an array?)", b, s, 32*b)
		}
	}
}

func TestSharedLengthMustBeConstant(t *testing.T) {
	err := gpu.RunNative(d3(1, 1, 1), d3(2, 1, 1), 0, func(th gpu.Thread) {
		gpu.Shared[int32](th, 4+th.LinearIdx())
	})
	if err == nil {
		t.Fatal("no error for a Shared length that varies between threads")
	}
}

func TestDynShared(t *testing.T) {
	const bytes = 100
	type res struct {
		lenF, lenI8, lenF64 int
		alias, aligned      bool
		zero                bool
	}
	got := make([]res, 2*32)
	err := gpu.RunNative(d3(2, 1, 1), d3(32, 1, 1), bytes, func(th gpu.Thread) {
		f := gpu.DynShared[float32](th)
		b := gpu.DynShared[int8](th)
		d := gpu.DynShared[float64](th)
		r := res{lenF: len(f), lenI8: len(b), lenF64: len(d)}
		r.zero = f[th.Lane()%len(f)] == 0
		r.aligned = uintptr(unsafe.Pointer(&b[0]))%16 == 0
		th.Sync()
		if th.Lane() == 0 {
			f[1] = math.Float32frombits(0x04030201)
		}
		th.Sync()
		r.alias = b[4] == 1 && b[5] == 2 && b[7] == 4 && unsafe.Pointer(&d[0]) == unsafe.Pointer(&f[0])
		got[th.GlobalX()] = r
	})
	if err != nil {
		t.Fatal(err)
	}
	want := res{lenF: 25, lenI8: 100, lenF64: 12, alias: true, aligned: true, zero: true}
	for i, r := range got {
		if r != want {
			t.Fatalf("thread %d: %+v, want %+v", i, r, want)
		}
	}
	err = gpu.RunNative(d3(1, 1, 1), d3(1, 1, 1), 0, func(th gpu.Thread) {
		if n := len(gpu.DynShared[float32](th)); n != 0 {
			panic(n)
		}
	})
	if err != nil {
		t.Errorf("no dynamic shared memory: %v", err)
	}
}

func TestAtomicHistogram(t *testing.T) {
	const n, bins = 1 << 16, 17
	hist := make([]int32, bins)
	hist64 := make([]uint64, bins)
	fsum := make([]float64, 1)
	err := gpu.RunNative(d3(n/256, 1, 1), d3(256, 1, 1), 0, func(th gpu.Thread) {
		i := th.GlobalX()
		b := i * 31 % bins
		gpu.AtomicAdd(&hist[b], 1)
		gpu.AtomicAdd(&hist64[b], uint64(i))
		gpu.AtomicAdd(&fsum[0], 0.5) // exact in any order
		// Shared-memory atomics too.
		s := gpu.Shared[int](th, bins)
		gpu.AtomicAdd(&s[b], 1)
	})
	if err != nil {
		t.Fatal(err)
	}
	var want [bins]int32
	var want64 [bins]uint64
	for i := range n {
		want[i*31%bins]++
		want64[i*31%bins] += uint64(i)
	}
	for b := range bins {
		if hist[b] != want[b] || hist64[b] != want64[b] {
			t.Errorf("bin %d: %d %d, want %d %d", b, hist[b], hist64[b], want[b], want64[b])
		}
	}
	if fsum[0] != n/2 {
		t.Errorf("float sum %v, want %v", fsum[0], n/2)
	}
}

func TestAtomicMaxMinExch(t *testing.T) {
	const n = 4096
	mx, mn := []int64{math.MinInt64}, []int64{math.MaxInt64}
	umx := []uint32{0}
	exch := []int32{-1}
	var seen [n]atomic.Bool
	err := gpu.RunNative(d3(n/128, 1, 1), d3(128, 1, 1), 0, func(th gpu.Thread) {
		i := th.GlobalX()
		v := int64(i*2654435761%n) - n/2
		gpu.AtomicMax(&mx[0], v)
		gpu.AtomicMin(&mn[0], v)
		gpu.AtomicMax(&umx[0], uint32(i))
		old := gpu.AtomicExch(&exch[0], int32(i))
		if old >= 0 {
			seen[old].Store(true)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if mx[0] != n/2-1 || mn[0] != -n/2 || umx[0] != n-1 {
		t.Errorf("max %d min %d umax %d, want %d %d %d", mx[0], mn[0], umx[0], n/2-1, -n/2, n-1)
	}
	// Exch chains: every value but the final one was returned exactly once.
	count := 0
	for i := range seen {
		if seen[i].Load() {
			count++
		} else if int32(i) != exch[0] {
			t.Errorf("value %d was neither returned by AtomicExch nor left in memory", i)
		}
	}
	if count != n-1 {
		t.Errorf("%d values returned, want %d", count, n-1)
	}
}

// TestAtomicCASLoop builds a float32 atomic multiply and an increment out of
// AtomicCAS, the way kernels build atomics the hardware lacks.
func TestAtomicCASLoop(t *testing.T) {
	prod := []float32{1}
	count := []int{0}
	err := gpu.RunNative(d3(4, 1, 1), d3(25, 1, 1), 0, func(th gpu.Thread) {
		for {
			old := gpu.AtomicAdd(&prod[0], 0) // an atomic read
			if gpu.AtomicCAS(&prod[0], old, old*2) == old {
				break
			}
		}
		for {
			old := gpu.AtomicAdd(&count[0], 0)
			if gpu.AtomicCAS(&count[0], old, old+1) == old {
				break
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if prod[0] != 0x1p100 || count[0] != 100 {
		t.Errorf("100 doublings and increments: %v and %d", prod[0], count[0])
	}
}

func TestAtomicCASComparesBits(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	nan := float32(math.NaN())
	cases := []struct {
		cell, cmp, new float32
		swapped        bool
	}{
		{0, negZero, 5, false}, // +0 == -0 numerically, not bitwise
		{negZero, negZero, 5, true},
		{nan, nan, 5, true}, // NaN != NaN numerically, equal bitwise
		{1, 1, 2, true},
		{1, 2, 3, false},
	}
	for _, c := range cases {
		cell := []float32{c.cell}
		var old float32
		err := gpu.RunNative(d3(1, 1, 1), d3(1, 1, 1), 0, func(th gpu.Thread) {
			old = gpu.AtomicCAS(&cell[0], c.cmp, c.new)
		})
		if err != nil {
			t.Fatal(err)
		}
		if math.Float32bits(old) != math.Float32bits(c.cell) || (cell[0] == c.new) != c.swapped {
			t.Errorf("CAS(%v, cmp %v, new %v): old %v, now %v; swapped want %v", c.cell, c.cmp, c.new, old, cell[0], c.swapped)
		}
	}
}
