package gpu_test

// Tests of native-mode barriers, block reductions and warp collectives
// against references computed on plain slices.

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern/gpu"
)

// TestSharedReduction is the classic shared-memory tree reduction: it is
// only right if every Sync in the loop really waits for the whole block.
func TestSharedReduction(t *testing.T) {
	const blocks, threads = 37, 256
	in := make([]int64, blocks*threads)
	for i := range in {
		in[i] = int64(i*7919%1000) - 300
	}
	out := make([]int64, blocks)
	err := gpu.RunNative(d3(blocks, 1, 1), d3(threads, 1, 1), 0, func(th gpu.Thread) {
		s := gpu.Shared[int64](th, threads)
		i := th.LinearIdx()
		s[i] = in[th.GlobalX()]
		th.Sync()
		for stride := threads / 2; stride > 0; stride /= 2 {
			if i < stride {
				s[i] += s[i+stride]
			}
			th.Sync()
		}
		if i == 0 {
			out[th.BlockIdx().X] = s[0]
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for b := range blocks {
		var want int64
		for _, v := range in[b*threads : (b+1)*threads] {
			want += v
		}
		if out[b] != want {
			t.Errorf("block %d: sum %d, want %d", b, out[b], want)
		}
	}
}

func TestBlockReductions(t *testing.T) {
	for _, threads := range []int{1024, 64, 96, 40} {
		const blocks = 5
		in := make([]int32, blocks*threads)
		for i := range in {
			in[i] = int32(rand.IntN(2001) - 1000)
		}
		sum, mx, mn := make([]int32, len(in)), make([]int32, len(in)), make([]int32, len(in))
		err := gpu.RunNative(d3(blocks, 1, 1), d3(threads, 1, 1), 0, func(th gpu.Thread) {
			i := th.GlobalX()
			for range 3 { // in a loop: the results must not leak between rounds
				sum[i] = gpu.BlockSum(th, in[i])
				mx[i] = gpu.BlockMax(th, in[i])
				mn[i] = gpu.BlockMin(th, in[i])
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		for b := range blocks {
			part := in[b*threads : (b+1)*threads]
			var s, hi, lo int32 = 0, math.MinInt32, math.MaxInt32
			for _, v := range part {
				s, hi, lo = s+v, max(hi, v), min(lo, v)
			}
			for i := b * threads; i < (b+1)*threads; i++ {
				if sum[i] != s || mx[i] != hi || mn[i] != lo {
					t.Fatalf("%d threads, thread %d: sum/max/min %d %d %d, want %d %d %d",
						threads, i, sum[i], mx[i], mn[i], s, hi, lo)
				}
			}
		}
	}
}

// TestBlockSumFloatOrder checks the documented order: WarpSum per warp,
// then the same butterfly over the warps' sums.
func TestBlockSumFloatOrder(t *testing.T) {
	const threads = 320 // 10 warps: the second butterfly has missing partners
	in := make([]float32, threads)
	for i := range in {
		in[i] = float32(math.Ldexp(rand.Float64(), rand.IntN(40)-20))
	}
	got := make([]float32, threads)
	warpSums := make([]float32, threads/32)
	err := gpu.RunNative(d3(1, 1, 1), d3(threads, 1, 1), 0, func(th gpu.Thread) {
		i := th.LinearIdx()
		got[i] = gpu.BlockSum(th, in[i])
		ws := gpu.WarpSum(th, in[i])
		if th.Lane() == 0 {
			warpSums[th.Warp()] = ws
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	v := append([]float32(nil), warpSums...)
	for m := 16; m > 0; m /= 2 {
		for i := 0; i < m && i+m < len(v); i++ {
			v[i] += v[i+m]
		}
	}
	for i, g := range got {
		if g != v[0] {
			t.Fatalf("thread %d: BlockSum %v, want %v", i, g, v[0])
		}
	}
}

// shflRef is the reference for one lane of a shuffle in a warp of n lanes:
// a source outside 0..n-1 gives the lane's own value.
func shflRef(vals []int64, lane, src int) int64 {
	if src < 0 || src >= len(vals) {
		return vals[lane]
	}
	return vals[src]
}

func TestShuffles(t *testing.T) {
	for _, threads := range []int{64, 50, 7} { // full warps, a partial last warp, one partial warp
		vals := make([]int64, threads)
		for i := range vals {
			vals[i] = int64(rand.Uint64())
		}
		type res struct{ xor, down, up, idx [5]int64 }
		got := make([]res, threads)
		params := [5]int{1, 3, 8, 16, 31}
		err := gpu.RunNative(d3(1, 1, 1), d3(threads, 1, 1), 0, func(th gpu.Thread) {
			i := th.LinearIdx()
			for k, p := range params {
				got[i].xor[k] = gpu.ShflXor(th, vals[i], p)
				got[i].down[k] = gpu.ShflDown(th, vals[i], p)
				got[i].up[k] = gpu.ShflUp(th, vals[i], p)
				got[i].idx[k] = gpu.ShflIdx(th, vals[i], p+32*k)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := range threads {
			base := i / 32 * 32
			warp := vals[base:min(base+32, threads)]
			lane := i % 32
			for k, p := range params {
				down := lane + p
				if down >= 32 {
					down = lane
				}
				up := lane - p
				if up < 0 {
					up = lane
				}
				want := [4]int64{shflRef(warp, lane, lane^p), shflRef(warp, lane, down),
					shflRef(warp, lane, up), shflRef(warp, lane, p)}
				g := [4]int64{got[i].xor[k], got[i].down[k], got[i].up[k], got[i].idx[k]}
				if g != want {
					t.Fatalf("%d threads, thread %d, param %d: xor/down/up/idx %v, want %v", threads, i, p, g, want)
				}
			}
		}
	}
}

func TestShuffleTypes(t *testing.T) {
	f32 := make([]float32, 32)
	f64 := make([]float64, 32)
	u32 := make([]uint32, 32)
	err := gpu.RunNative(d3(1, 1, 1), d3(32, 1, 1), 0, func(th gpu.Thread) {
		l := th.Lane()
		f32[l] = gpu.ShflXor(th, float32(l)+0.5, 5)
		f64[l] = gpu.ShflXor(th, -float64(l)*1e300, 5)
		u32[l] = gpu.ShflXor(th, uint32(l)<<27|7, 5)
	})
	if err != nil {
		t.Fatal(err)
	}
	for l := range 32 {
		s := l ^ 5
		if f32[l] != float32(s)+0.5 || f64[l] != -float64(s)*1e300 || u32[l] != uint32(s)<<27|7 {
			t.Fatalf("lane %d: %v %v %v", l, f32[l], f64[l], u32[l])
		}
	}
}

func TestVotes(t *testing.T) {
	for _, threads := range []int{64, 45} {
		preds := make([]bool, threads)
		type res struct {
			ballot   uint32
			any, all bool
		}
		for round := range 4 {
			for i := range preds {
				switch round {
				case 0:
					preds[i] = false
				case 1:
					preds[i] = true
				default:
					preds[i] = rand.IntN(2) == 0
				}
			}
			got := make([]res, threads)
			err := gpu.RunNative(d3(1, 1, 1), d3(threads, 1, 1), 0, func(th gpu.Thread) {
				i := th.LinearIdx()
				got[i] = res{gpu.Ballot(th, preds[i]), gpu.Any(th, preds[i]), gpu.All(th, preds[i])}
			})
			if err != nil {
				t.Fatal(err)
			}
			for i := range threads {
				base := i / 32 * 32
				var mask, lanes uint32
				for l := base; l < min(base+32, threads); l++ {
					lanes |= 1 << (l - base)
					if preds[l] {
						mask |= 1 << (l - base)
					}
				}
				// All holds when every lane the warp has votes true.
				want := res{mask, mask != 0, mask == lanes}
				if got[i] != want {
					t.Fatalf("%d threads, round %d, thread %d: %+v, want %+v", threads, round, i, got[i], want)
				}
			}
		}
	}
}

func TestWarpReductions(t *testing.T) {
	const threads = 128
	in := make([]int64, threads)
	fin := make([]float64, threads)
	for i := range in {
		in[i] = rand.Int64N(1<<40) - 1<<39
		fin[i] = rand.NormFloat64()
	}
	sum, mx, mn := make([]int64, threads), make([]int64, threads), make([]int64, threads)
	fsum := make([]float64, threads)
	err := gpu.RunNative(d3(1, 1, 1), d3(threads, 1, 1), 0, func(th gpu.Thread) {
		i := th.LinearIdx()
		sum[i], mx[i], mn[i] = gpu.WarpSum(th, in[i]), gpu.WarpMax(th, in[i]), gpu.WarpMin(th, in[i])
		fsum[i] = gpu.WarpSum(th, fin[i])
	})
	if err != nil {
		t.Fatal(err)
	}
	for w := range threads / 32 {
		part := in[w*32 : w*32+32]
		var s, hi, lo int64 = 0, math.MinInt64, math.MaxInt64
		var fs float64
		for k, v := range part {
			s, hi, lo = s+v, max(hi, v), min(lo, v)
			fs += fin[w*32+k]
		}
		for i := w * 32; i < w*32+32; i++ {
			if sum[i] != s || mx[i] != hi || mn[i] != lo {
				t.Fatalf("thread %d: %d %d %d, want %d %d %d", i, sum[i], mx[i], mn[i], s, hi, lo)
			}
			if math.Abs(fsum[i]-fs) > 1e-12 || fsum[i] != fsum[w*32] {
				t.Fatalf("thread %d: float sum %v, want %v and the same on every lane", i, fsum[i], fs)
			}
		}
	}
}

// TestSyncWarp passes a value around a warp through shared memory many
// times; without the warp barriers the reads would see stale values.
func TestSyncWarp(t *testing.T) {
	out := make([]int, 64)
	err := gpu.RunNative(d3(1, 1, 1), d3(64, 1, 1), 0, func(th gpu.Thread) {
		s := gpu.Shared[int](th, 64)
		i, l := th.LinearIdx(), th.Lane()
		v := l
		for range 100 {
			s[i] = v
			th.SyncWarp()
			v = s[i-l+(l+1)%32] + 1
			th.SyncWarp()
		}
		out[i] = v
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if want := (i%32+100)%32 + 100; v != want {
			t.Fatalf("thread %d: %d, want %d", i, v, want)
		}
	}
}

// TestCollectivesDoNotAllocate checks that barriers and warp collectives
// cost no heap allocation per call: a launch doing 300 rounds allocates
// no more than one doing 10 (one allocation per call would add thousands).
func TestCollectivesDoNotAllocate(t *testing.T) {
	allocs := func(rounds int) float64 {
		x := make([]float32, 64)
		return testing.AllocsPerRun(3, func() {
			err := gpu.RunNative(d3(1, 1, 1), d3(64, 1, 1), 0, func(th gpu.Thread) {
				v := x[th.LinearIdx()]
				for range rounds {
					th.Sync()
					th.SyncWarp()
					v = gpu.ShflXor(th, v, 3) + gpu.ShflDown(th, v, 1)
					v += gpu.BlockSum(th, v)
					if gpu.Any(th, v > 0) {
						v = 0
					}
				}
				x[th.LinearIdx()] = v
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	few, many := allocs(10), allocs(300)
	t.Logf("%v allocations for 10 rounds, %v for 300", few, many)
	if many > few+20 {
		t.Errorf("%v allocations for 10 rounds, %v for 300: collectives allocate", few, many)
	}
}
