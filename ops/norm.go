package ops

// Normalizations over the last dimension: RMSNorm, residual-add fused
// with RMSNorm, per-head RMSNorm (the QK-norm of Qwen3), and LayerNorm.
//
//	RMSNorm:    out[r,j] = x[r,j] / sqrt(mean_j(x[r,:]²) + eps) * weight[j]
//	AddRMSNorm: h = x + residual (rounded to T); residualOut = h; out = RMSNorm(h)
//	HeadRMSNorm: RMSNorm of every head vector, weight shared by the heads
//	LayerNorm:  out[r,j] = (x[r,j] - mean) / sqrt(var + eps) * weight[j] + bias[j]
//
// Shapes and layout (row-major, element type T ∈ {float32, float16, bfloat16}):
//
//	x, out, residual, residualOut  [rows, cols]
//	weight, bias                   [cols]
//	HeadRMSNorm x, out             [tokens, heads, headDim] = rows tokens·heads of headDim
//
// The sum of squares, the mean and the variance are float32, whatever T;
// the scale x·rsqrt(…)·weight is computed in float32 and rounded once.
// (Hugging Face's Llama/Qwen round x·rsqrt to T before the weight multiply;
// we round once, which is at least as accurate.) AddRMSNorm normalizes the
// residual sum after rounding it to T, as a model holding the residual
// stream in T does. LayerNorm uses two passes over the row (the mean, then
// the mean of squared deviations), not E[x²]-mean², which cancels
// catastrophically for rows with a large mean.
//
// Versions:
//
//	v1 block per row: one block of up to 256 threads per row; each thread
//	   strides over the row (so any cols works, 10000 or 1), partial sums
//	   meet in gpu.BlockSum. The block is the row rounded up to whole warps,
//	   at most 256, so a short row does not idle 7 warps.
//	v2 warp per row (RMSNorm only): eight rows per 256-thread block, one
//	   warp each, reduced with warp shuffles and no barrier. For rows of at
//	   most 512 (head_dim-sized rows in QK-norm, small hidden sizes) a
//	   block per row would leave most of its threads idle.
//
// RMSNorm and HeadRMSNorm use v2 for cols ≤ 512 and v1 above; AddRMSNorm
// and LayerNorm are v1 only.

