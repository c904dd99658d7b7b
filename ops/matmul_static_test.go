package ops

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
)

// TestMatmulStaticWeights: the decode GEMV with StaticWeights loads its
// first iteration's weights before it waits for the kernels before it
// (gpu.WaitPriorGrids); its results are the float64 reference's, and bit
// for bit those without the option, at K with no whole iteration, one,
// and several plus a tail (an iteration is 1024 columns).
func TestMatmulStaticWeights(t *testing.T) {
	const n = 40
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		rng := rand.New(rand.NewPCG(3, 5))
		for _, c := range []struct{ m, k int }{{1, 1024}, {9, 1024}, {3, 2056}, {1, 3080}, {16, 520}} {
			a, aw := uploadIn[gpu.BFloat16](t, dev, randn(rng, c.m*c.k, 1))
			b, bw := uploadIn[gpu.BFloat16](t, dev, randn(rng, n*c.k, 0.1))
			res, resw := upload[float32](t, dev, randn(rng, c.m*n, 1))
			want, scale := refMatmul(aw, bw, nil, resw, c.m, n, c.k, WeightNK, ActNone)
			var outs [2][]float32
			for i, static := range []bool{false, true} {
				out := alloc[float32](t, dev, c.m*n)
				o := MatmulOpts[float32]{Residual: res, Kernel: KernelGEMV, StaticWeights: static}
				if err := Matmul(dev, out, a, b, c.m, n, c.k, o); err != nil {
					t.Fatal(err)
				}
				got, err := out.Download()
				if err != nil {
					t.Fatal(err)
				}
				outs[i] = got
			}
			got64 := make([]float64, len(outs[1]))
			for i, v := range outs[1] {
				got64[i] = float64(v)
				if v != outs[0][i] {
					t.Fatalf("m=%d k=%d: out[%d] = %v with StaticWeights, %v without", c.m, c.k, i, v, outs[0][i])
				}
			}
			compare(t, "out", got64, want, matmulTol[float32](c.k), scale)
		}
	})
}

// TestMatmulStaticWeightsPDLCheck runs the GEMV under the emulator's
// pdlcheck, which models programmatic dependent launch: uploaded weights
// with StaticWeights are clean; weights the kernel just before wrote (a
// Cast) are reported when the GEMV says they are static, and clean when
// it does not.
func TestMatmulStaticWeightsPDLCheck(t *testing.T) {
	dev := kern.OpenEmulator(emu.Options{PDLcheck: true})
	defer dev.Close()
	const m, n, k = 2, 32, 1024
	rng := rand.New(rand.NewPCG(9, 1))
	a, _ := uploadIn[gpu.BFloat16](t, dev, randn(rng, m*k, 1))
	b, _ := uploadIn[gpu.BFloat16](t, dev, randn(rng, n*k, 0.1))
	b32, _ := upload[float32](t, dev, randn(rng, n*k, 0.1))
	out := alloc[float32](t, dev, m*n)
	gemv := func(w *kern.Buffer[gpu.BFloat16], static bool) error {
		return Matmul(dev, out, a, w, m, n, k, MatmulOpts[float32]{Kernel: KernelGEMV, StaticWeights: static})
	}
	if err := gemv(b, true); err != nil {
		t.Errorf("uploaded weights, StaticWeights: %v", err)
	}
	written := alloc[gpu.BFloat16](t, dev, n*k)
	if err := Cast(dev, written, b32, n*k); err != nil {
		t.Fatal(err)
	}
	var rep *emu.Report
	if err := gemv(written, true); !errors.As(err, &rep) || rep.Findings[0].Tool != "pdlcheck" || !strings.Contains(rep.Findings[0].Detail, "wrote them") {
		t.Errorf("weights written by the kernel before, StaticWeights: %v, want a pdlcheck report", err)
	}
	if err := Cast(dev, written, b32, n*k); err != nil {
		t.Fatal(err)
	}
	if err := gemv(written, false); err != nil {
		t.Errorf("weights written by the kernel before, without StaticWeights: %v", err)
	}
}

// TestGEMVRoundTrips holds the decode GEMV's dependent round trips to
// memory (emu.Latency) at one block iteration of K with a residual, as
// Qwen3-0.6B's o_proj (1×1024×2048): the weights and x in one trip, the
// residual in one more. An epilogue that stores before its last load
// (c may alias the residual, so nothing moves a load above a store) adds
// a trip here.
func TestGEMVRoundTrips(t *testing.T) {
	const n, k, most = 1024, 2048, 2
	model := emu.NewLatency(emu.H100)
	dev := kern.OpenEmulator(emu.Options{Observer: model})
	defer dev.Close()
	rng := rand.New(rand.NewPCG(3, 5))
	a, _ := uploadIn[gpu.BFloat16](t, dev, randn(rng, k, 1))
	b, _ := uploadIn[gpu.BFloat16](t, dev, randn(rng, n*k, 0.1))
	res, _ := uploadIn[gpu.BFloat16](t, dev, randn(rng, n, 1))
	out := alloc[gpu.BFloat16](t, dev, n)
	o := MatmulOpts[gpu.BFloat16]{Residual: res, Kernel: KernelGEMV, StaticWeights: true}
	if err := Matmul(dev, out, a, b, 1, n, k, o); err != nil {
		t.Fatal(err)
	}
	ts := model.Timings()
	if len(ts) != 1 {
		t.Fatalf("%d kernels timed, want the GEMV alone", len(ts))
	}
	g := ts[0]
	t.Logf("%s: %d trips, %d cycles: %s", g.Kernel, g.Trips, g.Cycles, strings.Join(g.Chain, " → "))
	if g.Trips > most {
		t.Errorf("%s waits on %d dependent round trips, want at most %d: %s", g.Kernel, g.Trips, most, strings.Join(g.Chain, " → "))
	}
}
