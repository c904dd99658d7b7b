package qwen3

// The engine's own kernels: what package ops does not have yet.
//
//	matmul*   out[r, c] = Σ_j x[r, j]·w[c, j]: x [rows, k] float32, w [cols, k]
//	          in the weights' type (f32, f16, bf16), out [rows, cols] float32.
//	          v1 (any k): a warp per output element; lanes stride over j
//	          (coalesced reads of w's row and x's row), then a warp sum.
//	          v2 (k a multiple of 4, every real model): a warp per output
//	          column and group of 4 rows; each lane loads 4 weights in one
//	          vector load and uses them for the 4 rows (w read once per 4
//	          rows instead of per row), then 4 warp sums. Row r's sum is
//	          formed in the same order whatever rows share its group, so a
//	          batch gives each row exactly its solo result. Both are
//	          float32-exact in the usual sense; a tensor-core ops.Matmul
//	          replaces them through the Matmul interface.

import (
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/internal/rotary"
)

// wcodec widens weights to float32: one element, or four in one vector
// load (load4 returns float32s so generic code never holds a T local,
// which kern's generic helpers cannot yet declare).
type wcodec[T any] interface {
	load(T) float32
	load4(w []T, i int) [4]float32
}

type f32w struct{}

func (f32w) load(x float32) float32 { return x }
func (f32w) load4(w []float32, i int) [4]float32 {
	return gpu.Load4(w, i)
}

type f16w struct{}

func (f16w) load(x gpu.Half) float32 { return x.Float32() }
func (f16w) load4(w []gpu.Half, i int) [4]float32 {
	v := gpu.Load4(w, i)
	return [4]float32{v[0].Float32(), v[1].Float32(), v[2].Float32(), v[3].Float32()}
}

type bf16w struct{}

func (bf16w) load(x gpu.BFloat16) float32 { return x.Float32() }
func (bf16w) load4(w []gpu.BFloat16, i int) [4]float32 {
	v := gpu.Load4(w, i)
	return [4]float32{v[0].Float32(), v[1].Float32(), v[2].Float32(), v[3].Float32()}
}

//kern:kernel block=256 pdl
func matmulF32(t gpu.Thread, out, x, w []float32, rows, cols, k int) {
	matmulWarp(f32w{}, t, out, x, w, rows, cols, k)
}

//kern:kernel block=256 pdl
func matmulF16(t gpu.Thread, out, x []float32, w []gpu.Half, rows, cols, k int) {
	matmulWarp(f16w{}, t, out, x, w, rows, cols, k)
}

//kern:kernel block=256 pdl
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

// The batched path's kernels: rows of a batch come from several
// sequences, each row with its own position and KV-cache slot.
//
//	ropeRows      RoPE of x [rows, heads, headDim] with row r at position
//	              pos[r] (ops.RoPE takes one offset for contiguous tokens).
//	              The angle is formed in float64 as in ops/rope.go (see its
//	              header for why float32 is not accurate enough).
//	kvWrite       cache[slot[r], :] = x[r, :] for the rows' K or V [rows, kvDim].
//	attentionPaged causal softmax(q·kᵀ·scale)·v of each query row over its
//	              sequence's positions 0..pos[r], found through the
//	              sequence's page table: position j is cache slot
//	              table[seq·maxPages + j/pageSize]·pageSize + j%pageSize.
//	              q, out [rows, heads, headDim]; kc, vc [slots, kvHeads,
//	              headDim]; scores [rows·heads, ctx] scratch. One 32-thread
//	              block per (row, head): pass 1 the scores and their max,
//	              pass 2 exp and sum, pass 3 each lane a slice of headDim.
//	              v1 only; flash attention is another issue.
//	gatherRows    out[i, :] = x[rows[i], :]: the last row of each sequence.
//	scatterRows   out[rows[i], :] = x[i, :]: a mixed step's logits.

//kern:kernel block=256 pdl
func ropeRows(t gpu.Thread, out, x []float32, pos []int32, heads, headDim int, ratio float64) {
	half := headDim / 2
	g := t.GlobalX()
	if g >= len(x)/2 {
		return
	}
	i := g % half
	vec := g / half // row·heads + head
	sin, cos := rotary.SinCos(int(pos[vec/heads]), i, ratio)
	lo := vec*headDim + i
	x1, x2 := x[lo], x[lo+half]
	out[lo] = x1*cos - x2*sin
	out[lo+half] = x2*cos + x1*sin
}

//kern:kernel block=256 pdl
func kvWrite(t gpu.Thread, cache, x []float32, slot []int32, kvDim int) {
	i := t.GlobalX()
	if i < len(x) {
		cache[int(slot[i/kvDim])*kvDim+i%kvDim] = x[i]
	}
}

