package ops

import (
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
)

// TestSanitizers runs every kernel once on the emulator with memcheck
// (out-of-bounds and uninitialized reads), racecheck (shared-memory races
// between warps) and synccheck (barriers and shuffles reached by part of
// a warp), at shapes that exercise partial warps and blocks.
func TestSanitizers(t *testing.T) {
	dev := kern.OpenEmulator(emu.Options{Memcheck: true, Racecheck: true, Synccheck: true})
	const rows, cols = 3, 300 // 300: a partial warp and a strided loop
	const n = rows * cols
	x := func() *kern.Buffer[gpu.BFloat16] { b, _ := upload[gpu.BFloat16](t, dev, make([]float64, n)); return b }
	w := func(m int) *kern.Buffer[gpu.BFloat16] {
		b, _ := upload[gpu.BFloat16](t, dev, make([]float64, m))
		return b
	}
	o := func(m int) *kern.Buffer[gpu.BFloat16] { return alloc[gpu.BFloat16](t, dev, m) }
	ids := uploadT(t, dev, []int32{0, 2, 1})
	rowScales := uploadT(t, dev, make([]float32, rows))
	bytes := uploadT(t, dev, make([]uint8, n))
	i8 := uploadT(t, dev, make([]int8, n))
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"RMSNorm v1", func() error {
			return rmsNorm(newShape("RMSNorm"), rmsV1Block, dev, o(n), x(), w(cols), rows, cols, 1e-6)
		}},
		{"RMSNorm v2", func() error {
			return rmsNorm(newShape("RMSNorm"), rmsV2Warp, dev, o(n), x(), w(cols), rows, cols, 1e-6)
		}},
		{"AddRMSNorm", func() error { return AddRMSNorm(dev, o(n), o(n), x(), x(), w(cols), rows, cols, 1e-6) }},
		{"LayerNorm", func() error { return LayerNorm(dev, o(n), x(), w(cols), w(cols), rows, cols, 1e-6) }},
		{"Softmax v1", func() error { return softmax(softmax3K, "softmax", dev, o(n), x(), rows, cols) }},
		{"Softmax v2", func() error { return Softmax(dev, o(n), x(), rows, cols) }},
		{"RoPE", func() error { return RoPE(dev, o(n), x(), 3, 1, cols, 7, 1e4) }},
		{"SiLUMul", func() error { return SiLUMul(dev, o(n), x(), x(), n) }},
		{"GELU", func() error { return GELU(dev, o(n), x(), n) }},
		{"GELUTanh", func() error { return GELUTanh(dev, o(n), x(), n) }},
		{"Add", func() error { return Add(dev, o(n), x(), x(), n) }},
		{"Mul", func() error { return Mul(dev, o(n), x(), x(), n) }},
		{"Scale", func() error { return Scale(dev, o(n), x(), 2, n) }},
		{"Cast", func() error { return Cast(dev, alloc[float32](t, dev, n), x(), n) }},
		{"Embedding", func() error { return Embedding(dev, o(n), w(n), ids, rows, cols) }},
		{"Argmax v1", func() error { return argmax(1, dev, alloc[int32](t, dev, rows), x(), rows, cols) }},
		{"Argmax v2", func() error { return argmax(2, dev, alloc[int32](t, dev, 1), w(argChunk+cols), 1, argChunk+cols) }},
		{"Sample", func() error {
			return Sample(dev, alloc[int32](t, dev, rows), x(), rows, cols, Sampling{Temperature: 1, TopK: 5, TopP: 0.5})
		}},
		{"DequantInt8", func() error { return DequantInt8(dev, o(n), i8, 1, n) }},
		{"DequantInt8Rows", func() error { return DequantInt8Rows(dev, o(n), i8, rowScales, rows, cols) }},
		{"DequantInt4", func() error {
			return DequantInt4(dev, o(2*n), bytes, uploadT(t, dev, make([]float32, rows*5)), rows, 2*cols)
		}},
	} {
		if err := c.run(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// Matmul: every version and config, both layouts, ragged m, n and k,
	// with bias, residual and SwiGLU (n even).
	const mm, mn, mk = 70, 72, 40
	// v3 128x256 needs an H100's shared memory: its own emulator.
	dev90 := kern.OpenEmulator(emu.Options{Memcheck: true, Racecheck: true, Synccheck: true, MaxSharedPerBlock: emu.MaxSharedPerBlockSM90})
	defer dev90.Close()
	for _, ver := range mmVersions {
		dev := dev
		if ver.v == mmHopperWide {
			dev = dev90
		}
		w := func(m int) *kern.Buffer[gpu.BFloat16] {
			b, _ := upload[gpu.BFloat16](t, dev, make([]float64, m))
			return b
		}
		o := func(m int) *kern.Buffer[gpu.BFloat16] { return alloc[gpu.BFloat16](t, dev, m) }
		for _, lay := range []BLayout{WeightNK, RowMajorKN} {
			for _, act := range []Activation{ActNone, ActSwiGLU} {
				sh := mmCase{mm, mn, mk}
				if ver.v == mmGEMV || ver.v == mmGEMVv1 || ver.v == mmGEMVv3 {
					sh.m = 5
				}
				if ver.v == mmGEMVv3 { // K's 2 chunks in 2 splits: the partials and the last block's sum
					GEMVv3Splits = 2
				}
				if !ver.applies(sh, lay) {
					continue
				}
				cn := sh.n
				if act == ActSwiGLU {
					cn /= 2
				}
				opts := MatmulOpts[gpu.BFloat16]{Layout: lay, Act: act, Bias: w(sh.n), Residual: w(sh.m * cn)}
				s := newShape("ops.Matmul")
				err := matmulRun(s, ver.v, ver.cfg, dev, o(sh.m*cn), w(sh.m*sh.k), w(sh.n*sh.k), sh.m, sh.n, sh.k, opts)
				GEMVv3Splits = 0
				if err != nil {
					t.Errorf("Matmul %s %v act %d: %v", ver.name, lay, act, err)
				}
			}
		}
	}
	// MatmulInt4, each version: ragged n, k past one step and not a whole
	// group, several passes over x (GEMV v1: 4 rows, v2: 8 rows a pass).
	for _, c := range []struct {
		v       int
		m, n, k int
	}{{w4GEMV, 6, 37, 544}, {w4GEMVTC, 11, 37, 544}, {w4GEMM, 70, 130, 544}} {
		if err := matmulInt4(c.v, dev, o(c.m*c.n), w(c.m*c.k), uploadT(t, dev, make([]uint8, c.n*c.k/2)), uploadT(t, dev, make([]float32, c.n*5)), c.m, c.n, c.k); err != nil {
			t.Errorf("MatmulInt4 version %d: %v", c.v, err)
		}
	}
	// MatmulInt8: partial tiles and a k that is not a multiple of 4 (v1);
	// partial tiles and a partial last k tile (v2).
	if err := MatmulInt8(dev, o(17*9), uploadT(t, dev, make([]int8, 17*37)), uploadT(t, dev, make([]float32, 17)), uploadT(t, dev, make([]int8, 9*37)), uploadT(t, dev, make([]float32, 9)), 17, 9, 37); err != nil {
		t.Errorf("MatmulInt8: %v", err)
	}
	if err := matmulInt8(i8V2, dev, o(130*129), uploadT(t, dev, make([]int8, 130*80)), uploadT(t, dev, make([]float32, 130)), uploadT(t, dev, make([]int8, 129*80)), uploadT(t, dev, make([]float32, 129)), 130, 129, 80); err != nil {
		t.Errorf("MatmulInt8 v2: %v", err)
	}
	// Q6 needs cols % 4 == 0 and its own packed length.
	if err := DequantQ6(dev, o(n), uploadT(t, dev, make([]uint8, n/4*3)), uploadT(t, dev, make([]float32, rows*5)), rows, cols); err != nil {
		t.Errorf("DequantQ6: %v", err)
	}
}
