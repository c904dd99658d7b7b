package ops

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/gemv3"
)

var gemv3Version = mmVersion{"gemv-v3", mmGEMVv3, tcConfig{}}

// TestGEMV3Splits checks v3 against float64 at M ∈ {1, 2, 8, 16} on ragged
// shapes with every kind of split: the plan's own (gemv3.Splits, as for an
// H100), none, and counts that do not divide K's chunks (77×200: 7
// chunks, the last past K, in 2, 3 and 7 splits of unequal length;
// 33×1064: 34 chunks, a warp's full iterations and a partial one).
func TestGEMV3Splits(t *testing.T) {
	t.Cleanup(func() { GEMVv3Splits = 0 })
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		for _, nk := range [][2]int{{77, 200}, {33, 1064}, {16, 512}} {
			for _, m := range []int{1, 2, 8, 16} {
				for _, splits := range []int{0, 1, 2, 3, 7} {
					sh := mmCase{m, nk[0], nk[1]}
					name := fmt.Sprintf("%dx%dx%d/splits=%d", m, sh.n, sh.k, splits)
					GEMVv3Splits = splits
					t.Run(name+"/bf16-bf16", func(t *testing.T) { testMatmul[gpu.BFloat16, gpu.BFloat16](t, dev, gemv3Version, sh, mmOpts{}) })
					t.Run(name+"/f16-f32", func(t *testing.T) { testMatmul[gpu.Half, float32](t, dev, gemv3Version, sh, mmOpts{}) })
				}
			}
		}
		// The epilogue after a split: the last block adds bias and residual
		// and applies the activation (SwiGLU pairs columns across the
		// tile's W rows r and r^1).
		GEMVv3Splits = 3
		for _, act := range []Activation{ActNone, ActGELU, ActSwiGLU} {
			sh := mmCase{13, 80, 264}
			o := mmOpts{act: act, bias: true, res: true}
			t.Run(fmt.Sprintf("epilogue/act%d", act), func(t *testing.T) { testMatmul[gpu.BFloat16, gpu.BFloat16](t, dev, gemv3Version, sh, o) })
		}
		GEMVv3Splits = 0
	})
}

// TestGEMV3Deterministic runs the same split product three times on one
// queue: the bits agree (the last block sums the partials in split
// order, whichever block arrives last) and every arrival counter is back
// to zero after each launch, ready for the next.
func TestGEMV3Deterministic(t *testing.T) {
	t.Cleanup(func() { GEMVv3Splits = 0 })
	GEMVv3Splits = 5
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		const m, n, k = 3, 50, 640
		rng := rand.New(rand.NewPCG(3, 50))
		a, _ := uploadIn[gpu.BFloat16](t, dev, randn(rng, m*k, 1))
		b, _ := uploadIn[gpu.BFloat16](t, dev, randn(rng, n*k, 0.05))
		var first []float32
		for i := range 3 {
			c := alloc[float32](t, dev, m*n)
			s := newShape("ops.Matmul")
			if err := matmulRun(s, mmGEMVv3, tcConfig{}, dev, c, a, b, m, n, k, MatmulOpts[float32]{}); err != nil {
				t.Fatal(err)
			}
			got, err := c.Download()
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = got
			} else if !slices.Equal(got, first) {
				t.Errorf("run %d differs from run 0", i)
			}
			v, ok := gemv3Scratches.Load(kern.Queue(dev))
			if !ok {
				t.Fatal("no scratch for the queue after a split launch")
			}
			cnt, err := v.(*gemv3Scratch).cnt.Download()
			if err != nil {
				t.Fatal(err)
			}
			if j := slices.IndexFunc(cnt, func(c uint32) bool { return c != 0 }); j >= 0 {
				t.Errorf("run %d: tile %d's arrival counter is %d after the launch, want 0", i, j, cnt[j])
			}
		}
	})
}

// TestGEMV3Plan checks the split plan on Qwen3-4B's projections for an
// H100's 132 SMs (the figures of gemv3.Splits' doc) and its limits.
func TestGEMV3Plan(t *testing.T) {
	for _, c := range []struct {
		name       string
		sms, n, k  int
		wantSplits int
	}{
		{"qkv", 132, 6144, 2560, 1},
		{"o", 132, 2560, 4096, 1}, // 160 tiles: whole (measured faster than split in 4)
		{"gate/up", 132, 19456, 2560, 1},
		{"down", 132, 2560, 9728, 1},
		{"0.6B o", 132, 1024, 2048, 2},            // 64 tiles: split to reach the SMs
		{"0.6B o, no SM count", 0, 1024, 2048, 2}, // plans for NominalSMs
		{"short K", 132, 2560, 1536, 1},           // 48 chunks: a split would have under 32
		{"K = 0", 132, 64, 0, 1},
	} {
		if got := gemv3.Splits(c.sms, c.n, c.k); got != c.wantSplits {
			t.Errorf("%s: Splits(%d, %d, %d) = %d, want %d", c.name, c.sms, c.n, c.k, got, c.wantSplits)
		}
	}
	for sms := 1; sms <= 200; sms += 13 {
		for _, n := range []int{1, 77, 2560, 6144} {
			for _, k := range []int{8, 1000, 4096, 9728} {
				s := gemv3.Splits(sms, n, k)
				if s < 1 || s > gemv3.MaxSplits || (s > 1 && (k+31)/32/s < 32) {
					t.Errorf("Splits(%d, %d, %d) = %d: out of 1…%d or under 32 chunks a split", sms, n, k, s, gemv3.MaxSplits)
				}
			}
		}
	}
}