//kern:kernel block=256 pdl
func gatherRows(t gpu.Thread, out, x []float32, rows []int32, cols int) {
	i := t.GlobalX()
	if i < len(out) {
		out[i] = x[int(rows[i/cols])*cols+i%cols]
	}
}

// scatterRows is out[rows[i], :] = x[i, :] for i < n: a pass's logits
// into a mixed step's (forwardSplit).
//
//kern:kernel block=256 pdl
func scatterRows(t gpu.Thread, out, x []float32, rows []int32, n, cols int) {
	i := t.GlobalX()
	if i < n*cols {
		out[int(rows[i/cols])*cols+i%cols] = x[i]
	}
}

//kern:kernel block=256 pdl
func matmul4F32(t gpu.Thread, out, x, w []float32, rows, cols, k int) {
	matmulWarp4(f32w{}, t, out, x, w, rows, cols, k)
}

//kern:kernel block=256 pdl
func matmul4F16(t gpu.Thread, out, x []float32, w []gpu.Half, rows, cols, k int) {
	matmulWarp4(f16w{}, t, out, x, w, rows, cols, k)
}

//kern:kernel block=256 pdl
func matmul4BF16(t gpu.Thread, out, x []float32, w []gpu.BFloat16, rows, cols, k int) {
	matmulWarp4(bf16w{}, t, out, x, w, rows, cols, k)
}

// matmulWarp4 is v2: warp number w computes column w%cols of rows
// 4·(w/cols) … +3. k must be a multiple of 4 (the vector loads' alignment).
func matmulWarp4[T any, C wcodec[T]](c C, t gpu.Thread, out, x []float32, w []T, rows, cols, k int) {
	if k%4 != 0 {
		return // the precondition, stated: it also proves every Load4 aligned
	}
	warp := t.BlockIdx().X*(t.BlockDim().X/32) + t.Warp()
	groups := (rows + 3) / 4
	if warp >= groups*cols {
		return
	}
	col := warp % cols
	r0 := warp / cols * 4
	nr := min(4, rows-r0)
	var acc [4]float32
	for j := t.Lane() * 4; j < k; j += 128 {
		wv := c.load4(w, col*k+j)
		//kern:unroll
		for ri := 0; ri < 4; ri++ {
			if ri < nr {
				xv := gpu.Load4(x, (r0+ri)*k+j)
				a := acc[ri]
				a = gpu.FMA(xv[0], wv[0], a)
				a = gpu.FMA(xv[1], wv[1], a)
				a = gpu.FMA(xv[2], wv[2], a)
				acc[ri] = gpu.FMA(xv[3], wv[3], a)
			}
		}
	}
	//kern:unroll
	for ri := 0; ri < 4; ri++ {
		if ri < nr { // warp-uniform: nr depends on the warp's number only
			s := gpu.WarpSum(t, acc[ri])
			if t.Lane() == 0 {
				out[(r0+ri)*cols+col] = s
			}
		}
	}
}

//kern:kernel block=32 pdl
func attentionPaged(t gpu.Thread, out, q, kc, vc, scores []float32, pos, rowSeq, table []int32, heads, kvHeads, headDim, maxPages, pageSize, ctx int, scale float32) {
	row := t.BlockIdx().X // token·heads + head
	tok := row / heads
	h := row % heads
	kvh := h / (heads / kvHeads)
	n := int(pos[tok]) + 1 // causal: positions 0..pos
	tb := int(rowSeq[tok]) * maxPages
	qb := row * headDim
	sb := row * ctx
	lane := t.Lane()

	m := float32(-3.4e38)
	for j := lane; j < n; j += 32 {
		slot := int(table[tb+j/pageSize])*pageSize + j%pageSize
		kb := (slot*kvHeads + kvh) * headDim
		s := float32(0)
		//kern:nounroll
		for d := 0; d < headDim; d++ {
			s = gpu.FMA(q[qb+d], kc[kb+d], s)
		}
		s *= scale
		scores[sb+j] = s
		m = gpu.Max(m, s)
	}
	m = gpu.WarpMax(t, m)
	sum := float32(0)
	// Unrolled, these two loops took the kernel from 36 to 50 registers
	// (compiler/nounroll.go).
	//kern:nounroll
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
			slot := int(table[tb+j/pageSize])*pageSize + j%pageSize
			acc = gpu.FMA(scores[sb+j], vc[(slot*kvHeads+kvh)*headDim+d], acc)
		}
		out[qb+d] = acc * inv
	}
}
