package ops

// Tile versions of Softmax and RMSNorm (v3 of each), written with package
// gpu/tile: the row is one tile of K·256 elements (K registers per thread,
// K = 4 or 16, so rows of up to 1024 or 4096), loaded once, reduced in
// registers and stored; the hand-written v1/v2 stream the row from memory
// twice instead. Shapes, layouts and numerics are those of softmax.go and
// norm.go (float32 arithmetic whatever T, rounded once on the store);
// blocks are one per row, rowThreads(cols) threads, as v1.
//
// They are kept beside the hand-written versions to compare (tests against
// the same float64 references; SASS per row in docs/performance.md). The
// library's Softmax and RMSNorm still use v2/v1, which take any cols.

import (
	"fmt"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/gpu/tile"
)

// ---------------------------------------------------------------------------
// kernels

// softmaxTile is softmax v3: max, exp, sum and scale on one tile.
func softmaxTile[R tile.Regs, C tile.Codec[T], T any](t gpu.Thread, out, x []T, cols int) {
	r := tile.Load[R](t, tile.Input[C](x).Row(tile.RowOf(t), cols), tile.NegInf())
	e := r.SubS(r.ReduceMax(t)).Exp()
	tile.Store(t, tile.Rows[C](t, out, cols), e.DivS(e.ReduceSum(t)))
}

// rmsNormTile is RMSNorm v3: the sum of squares and the scale on one tile.
func rmsNormTile[R tile.Regs, C tile.Codec[T], T any](t gpu.Thread, out, x, w []T, cols int, eps float32) {
	r := tile.Load[R](t, tile.Input[C](x).Row(tile.RowOf(t), cols), 0)
	s := gpu.Rsqrt(r.SumSquares(t)/float32(cols) + eps)
	g := tile.Load[R](t, tile.Input[C](w), 0)
	tile.Store(t, tile.Rows[C](t, out, cols), r.MulS(s).Mul(g))
}

//kern:kernel block=256
func softmaxTile4F32(t gpu.Thread, out, x []float32, cols int) {
	softmaxTile[[4]float32, tile.F32](t, out, x, cols)
}

//kern:kernel block=256
func softmaxTile4F16(t gpu.Thread, out, x []gpu.Half, cols int) {
	softmaxTile[[4]float32, tile.F16](t, out, x, cols)
}

//kern:kernel block=256
func softmaxTile4BF16(t gpu.Thread, out, x []gpu.BFloat16, cols int) {
	softmaxTile[[4]float32, tile.BF16](t, out, x, cols)
}

//kern:kernel block=256
func softmaxTile16F32(t gpu.Thread, out, x []float32, cols int) {
	softmaxTile[[16]float32, tile.F32](t, out, x, cols)
}

//kern:kernel block=256
func softmaxTile16F16(t gpu.Thread, out, x []gpu.Half, cols int) {
	softmaxTile[[16]float32, tile.F16](t, out, x, cols)
}

//kern:kernel block=256
func softmaxTile16BF16(t gpu.Thread, out, x []gpu.BFloat16, cols int) {
	softmaxTile[[16]float32, tile.BF16](t, out, x, cols)
}

//kern:kernel block=256
func rmsNormTile4F32(t gpu.Thread, out, x, weight []float32, cols int, eps float32) {
	rmsNormTile[[4]float32, tile.F32](t, out, x, weight, cols, eps)
}

//kern:kernel block=256
func rmsNormTile4F16(t gpu.Thread, out, x, weight []gpu.Half, cols int, eps float32) {
	rmsNormTile[[4]float32, tile.F16](t, out, x, weight, cols, eps)
}

//kern:kernel block=256
func rmsNormTile4BF16(t gpu.Thread, out, x, weight []gpu.BFloat16, cols int, eps float32) {
	rmsNormTile[[4]float32, tile.BF16](t, out, x, weight, cols, eps)
}

//kern:kernel block=256
func rmsNormTile16F32(t gpu.Thread, out, x, weight []float32, cols int, eps float32) {
	rmsNormTile[[16]float32, tile.F32](t, out, x, weight, cols, eps)
}

//kern:kernel block=256
func rmsNormTile16F16(t gpu.Thread, out, x, weight []gpu.Half, cols int, eps float32) {
	rmsNormTile[[16]float32, tile.F16](t, out, x, weight, cols, eps)
}

//kern:kernel block=256
func rmsNormTile16BF16(t gpu.Thread, out, x, weight []gpu.BFloat16, cols int, eps float32) {
	rmsNormTile[[16]float32, tile.BF16](t, out, x, weight, cols, eps)
}

// ---------------------------------------------------------------------------
// Go API (package-internal: the versions are compared, not exported)

var (
	softmaxTile4K  = kset{softmaxTile4F32Kernel.Kernel(), softmaxTile4F16Kernel.Kernel(), softmaxTile4BF16Kernel.Kernel()}
	softmaxTile16K = kset{softmaxTile16F32Kernel.Kernel(), softmaxTile16F16Kernel.Kernel(), softmaxTile16BF16Kernel.Kernel()}
	rmsNormTile4K  = kset{rmsNormTile4F32Kernel.Kernel(), rmsNormTile4F16Kernel.Kernel(), rmsNormTile4BF16Kernel.Kernel()}
	rmsNormTile16K = kset{rmsNormTile16F32Kernel.Kernel(), rmsNormTile16F16Kernel.Kernel(), rmsNormTile16BF16Kernel.Kernel()}
)

// tileK is the per-thread register count (K) of the smallest tile of
// maxRowThreads threads that holds a row of cols, with its kernels; ok is
// false for rows longer than the largest tile.
func tileK(cols int, k4, k16 kset) (kset, bool) {
	switch {
	case cols <= 4*maxRowThreads:
		return k4, true
	case cols <= 16*maxRowThreads:
		return k16, true
	}
	return kset{}, false
}

// softmaxTiled launches softmax v3 (rows of at most 4096).
func softmaxTiled[T Float](q kern.Queue, out, x *kern.Buffer[T], rows, cols int) error {
	k, ok := tileK(cols, softmaxTile4K, softmaxTile16K)
	if !ok {
		return fmt.Errorf("softmax v3: cols %d exceeds the largest tile (%d)", cols, 16*maxRowThreads)
	}
	return softmax(k, "softmax v3", q, out, x, rows, cols)
}

// rmsNormTiled launches RMSNorm v3 (rows of at most 4096).
func rmsNormTiled[T Float](q kern.Queue, out, x, weight *kern.Buffer[T], rows, cols int, eps float32) error {
	k, ok := tileK(cols, rmsNormTile4K, rmsNormTile16K)
	if !ok {
		return fmt.Errorf("rmsnorm v3: cols %d exceeds the largest tile (%d)", cols, 16*maxRowThreads)
	}
	s := newShape("rmsnorm v3")
	n := rowsCols(s, rows, cols)
	buf(s, "x", x, n, "rows×cols")
	buf(s, "out", out, n, "rows×cols")
	buf(s, "weight", weight, cols, "cols")
	checkEps(s, eps)
	if s.err != nil || rows == 0 {
		return s.err
	}
	return s.launch(pick[T](k), q, blocks1(rows, rowThreads(cols)), bufArg(out), bufArg(x), bufArg(weight), intArg(cols), f32Arg(eps))
}