// TestGEMV3FailedLaunchDropsScratch: a split launch that fails (here an
// emulator with too little shared memory for the block) forgets its
// queue's scratch, so that arrivals a stopped launch may have counted
// never reach the next one.
func TestGEMV3FailedLaunchDropsScratch(t *testing.T) {
	t.Cleanup(func() { GEMVv3Splits = 0 })
	GEMVv3Splits = 2
	dev := kern.OpenEmulator(emu.Options{MaxSharedPerBlock: gemv3.Shared / 2})
	defer dev.Close()
	a, _ := uploadIn[gpu.BFloat16](t, dev, make([]float64, 64))
	b, _ := uploadIn[gpu.BFloat16](t, dev, make([]float64, 16*64))
	c := alloc[float32](t, dev, 16)
	s := newShape("ops.Matmul")
	if err := matmulRun(s, mmGEMVv3, tcConfig{}, dev, c, a, b, 1, 16, 64, MatmulOpts[float32]{}); err == nil {
		t.Fatal("a block of 8 KiB of shared memory launched where 4 KiB are allowed")
	}
	if _, ok := gemv3Scratches.Load(kern.Queue(dev)); ok {
		t.Error("the failed launch's queue still has its scratch")
	}
}

// TestGEMV3ForcedSplitsClamp: GEMVv3Splits asks for at most one split per
// chunk of 32 columns of K, and MatmulVersion names what runs.
func TestGEMV3ForcedSplitsClamp(t *testing.T) {
	t.Cleanup(func() { GEMVv3Splits, GEMVv3 = 0, false })
	GEMVv3 = true
	dev := testDevices[0].dev
	for _, c := range []struct{ force, k, want int }{{8, 1024, 8}, {8, 200, 7}, {3, 8, 1}, {1000, 64, 2}} {
		GEMVv3Splits = c.force
		if got, want := MatmulVersion(dev, 1, 64, c.k, WeightNK), fmt.Sprintf("gemv v3 split %d", c.want); got != want {
			t.Errorf("GEMVv3Splits %d, k %d: MatmulVersion %q, want %q", c.force, c.k, got, want)
		}
	}
}

// TestGEMV3ConcurrentQueue: goroutines sharing one queue, each a split
// product of its own size (so the scratch grows while others use it),
// get the bits a lone run gets.
func TestGEMV3ConcurrentQueue(t *testing.T) {
	t.Cleanup(func() { GEMVv3Splits = 0 })
	GEMVv3Splits = 3
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		gemv3Drop(dev) // start from no scratch, so that it grows below
		type prob struct {
			m, n, k int
			a, b    *kern.Buffer[gpu.BFloat16]
			want    []float32
		}
		var ps []*prob
		for i, sh := range [][3]int{{1, 40, 320}, {16, 70, 640}, {5, 33, 1024}, {9, 100, 256}} {
			rng := rand.New(rand.NewPCG(uint64(i), 9))
			p := &prob{m: sh[0], n: sh[1], k: sh[2]}
			p.a, _ = uploadIn[gpu.BFloat16](t, dev, randn(rng, p.m*p.k, 1))
			p.b, _ = uploadIn[gpu.BFloat16](t, dev, randn(rng, p.n*p.k, 0.05))
			ps = append(ps, p)
		}
		run := func(p *prob) ([]float32, error) {
			c, err := kern.Alloc[float32](dev, p.m*p.n)
			if err != nil {
				return nil, err
			}
			defer c.Free()
			if err := matmulRun(newShape("ops.Matmul"), mmGEMVv3, tcConfig{}, dev, c, p.a, p.b, p.m, p.n, p.k, MatmulOpts[float32]{}); err != nil {
				return nil, err
			}
			return c.Download()
		}
		for _, p := range ps {
			var err error
			if p.want, err = run(p); err != nil {
				t.Fatal(err)
			}
		}
		gemv3Drop(dev)
		errs := make(chan error, 4*len(ps))
		for range 4 {
			for _, p := range ps {
				go func() {
					got, err := run(p)
					if err == nil && !slices.Equal(got, p.want) {
						err = fmt.Errorf("%d×%d×%d: the bits differ from a lone run", p.m, p.n, p.k)
					}
					errs <- err
				}()
			}
		}
		for range 4 * len(ps) {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
	})
}
