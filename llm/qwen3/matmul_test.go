package qwen3

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/llm/safetensors"
)

// TestMatmul checks both versions and every weight type against float64
// (|err| ≤ 2^-20·Σ|x·w|, a float32 sum's bound with room), and v2's
// batch invariance: each row of a multi-row product equals that row
// computed alone, bit for bit.
func TestMatmul(t *testing.T) {
	for _, d := range testDevices {
		for _, sh := range []struct{ rows, cols, k int }{{1, 5, 4}, {3, 7, 12}, {7, 9, 260}, {9, 33, 516}, {2, 3, 7}} {
			for _, dt := range []safetensors.DType{safetensors.F32, safetensors.F16, safetensors.BF16} {
				for _, v1 := range []bool{false, true} {
					name := fmt.Sprintf("%s/%dx%dx%d/%s/v1=%v", d.name, sh.rows, sh.cols, sh.k, dt, v1)
					t.Run(name, func(t *testing.T) {
						checkMatmul(t, d.dev, sh.rows, sh.cols, sh.k, dt, WarpMatmul{V1: v1}, 0x1p-20, true)
					})
				}
			}
		}
	}
}

// TestThreadMatmul checks ThreadMatmul, the native device's Matmul, the
// same way, on every device: its sum runs j in order, a float32 sum's
// bound holds as for WarpMatmul, and rows are independent by
// construction (one thread per output).
func TestThreadMatmul(t *testing.T) {
	for _, d := range testDevices {
		for _, sh := range []struct{ rows, cols, k int }{{1, 1, 1}, {1, 5, 4}, {3, 7, 12}, {7, 9, 260}, {2, 3, 7}, {5, 300, 9}} {
			for _, dt := range []safetensors.DType{safetensors.F32, safetensors.F16, safetensors.BF16} {
				name := fmt.Sprintf("%s/%dx%dx%d/%s", d.name, sh.rows, sh.cols, sh.k, dt)
				t.Run(name, func(t *testing.T) {
					checkMatmul(t, d.dev, sh.rows, sh.cols, sh.k, dt, ThreadMatmul{}, 0x1p-20, true)
				})
			}
		}
	}
}

// TestDefaultMatmul: the native device starts with ThreadMatmul, the
// others with WarpMatmul.
func TestDefaultMatmul(t *testing.T) {
	if _, ok := DefaultMatmul(kern.OpenNative()).(ThreadMatmul); !ok {
		t.Errorf("native: %T, want ThreadMatmul", DefaultMatmul(kern.OpenNative()))
	}
	if _, ok := DefaultMatmul(kern.OpenEmulator()).(WarpMatmul); !ok {
		t.Errorf("emu: %T, want WarpMatmul", DefaultMatmul(kern.OpenEmulator()))
	}
}

// TestOpsMatmul checks OpsMatmul (ops.Matmul over activations split in
// two 16-bit halves) against float64 for 16-bit weights, through each
// kernel ops.Matmul picks: the GEMV (2·rows ≤ 16), the tensor-core kernel
// (more rows) and the simple one (k not a multiple of 8). The bound,
// 2^-16·Σ|x·w|, is the split's 2^-18 plus float32 sums in the tensor
// cores' order, with room; a bf16-only product would be off by 2^-9.
func TestOpsMatmul(t *testing.T) {
	for _, d := range testDevices {
		for _, sh := range []struct{ rows, cols, k int }{{1, 5, 8}, {3, 7, 16}, {9, 33, 520}, {20, 24, 64}, {2, 3, 7}} {
			for _, dt := range []safetensors.DType{safetensors.F16, safetensors.BF16} {
				name := fmt.Sprintf("%s/%dx%dx%d/%s", d.name, sh.rows, sh.cols, sh.k, dt)
				t.Run(name, func(t *testing.T) {
					o := &OpsMatmul{}
					defer o.Free()
					checkMatmul(t, d.dev, sh.rows, sh.cols, sh.k, dt, o, 0x1p-16, false)
				})
			}
		}
	}
}

// checkMatmul checks mm against float64 within tol·Σ|x·w| per element
// and, if invariant, that each row alone gives the batch's bits.
func checkMatmul(t *testing.T, dev *kern.Device, rows, cols, k int, dt safetensors.DType, mm Matmul, tol float64, invariant bool) {
	rng := rand.New(rand.NewPCG(uint64(rows*cols*k), 3))
	xs := make([]float32, rows*k)
	for i := range xs {
		xs[i] = float32(rng.NormFloat64())
	}
	wf := make([]float32, cols*k) // the weights as the device sees them
	w := &Weight{Name: "w", Out: cols, In: k, DType: dt}
	var err error
	switch dt {
	case safetensors.F32:
		for i := range wf {
			wf[i] = float32(rng.NormFloat64())
		}
		w.f32, err = kern.Upload(dev, wf)
	case safetensors.F16:
		hs := make([]gpu.Half, len(wf))
		for i := range hs {
			hs[i] = gpu.ToHalf(float32(rng.NormFloat64()))
			wf[i] = hs[i].Float32()
		}
		w.f16, err = kern.Upload(dev, hs)
	case safetensors.BF16:
		bs := make([]gpu.BFloat16, len(wf))
		for i := range bs {
			bs[i] = gpu.ToBFloat16(float32(rng.NormFloat64()))
			wf[i] = bs[i].Float32()
		}
		w.bf16, err = kern.Upload(dev, bs)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer w.free()
	run := func(x []float32, rows int) []float32 {
		xb, err := kern.Upload(dev, x)
		if err != nil {
			t.Fatal(err)
		}
		defer xb.Free()
		ob, err := kern.Alloc[float32](dev, rows*cols)
		if err != nil {
			t.Fatal(err)
		}
		defer ob.Free()
		if err := mm.MatmulT(dev, ob, xb, w, rows); err != nil {
			t.Fatal(err)
		}
		out, err := ob.Download()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := run(xs, rows)
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			s, mag := 0.0, 0.0
			for j := 0; j < k; j++ {
				p := float64(xs[r*k+j]) * float64(wf[c*k+j])
				s += p
				mag += math.Abs(p)
			}
			if e := math.Abs(float64(got[r*cols+c]) - s); e > tol*mag+1e-30 {
				t.Fatalf("out[%d,%d] = %g, want %g (error %.3g, bound %.3g)", r, c, got[r*cols+c], s, e, tol*mag)
			}
		}
	}
	for r := 0; r < rows && invariant; r++ {
		alone := run(xs[r*k:(r+1)*k], 1)
		for c := range alone {
			if alone[c] != got[r*cols+c] {
				t.Fatalf("row %d col %d: %g in the batch, %g alone", r, c, got[r*cols+c], alone[c])
			}
		}
	}
}
