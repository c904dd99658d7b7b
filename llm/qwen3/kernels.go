package qwen3

// The engine's own kernels: what package ops does not have yet.
//
//	matmul*   out[r, c] = Σ_j x[r, j]·w[c, j]: x [rows, k] float32, w [cols, k]
//	          in the weights' type (f32, f16, bf16), out [rows, cols] float32.
//	          v1: a warp per output element; lanes stride over j (coalesced
//	          reads of w's row and x's row), then a warp sum. Simple and
//	          exact to float32; a tensor-core ops.Matmul replaces it.
//	attention causal softmax(q·kᵀ·scale)·v of each query row over the cache.
//	          q [tokens, heads, headDim]; kc, vc [ctx, kvHeads, headDim];
//	          out [tokens, heads, headDim]; scores [tokens·heads, ctx] scratch.
//	          Token t sits at position pos0+t and sees cache positions
//	          0..pos0+t. One 32-thread block per (token, head): pass 1 the
//	          scores and their max, pass 2 exp and sum, pass 3 each lane a
//	          slice of headDim. v1 only; flash attention is another issue.
//	copyF32   dst[dstOff+i] = src[srcOff+i], i < n: writing K and V into
//	          the cache, taking the last row of hidden states.

import "github.com/gokern/kern/gpu"

type wcodec[T any] interface{ load(T) float32 }

type f32w struct{}

func (f32w) load(x float32) float32 { return x }

type f16w struct{}

func (f16w) load(x gpu.Half) float32 { return x.Float32() }

type bf16w struct{}

func (bf16w) load(x gpu.BFloat16) float32 { return x.Float32() }

//kern:kernel block=256
func matmulF32(t gpu.Thread, out, x, w []float32, rows, cols, k int) {
	matmulWarp(f32w{}, t, out, x, w, rows, cols, k)
}

//kern:kernel block=256
func matmulF16(t gpu.Thread, out, x []float32, w []gpu.Half, rows, cols, k int) {
	matmulWarp(f16w{}, t, out, x, w, rows, cols, k)
}

//kern:kernel block=256
func matmulBF16(t gpu.Thread, out, x []float32, w []gpu.BFloat16, rows, cols, k int) {
	matmulWarp(bf16w{}, t, out, x, w, rows, cols, k)
}

// matmulWarp: warp number w computes out[w] (row w/cols, column w%cols).
func matmulWarp[T any, C wcodec[T]](c C, t gpu.Thread, out, x []float32, w []T, rows, cols, k int) {
	warp := t.BlockIdx().X*(t.BlockDim().X/32) + t.Warp()
	if warp >= rows*cols {
		return
	}
	r := warp / cols
	col := warp % cols
	acc := float32(0)
	for j := t.Lane(); j < k; j += 32 {
		acc = gpu.FMA(x[r*k+j], c.load(w[col*k+j]), acc)
	}
	acc = gpu.WarpSum(t, acc)
	if t.Lane() == 0 {
		out[warp] = acc
	}
}

//kern:kernel block=32
func attention(t gpu.Thread, out, q, kc, vc, scores []float32, heads, kvHeads, headDim, pos0, ctx int, scale float32) {
	row := t.BlockIdx().X // token·heads + head
	tok := row / heads
	h := row % heads
	kvh := h / (heads / kvHeads)
	n := pos0 + tok + 1 // causal: positions 0..pos0+tok
	qb := row * headDim
	sb := row * ctx
	lane := t.Lane()

	m := float32(-3.4e38)
	for j := lane; j < n; j += 32 {
		kb := (j*kvHeads + kvh) * headDim
		s := float32(0)
		for d := 0; d < headDim; d++ {
			s = gpu.FMA(q[qb+d], kc[kb+d], s)
		}
		s *= scale
		scores[sb+j] = s
		m = gpu.Max(m, s)
	}
	m = gpu.WarpMax(t, m)
	sum := float32(0)
	for j := lane; j < n; j += 32 {
		e := gpu.Exp(scores[sb+j] - m)
		scores[sb+j] = e
		sum += e
	}
	sum = gpu.WarpSum(t, sum)
	t.SyncWarp() // every lane's scores are visible to every lane
	inv := 1 / sum
	for d := lane; d < headDim; d += 32 {
		acc := float32(0)
		for j := 0; j < n; j++ {
			acc = gpu.FMA(scores[sb+j], vc[(j*kvHeads+kvh)*headDim+d], acc)
		}
		out[qb+d] = acc * inv
	}
}

//kern:kernel block=256
func copyF32(t gpu.Thread, dst, src []float32, dstOff, srcOff, n int) {
	i := t.GlobalX()
	if i < n {
		dst[dstOff+i] = src[srcOff+i]
	}
}
