package qwen3

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/internal/fixture"
	"github.com/gokern/kern/ops"
)

// TestFusedNormMatchesRMSNormCast: the GEMV with the RMSNorm fused in
// (ops.MatmulOpts.RMSNorm) gives the bits of what a decode layer ran
// before the fusion, rmsNormCast (a 256-thread gpu.BlockSum per row) and
// then the GEMV, on the emulator and in native mode, for bf16 and f16, at
// M = 1, 3 and 8 (the fused GEMV's limit), N not a multiple of its 16
// rows, K a multiple of 8 but not of 32 and K past the norm's
// 4096-element register pass, with float32 (q/k/v) and 16-bit SwiGLU
// (gate/up) outputs. Exact: both sum the squares in one order
// (ops/internal/gemvnorm/norm.go).
func TestFusedNormMatchesRMSNormCast(t *testing.T) {
	defer func(n int) { ops.FuseNormMaxRows = n }(ops.FuseNormMaxRows)
	ops.FuseNormMaxRows = 8 // every row count the kernel takes
	for _, d := range testDevices {
		for _, m := range []int{1, 3, 8} {
			for _, k := range []int{776, 1024, 4104} {
				name := fmt.Sprintf("%s/m=%d/k=%d", d.name, m, k)
				t.Run(name+"/bf16", func(t *testing.T) { testFusedNorm[gpu.BFloat16](t, d.dev, m, 38, k) })
				t.Run(name+"/f16", func(t *testing.T) { testFusedNorm[gpu.Half](t, d.dev, m, 38, k) })
			}
		}
	}
}

func testFusedNorm[T ops.Half16](t *testing.T, dev *kern.Device, m, n, k int) {
	if !ops.MatmulFusesNorm(m, k, ops.WeightNK, ops.KernelGEMV) {
		t.Fatalf("m=%d k=%d: the GEMV does not fuse the norm", m, k)
	}
	rng := rand.New(rand.NewPCG(uint64(m), uint64(k)))
	x := make([]float32, m*k)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * math.Pow(10, float64(i%5-2)))
	}
	g := make([]float32, k)
	for i := range g {
		g[i] = float32(1 + 0.5*rng.NormFloat64())
	}
	w := make([]T, n*k)
	for i := range w {
		w[i] = toT[T](float32(rng.NormFloat64() / math.Sqrt(float64(k))))
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	xb, err := kern.Upload(dev, x)
	must(err)
	defer xb.Free()
	gb, err := kern.Upload(dev, g)
	must(err)
	defer gb.Free()
	wb, err := kern.Upload(dev, w)
	must(err)
	defer wb.Free()
	h, err := kern.Alloc[T](dev, m*k)
	must(err)
	defer h.Free()
	const eps = 1e-6
	// q/k/v: float32 out; gate/up: SwiGLU, 16-bit out.
	c32 := [2]*kern.Buffer[float32]{}
	c16 := [2]*kern.Buffer[T]{}
	for i := range 2 {
		c32[i], err = kern.Alloc[float32](dev, m*n)
		must(err)
		defer c32[i].Free()
		c16[i], err = kern.Alloc[T](dev, m*n/2)
		must(err)
		defer c16[i].Free()
	}
	// Before: rmsNormCast into h, then the GEMV.
	must(rmsNormCastLaunch(dev, h, xb, gb, m, k, eps))
	must(ops.Matmul(dev, c32[0], h, wb, m, n, k, ops.MatmulOpts[float32]{Kernel: ops.KernelGEMV, StaticWeights: true}))
	must(ops.Matmul(dev, c16[0], h, wb, m, n, k, ops.MatmulOpts[T]{Act: ops.ActSwiGLU, Kernel: ops.KernelGEMV, StaticWeights: true}))
	// After: one launch each.
	rn := &ops.MatmulRMSNorm{X: xb, Weight: gb, Eps: eps}
	must(ops.Matmul(dev, c32[1], h, wb, m, n, k, ops.MatmulOpts[float32]{Kernel: ops.KernelGEMV, StaticWeights: true, RMSNorm: rn}))
	must(ops.Matmul(dev, c16[1], h, wb, m, n, k, ops.MatmulOpts[T]{Act: ops.ActSwiGLU, Kernel: ops.KernelGEMV, StaticWeights: true, RMSNorm: rn}))
	a, err := c32[0].Download()
	must(err)
	b, err := c32[1].Download()
	must(err)
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("q/k/v [%d]: fused %g, rmsNormCast then GEMV %g", i, b[i], a[i])
		}
	}
	a16, err := c16[0].Download()
	must(err)
	b16, err := c16[1].Download()
	must(err)
	for i := range a16 {
		if a16[i] != b16[i] {
			t.Fatalf("gate/up [%d]: fused %v, rmsNormCast then GEMV %v", i, b16[i], a16[i])
		}
	}
}

