// Package tilerow holds v3 of ops.Softmax and ops.RMSNorm, written with
// package gpu/tile (ops/tile.go has their Go API and says what they are
// for). They are a package of their own because of generated-code size:
// package ops's PTX is near the 1.2 MB a file may have.
package tilerow

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen

import (
	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/gpu/tile"
)

// softmaxTile is softmax v3: max, exp, sum and scale on one tile.
func softmaxTile[R tile.Regs, C tile.Codec[T], T any](t gpu.Thread, out, x []T, cols int) {
	dst := tile.Rows[C](t, out, cols)
	r := tile.Load[R](t, tile.Input[C](x).Row(tile.RowOf(t), cols), tile.NegInf())
	e := r.SubS(r.ReduceMax(t)).Exp()
	tile.Store(t, dst, e.DivS(e.ReduceSum(t)))
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

// The kernels by element type (f32, f16, bf16, as ops' tables) and tile:
// K = 4 registers per thread (rows of up to 1024) or 16 (up to 4096).
var (
	Softmax4  = [3]*kern.Kernel{softmaxTile4F32Kernel.Kernel(), softmaxTile4F16Kernel.Kernel(), softmaxTile4BF16Kernel.Kernel()}
	Softmax16 = [3]*kern.Kernel{softmaxTile16F32Kernel.Kernel(), softmaxTile16F16Kernel.Kernel(), softmaxTile16BF16Kernel.Kernel()}
	RMSNorm4  = [3]*kern.Kernel{rmsNormTile4F32Kernel.Kernel(), rmsNormTile4F16Kernel.Kernel(), rmsNormTile4BF16Kernel.Kernel()}
	RMSNorm16 = [3]*kern.Kernel{rmsNormTile16F32Kernel.Kernel(), rmsNormTile16F16Kernel.Kernel(), rmsNormTile16BF16Kernel.Kernel()}
)