import (
	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// ---------------------------------------------------------------------------
// kernels

//kern:kernel block=256
func rmsNormF32(t gpu.Thread, out, x, weight []float32, cols int, eps float32) {
	rmsNormBlock(f32c{}, t, out, x, weight, cols, eps)
}

//kern:kernel block=256
func rmsNormF16(t gpu.Thread, out, x, weight []gpu.Half, cols int, eps float32) {
	rmsNormBlock(f16c{}, t, out, x, weight, cols, eps)
}

//kern:kernel block=256
func rmsNormBF16(t gpu.Thread, out, x, weight []gpu.BFloat16, cols int, eps float32) {
	rmsNormBlock(bf16c{}, t, out, x, weight, cols, eps)
}

// rmsNormBlock is v1: block BlockIdx.X normalizes row BlockIdx.X.
func rmsNormBlock[T any, C codec[T]](c C, t gpu.Thread, out, x, w []T, cols int, eps float32) {
	base := t.BlockIdx().X * cols
	tid, nt := t.ThreadIdx().X, t.BlockDim().X
	if cols <= rowRegs*nt {
		// The row fits in registers: read x once, every load issued
		// before the first use. (The weights, read by every row, come
		// from cache in the last loop.)
		var v [rowRegs]float32
		//kern:unroll
		for k := 0; k < rowRegs; k++ {
			if j := tid + k*nt; j < cols {
				v[k] = c.load(x[base+j])
			}
		}
		ss := float32(0)
		//kern:unroll
		for k := 0; k < rowRegs; k++ {
			ss = gpu.FMA(v[k], v[k], ss) // zero past the row's end
		}
		r := gpu.Rsqrt(gpu.BlockSum(t, ss)/float32(cols) + eps)
		//kern:unroll
		for k := 0; k < rowRegs; k++ {
			if j := tid + k*nt; j < cols {
				out[base+j] = c.store(v[k] * r * c.load(w[j]))
			}
		}
		return
	}
	ss := float32(0)
	for j := t.ThreadIdx().X; j < cols; j += t.BlockDim().X {
		v := c.load(x[base+j])
		ss = gpu.FMA(v, v, ss)
	}
	ss = gpu.BlockSum(t, ss)
	r := gpu.Rsqrt(ss/float32(cols) + eps)
	for j := t.ThreadIdx().X; j < cols; j += t.BlockDim().X {
		out[base+j] = c.store(c.load(x[base+j]) * r * c.load(w[j]))
	}
}

//kern:kernel block=256
func rmsNormWarpF32(t gpu.Thread, out, x, weight []float32, rows, cols int, eps float32) {
	rmsNormWarp(f32c{}, t, out, x, weight, rows, cols, eps)
}

//kern:kernel block=256
func rmsNormWarpF16(t gpu.Thread, out, x, weight []gpu.Half, rows, cols int, eps float32) {
	rmsNormWarp(f16c{}, t, out, x, weight, rows, cols, eps)
}

//kern:kernel block=256
func rmsNormWarpBF16(t gpu.Thread, out, x, weight []gpu.BFloat16, rows, cols int, eps float32) {
	rmsNormWarp(bf16c{}, t, out, x, weight, rows, cols, eps)
}

// rmsNormWarp is v2: warp w of block b normalizes row b·(warps per block)+w.
func rmsNormWarp[T any, C codec[T]](c C, t gpu.Thread, out, x, w []T, rows, cols int, eps float32) {
	row := t.BlockIdx().X*(t.BlockDim().X/32) + t.Warp()
	if row >= rows {
		return
	}
	base := row * cols
	ss := float32(0)
	for j := t.Lane(); j < cols; j += 32 {
		v := c.load(x[base+j])
		ss = gpu.FMA(v, v, ss)
	}
	ss = gpu.WarpSum(t, ss)
	r := gpu.Rsqrt(ss/float32(cols) + eps)
	for j := t.Lane(); j < cols; j += 32 {
		out[base+j] = c.store(c.load(x[base+j]) * r * c.load(w[j]))
	}
}

//kern:kernel block=256
func addRMSNormF32(t gpu.Thread, out, residualOut, x, residual, weight []float32, cols int, eps float32) {
	addRMSNorm(f32c{}, t, out, residualOut, x, residual, weight, cols, eps)
}

//kern:kernel block=256
func addRMSNormF16(t gpu.Thread, out, residualOut, x, residual, weight []gpu.Half, cols int, eps float32) {
	addRMSNorm(f16c{}, t, out, residualOut, x, residual, weight, cols, eps)
}

//kern:kernel block=256
func addRMSNormBF16(t gpu.Thread, out, residualOut, x, residual, weight []gpu.BFloat16, cols int, eps float32) {
	addRMSNorm(bf16c{}, t, out, residualOut, x, residual, weight, cols, eps)
}

// addRMSNorm is v1 with the residual add in its first sweep. The second
// sweep reads back the rounded sum the same thread stored.
func addRMSNorm[T any, C codec[T]](c C, t gpu.Thread, out, hOut, x, res, w []T, cols int, eps float32) {
	base := t.BlockIdx().X * cols
	ss := float32(0)
	for j := t.ThreadIdx().X; j < cols; j += t.BlockDim().X {
		hOut[base+j] = c.store(c.load(x[base+j]) + c.load(res[base+j]))
		v := c.load(hOut[base+j]) // the sum as rounded to T
		ss = gpu.FMA(v, v, ss)
	}
	ss = gpu.BlockSum(t, ss)
	r := gpu.Rsqrt(ss/float32(cols) + eps)
	for j := t.ThreadIdx().X; j < cols; j += t.BlockDim().X {
		out[base+j] = c.store(c.load(hOut[base+j]) * r * c.load(w[j]))
	}
}

//kern:kernel block=256
func layerNormF32(t gpu.Thread, out, x, weight, bias []float32, cols int, eps float32) {
	layerNorm(f32c{}, t, out, x, weight, bias, cols, eps)
}

//kern:kernel block=256
func layerNormF16(t gpu.Thread, out, x, weight, bias []gpu.Half, cols int, eps float32) {
	layerNorm(f16c{}, t, out, x, weight, bias, cols, eps)
}

//kern:kernel block=256
func layerNormBF16(t gpu.Thread, out, x, weight, bias []gpu.BFloat16, cols int, eps float32) {
	layerNorm(bf16c{}, t, out, x, weight, bias, cols, eps)
}

// layerNorm is v1 with two reductions: the mean, then the variance about it.
func layerNorm[T any, C codec[T]](c C, t gpu.Thread, out, x, w, bias []T, cols int, eps float32) {
	base := t.BlockIdx().X * cols
	sum := float32(0)
	for j := t.ThreadIdx().X; j < cols; j += t.BlockDim().X {
		sum += c.load(x[base+j])
	}
	mean := gpu.BlockSum(t, sum) / float32(cols)
	ss := float32(0)
	for j := t.ThreadIdx().X; j < cols; j += t.BlockDim().X {
		d := c.load(x[base+j]) - mean
		ss = gpu.FMA(d, d, ss)
	}
	r := gpu.Rsqrt(gpu.BlockSum(t, ss)/float32(cols) + eps)
	for j := t.ThreadIdx().X; j < cols; j += t.BlockDim().X {
		d := c.load(x[base+j]) - mean
		out[base+j] = c.store(gpu.FMA(d*r, c.load(w[j]), c.load(bias[j])))
	}
}

// ---------------------------------------------------------------------------
// Go API

var (
	rmsNormK     = kset{rmsNormF32Kernel.Kernel(), rmsNormF16Kernel.Kernel(), rmsNormBF16Kernel.Kernel()}
	rmsNormWarpK = kset{rmsNormWarpF32Kernel.Kernel(), rmsNormWarpF16Kernel.Kernel(), rmsNormWarpBF16Kernel.Kernel()}
	addRMSNormK  = kset{addRMSNormF32Kernel.Kernel(), addRMSNormF16Kernel.Kernel(), addRMSNormBF16Kernel.Kernel()}
	layerNormK   = kset{layerNormF32Kernel.Kernel(), layerNormF16Kernel.Kernel(), layerNormBF16Kernel.Kernel()}
)

// RMS norm versions (see the header).
const (
	rmsV1Block = 1
	rmsV2Warp  = 2
)

// rmsVersion is the version RMSNorm uses for rows of cols elements.
func rmsVersion(cols int) int {
	if cols <= 512 {
		return rmsV2Warp
	}
	return rmsV1Block
}

// RMSNorm writes out = x / sqrt(mean(x²) + eps) · weight for each of the
// rows rows of x ([rows, cols], row-major); weight is [cols].
func RMSNorm[T Float](q kern.Queue, out, x, weight *kern.Buffer[T], rows, cols int, eps float32) error {
	return rmsNorm(newShape("ops.RMSNorm"), rmsVersion(cols), q, out, x, weight, rows, cols, eps)
}

// HeadRMSNorm is the per-head QK-norm of Qwen3: it normalizes each
// headDim-long head vector of x ([tokens, heads, headDim], row-major) with
// the shared weight ([headDim]). It is RMSNorm over tokens·heads rows.
func HeadRMSNorm[T Float](q kern.Queue, out, x, weight *kern.Buffer[T], tokens, heads, headDim int, eps float32) error {
	s := newShape("ops.HeadRMSNorm")
	s.atLeast("tokens", tokens, 0)
	s.atLeast("heads", heads, 1)
	return rmsNorm(s, rmsVersion(headDim), q, out, x, weight, s.mul(tokens, heads), headDim, eps)
}

func rmsNorm[T Float](s *shape, version int, q kern.Queue, out, x, weight *kern.Buffer[T], rows, cols int, eps float32) error {
	n := rowsCols(s, rows, cols)
	buf(s, "x", x, n, "rows×cols")
	buf(s, "out", out, n, "rows×cols")
	buf(s, "weight", weight, cols, "cols")
	checkEps(s, eps)
	if s.err != nil || rows == 0 {
		return s.err
	}
	if version == rmsV2Warp {
		warps := min(rows, maxRowThreads/32)
		grid := blocks1((rows+warps-1)/warps, warps*32)
		return s.launch(pick[T](rmsNormWarpK), q, grid, bufArg(out), bufArg(x), bufArg(weight), intArg(rows), intArg(cols), f32Arg(eps))
	}
	return s.launch(pick[T](rmsNormK), q, blocks1(rows, rowThreads(cols)), bufArg(out), bufArg(x), bufArg(weight), intArg(cols), f32Arg(eps))
}

// AddRMSNorm adds the residual stream and normalizes the sum in one pass:
// residualOut = x + residual (rounded to T), out = RMSNorm(residualOut).
// x, residual, residualOut and out are [rows, cols]; weight is [cols].
func AddRMSNorm[T Float](q kern.Queue, out, residualOut, x, residual, weight *kern.Buffer[T], rows, cols int, eps float32) error {
	s := newShape("ops.AddRMSNorm")
	n := rowsCols(s, rows, cols)
	buf(s, "x", x, n, "rows×cols")
	buf(s, "residual", residual, n, "rows×cols")
	buf(s, "out", out, n, "rows×cols")
	buf(s, "residualOut", residualOut, n, "rows×cols")
	buf(s, "weight", weight, cols, "cols")
	checkEps(s, eps)
	if s.err != nil || rows == 0 {
		return s.err
	}
	return s.launch(pick[T](addRMSNormK), q, blocks1(rows, rowThreads(cols)),
		bufArg(out), bufArg(residualOut), bufArg(x), bufArg(residual), bufArg(weight), intArg(cols), f32Arg(eps))
}

// LayerNorm writes out = (x - mean) / sqrt(var + eps) · weight + bias for
// each row of x ([rows, cols]); weight and bias are [cols]. var is the
// biased (population) variance, as in PyTorch.
func LayerNorm[T Float](q kern.Queue, out, x, weight, bias *kern.Buffer[T], rows, cols int, eps float32) error {
	s := newShape("ops.LayerNorm")
	n := rowsCols(s, rows, cols)
	buf(s, "x", x, n, "rows×cols")
	buf(s, "out", out, n, "rows×cols")
	buf(s, "weight", weight, cols, "cols")
	buf(s, "bias", bias, cols, "cols")
	checkEps(s, eps)
	if s.err != nil || rows == 0 {
		return s.err
	}
	return s.launch(pick[T](layerNormK), q, blocks1(rows, rowThreads(cols)),
		bufArg(out), bufArg(x), bufArg(weight), bufArg(bias), intArg(cols), f32Arg(eps))
}

// rowsCols checks rows ≥ 0 and cols ≥ 1 and returns rows·cols.
func rowsCols(s *shape, rows, cols int) int {
	s.atLeast("rows", rows, 0)
	s.atLeast("cols", cols, 1)
	return s.mul(rows, cols)
}

func checkEps(s *shape, eps float32) {
	if !(eps >= 0) || eps > 1e30 {
		s.fail("eps = %g, want a finite value ≥ 0", eps)
	}
}