// TestNormOrderManyRows sharpens TestFusedNormMatchesRMSNormCast: a
// difference in the norm's sum order moves 1/rms by an ulp in some rows
// only, and that shows in a 16-bit output element once in about 2^13, so a
// few rows can hide it. Here 512 rows of f16 (K = 1024 and 2560): the
// rows ops.Matmul normalises into a where it does not fuse (normCast, the
// single-row path) and, 8 rows a launch, the fused GEMV's products
// (sumSquaresRows, the 2–8-row path) must equal rmsNormCast's and
// rmsNormCast-then-GEMV's bit for bit. On the emulator and in native
// mode (and on CUDA with -tags gpu, where rmsNormCast's gpu.BlockSum is
// the hardware's shuffles); swapping two of the eight warp sums'
// additions, or reversing a chunk's FMAs in the 2–8-row path, fails it.
func TestNormOrderManyRows(t *testing.T) {
	defer func(n int) { ops.FuseNormMaxRows = n }(ops.FuseNormMaxRows)
	ops.FuseNormMaxRows = 8 // the fused GEMV's 2–8-row path too
	for _, d := range testDevices {
		for _, k := range []int{1024, 2560} {
			t.Run(fmt.Sprintf("%s/k=%d", d.name, k), func(t *testing.T) { testNormOrderManyRows(t, d.dev, k) })
		}
	}
}

func testNormOrderManyRows(t *testing.T, dev *kern.Device, k int) {
	const rows, n, eps = 512, 16, 1e-6
	rng := rand.New(rand.NewPCG(uint64(k), 9))
	x := make([]float32, rows*k)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * math.Pow(10, float64(i%7-3)/2))
	}
	g := make([]float32, k)
	for i := range g {
		g[i] = float32(1 + 0.5*rng.NormFloat64())
	}
	w := make([]gpu.Half, n*k)
	for i := range w {
		w[i] = gpu.ToHalf(float32(rng.NormFloat64() / math.Sqrt(float64(k))))
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	xb, err := kern.Upload(dev, x)
	must(err)
	defer xb.Free()
	gb, err := kern.Upload(dev, g)
	must(err)
	defer gb.Free()
	wb, err := kern.Upload(dev, w)
	must(err)
	defer wb.Free()
	h, err := kern.Alloc[gpu.Half](dev, rows*k)
	must(err)
	defer h.Free()
	a, err := kern.Alloc[gpu.Half](dev, rows*k)
	must(err)
	defer a.Free()
	c, err := kern.Alloc[float32](dev, rows*n)
	must(err)
	defer c.Free()
	must(rmsNormCastLaunch(dev, h, xb, gb, rows, k, eps))
	// KernelTiles never fuses: a holds normCast's rows.
	must(ops.Matmul(dev, c, a, wb, rows, n, k, ops.MatmulOpts[float32]{Kernel: ops.KernelTiles, RMSNorm: &ops.MatmulRMSNorm{X: xb, Weight: gb, Eps: eps}}))
	hs, err := h.Download()
	must(err)
	as, err := a.Download()
	must(err)
	for i := range hs {
		if hs[i] != as[i] {
			t.Fatalf("row %d col %d: normCast %v, rmsNormCast %v", i/k, i%k, as[i], hs[i])
		}
	}
	// The fused GEMV, 8 rows a launch, against the GEMV on h.
	want, err := kern.Alloc[float32](dev, rows*n)
	must(err)
	defer want.Free()
	must(ops.Matmul(dev, want, h, wb, rows, n, k, ops.MatmulOpts[float32]{Kernel: ops.KernelGEMV}))
	ws, err := want.Download()
	must(err)
	for r0 := 0; r0 < rows; r0 += 8 {
		xs, err := kern.Upload(dev, x[r0*k:(r0+8)*k])
		must(err)
		c8, err := kern.Alloc[float32](dev, 8*n)
		must(err)
		a8, err := kern.Alloc[gpu.Half](dev, 8*k)
		must(err)
		err = ops.Matmul(dev, c8, a8, wb, 8, n, k, ops.MatmulOpts[float32]{Kernel: ops.KernelGEMV, RMSNorm: &ops.MatmulRMSNorm{X: xs, Weight: gb, Eps: eps}})
		got, derr := c8.Download()
		xs.Free()
		c8.Free()
		a8.Free()
		must(err)
		must(derr)
		for i, v := range got {
			if math.Float32bits(v) != math.Float32bits(ws[r0*n+i]) {
				t.Fatalf("row %d col %d: fused %g, rmsNormCast then GEMV %g", r0+i/n, i%n, v, ws[r0*n+i])
			}
		}
	}
}

// toT rounds v to T.
func toT[T ops.Half16](v float32) T {
	var z T
	switch p := any(&z).(type) {
	case *gpu.BFloat16:
		*p = gpu.ToBFloat16(v)
	case *gpu.Half:
		*p = gpu.ToHalf(v)
	}
	return z
}

// launchCounter is an emulator observer that counts launches.
type launchCounter struct{ n atomic.Int64 }

func (c *launchCounter) Step(*emu.Step)                {}
func (c *launchCounter) Access(*emu.Access)            {}
func (c *launchCounter) Launch(string, [3]int, [3]int) { c.n.Add(1) }
func (c *launchCounter) count(f func()) int64          { n := c.n.Load(); f(); return c.n.Load() - n }

var _ emu.LaunchObserver = (*launchCounter)(nil)

// TestDecodeFusesNorm: an untraced decode step launches two kernels a
// layer fewer with the RMSNorms fused into the q/k/v and gate/up GEMVs
// than with them as launches of their own (normLaunches, the path before
// the fusion), and two fewer at the end (the final norm fused into
// lm_head, and no gather of the last rows), and its logits are the same
// bits, step after step (on the emulator, whose observer counts the
// launches).
func TestDecodeFusesNorm(t *testing.T) {
	lc := &launchCounter{}
	dev := kern.OpenEmulator(emu.Options{Observer: lc})
	defer dev.Close()
	var logits [2][][]float32
	var launches [2][]int64
	var layers int
	for i, separate := range []bool{false, true} {
		m, err := Load(dev, fixture.Model(t, "tiny-qwen3-tied"), LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Free()
		if err := m.UseOps(); err != nil {
			t.Fatal(err)
		}
		m.ops.normLaunches = separate
		layers = m.Config.NumHiddenLayers
		c, err := m.NewCache(32)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Free()
		tok := []int32{3, 141, 59, 26}
		for s := range 4 {
			var out *kern.Buffer[float32]
			n := lc.count(func() { out, err = m.Forward(c, tok, false) })
			if err != nil {
				t.Fatalf("step %d: %v", s, err)
			}
			xs, err := out.Download()
			if err != nil {
				t.Fatal(err)
			}
			logits[i] = append(logits[i], xs)
			if s > 0 { // the decode steps; step 0 is the prefill
				launches[i] = append(launches[i], n)
			}
			tok = []int32{int32(17*s + 5)}
		}
	}
	for s := range launches[0] {
		// Two a layer, and at the end the gather of each sequence's last
		// row and the final norm.
		if got, want := launches[1][s]-launches[0][s], int64(2*layers+2); got != want {
			t.Errorf("decode step %d: %d launches fused, %d separate: %d fewer, want 2 a layer and 2 = %d", s+1, launches[0][s], launches[1][s], got, want)
		} else {
			t.Logf("decode step %d: %d launches (%d layers), %d with the norms separate", s+1, launches[0][s], layers, launches[1][s])
		}
	}
	for s := range logits[0] {
		for j := range logits[0][s] {
			if math.Float32bits(logits[0][s][j]) != math.Float32bits(logits[1][s][j]) {
				t.Fatalf("step %d logit %d: fused %g, separate %g", s, j, logits[0][s][j], logits[1][s][j])
			}
		}
	}
}
