package qwen3

// Fused kernels of the ops path. A decode step's layer is a chain of small
// launches; on an H100 (docs/performance-gpu.md) each costs 3–7 µs however
// little it moves, so at batch 1 the launches between the projections cost
// more than the projections. These kernels do in one launch what the
// unfused path (kept for tracing, opsforward.go) does in several:
//
//	qkvPrep      splitQKV, q_norm and k_norm, RoPE of q and k, padCast of
//	             q, and the KV-cache write (KVCacheWrite) of k and v: one
//	             warp per head vector of the stacked projection's output
//	             qkv [rows, (nh + 2·nkv)·d] float32. Vector j of row r is
//	             query head j (j < nh), key head j-nh, or value head
//	             j-nh-nkv; lane l holds the rotate-half pairs (i, i+d/2)
//	             for i = l, l+32, … < d/2. Queries go to q [rows, nh, hd],
//	             keys and values to the cache rows of slots[r] (a negative
//	             slot skips the row), columns d ≤ c < hd zero.
//	rmsNormCast  out [rows, cols] T = RMSNorm(x [rows, cols] float32) with
//	             weight [cols] float32, one block per row: RMSNorm and the
//	             cast to the projections' input type in one pass.
//
// The arithmetic is the unfused path's, in float32 (the same norm and the
// same RoPE angles), except that a rotated key is rounded to T once
// rather than rounded, rotated and rounded again.

import (
	"fmt"
	"github.com/gokern/kern/internal/rotary"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops"
)

// qkvPairs is the most rotate-half pairs a lane holds: head dims up to
// 2·32·qkvPairs = 512.
const qkvPairs = 8

//kern:kernel block=128 minblocks=1 pdl
func qkvPrepBF16(t gpu.Thread, q, kCache, vCache []gpu.BFloat16, qkv, qNorm, kNorm []float32, pos, slots []int32, rows, nh, nkv, d, hd int, norm bool, eps float32, ratio float64) {
	qkvPrep(bf16w{}, t, q, kCache, vCache, qkv, qNorm, kNorm, pos, slots, rows, nh, nkv, d, hd, norm, eps, ratio)
}

//kern:kernel block=128 minblocks=1 pdl
func qkvPrepF16(t gpu.Thread, q, kCache, vCache []gpu.Half, qkv, qNorm, kNorm []float32, pos, slots []int32, rows, nh, nkv, d, hd int, norm bool, eps float32, ratio float64) {
	qkvPrep(f16w{}, t, q, kCache, vCache, qkv, qNorm, kNorm, pos, slots, rows, nh, nkv, d, hd, norm, eps, ratio)
}

func qkvPrep[T any, C scodec[T]](c C, t gpu.Thread, q, kCache, vCache []T, qkv, qNorm, kNorm []float32, pos, slots []int32, rows, nh, nkv, d, hd int, norm bool, eps float32, ratio float64) {
	heads := nh + 2*nkv
	vec := t.BlockIdx().X*(t.BlockDim().X/32) + t.Warp()
	if vec >= rows*heads {
		return
	}
	r, j := int(int32(vec)/int32(heads)), int(int32(vec)%int32(heads)) // 32-bit: no division subroutine
	lane, half := t.Lane(), d/2
	isV := j >= nh+nkv
	w := qNorm
	if j >= nh {
		w = kNorm
	}
	// Every global load first, then the arithmetic: a decode step's
	// launch is a single dependent round trip to memory, not one per
	// stage (the vector, the norm weights, the position, the slot).
	// The loaded words are converted only where they are used: a
	// conversion waits for its load, and each bounds check after it (a
	// branch the warp issues in order) would then wait too.
	at, slot32 := pos[r], slots[r]
	x1, x2 := headPrep(t, qkv, w, vec, d, at, isV, norm, eps, ratio)
	slot := int(slot32)
	var out []T
	dst := 0
	if j < nh {
		out, dst = q, (r*nh+j)*hd
	} else {
		if slot < 0 {
			return
		}
		out, dst = kCache, (slot*nkv+j-nh)*hd
		if isV {
			out, dst = vCache, (slot*nkv+j-nh-nkv)*hd
		}
	}
	//kern:unroll
	for p := 0; p < qkvPairs; p++ {
		if i := lane + 32*p; i < half {
			out[dst+i], out[dst+i+half] = c.store(x1[p]), c.store(x2[p])
		}
	}
	for i := d + lane; i < hd; i += 32 {
		out[dst+i] = c.store(0)
	}
}

// headPrep rounds head vector j of qkv (query heads, then key heads,
// then value heads, d each) through QK-norm (if w is the norm's weight:
// !isV && norm) and RoPE at position at (not for a value), one warp, and
// hands lane-pair p's rotate-half pair (i, i+d/2), i = lane+32p, back:
// qkvPrep's arithmetic, and the persistent layer's (mega_attn.go).
func headPrep(t gpu.Thread, qkv, w []float32, j, d int, at int32, isV, norm bool, eps float32, ratio float64) (x1, x2 [qkvPairs]float32) {
	lane, half := t.Lane(), d/2
	base := j * d
	var w1, w2 [qkvPairs]float32
	//kern:unroll
	for p := 0; p < qkvPairs; p++ {
		if i := lane + 32*p; i < half {
			x1[p], x2[p] = qkv[base+i], qkv[base+i+half]
			if !isV && norm {
				w1[p], w2[p] = w[i], w[i+half]
			}
		}
	}
	if !isV && norm {
		ss := float32(0)
		//kern:unroll
		for p := 0; p < qkvPairs; p++ {
			ss = gpu.FMA(x1[p], x1[p], ss) // zero past half
			ss = gpu.FMA(x2[p], x2[p], ss)
		}
		rs := gpu.Rsqrt(gpu.WarpSum(t, ss)/float32(d) + eps)
		//kern:unroll
		for p := 0; p < qkvPairs; p++ {
			x1[p], x2[p] = x1[p]*rs*w1[p], x2[p]*rs*w2[p]
		}
	}
	if !isV {
		//kern:unroll
		for p := 0; p < qkvPairs; p++ {
			if i := lane + 32*p; i < half {
				sin, cos := rotary.SinCos(int(at), i, ratio)
				x1[p], x2[p] = x1[p]*cos-x2[p]*sin, x2[p]*cos+x1[p]*sin
			}
		}
	}
	return x1, x2
}

//kern:kernel block=256 pdl
func rmsNormCastBF16(t gpu.Thread, out []gpu.BFloat16, x, w []float32, cols int, eps float32) {
	rmsNormCast(bf16w{}, t, out, x, w, cols, eps)
}

//kern:kernel block=256 pdl
func rmsNormCastF16(t gpu.Thread, out []gpu.Half, x, w []float32, cols int, eps float32) {
	rmsNormCast(f16w{}, t, out, x, w, cols, eps)
}

func rmsNormCast[T any, C scodec[T]](c C, t gpu.Thread, out []T, x, w []float32, cols int, eps float32) {
	base := t.BlockIdx().X * cols
	tid, nt := t.ThreadIdx().X, normThreads // rmsNormCastLaunch's block
	if cols <= normRegs*nt {
		// The row and the weights in registers, every load issued before
		// the first use: one round trip to memory, where the loops below
		// wait for one per element a thread handles.
		var v, wv [normRegs]float32
		//kern:unroll
		for k := 0; k < normRegs; k++ {
			if j := tid + k*nt; j < cols {
				v[k], wv[k] = x[base+j], w[j]
			}
		}
		ss := float32(0)
		//kern:unroll
		for k := 0; k < normRegs; k++ {
			ss = gpu.FMA(v[k], v[k], ss) // zero past the row's end
		}
		r := gpu.Rsqrt(gpu.BlockSum(t, ss)/float32(cols) + eps)
		//kern:unroll
		for k := 0; k < normRegs; k++ {
			if j := tid + k*nt; j < cols {
				out[base+j] = c.store(v[k] * r * wv[k])
			}
		}
		return
	}
	ss := float32(0)
	for j := tid; j < cols; j += nt {
		v := x[base+j]
		ss = gpu.FMA(v, v, ss)
	}
	r := gpu.Rsqrt(gpu.BlockSum(t, ss)/float32(cols) + eps)
	for j := tid; j < cols; j += nt {
		out[base+j] = c.store(x[base+j] * r * w[j])
	}
}

// normRegs is the elements of a row a thread of rmsNormCast holds in
// registers: rows up to 16·256 = 4096 (Qwen3 up to 8B) in one pass.
// normThreads is its block, a constant so that the 32 addresses are
// one base and immediate offsets.
const (
	normRegs    = 16
	normThreads = 256
)

// qkvPrepLaunch runs qkvPrep over rows rows (qNorm and kNorm nil for a
// model without QK-norm; ratio is RoPE's θ^(-2/d)).
func qkvPrepLaunch[T ops.Half16](qu kern.Queue, q, kCache, vCache *kern.Buffer[T], qkv, qNorm, kNorm *kern.Buffer[float32], pos, slots *kern.Buffer[int32], rows, nh, nkv, d, hd int, eps float32, ratio float64) error {
	if d/2 > 32*qkvPairs {
		return fmt.Errorf("qwen3: fused q/k/v preparation: head dim %d is over %d", d, 64*qkvPairs)
	}
	norm := qNorm != nil
	if !norm {
		qNorm, kNorm = qkv, qkv // read by no thread
	}
	grid := kern.Blocks(gpu.Dim3{X: (rows*(nh+2*nkv) + 3) / 4, Y: 1, Z: 1}, gpu.Dim3{X: 128, Y: 1, Z: 1})
	switch o := any(q).(type) {
	case *kern.Buffer[gpu.BFloat16]:
		return qkvPrepBF16Kernel.Launch(qu, grid, o, any(kCache).(*kern.Buffer[gpu.BFloat16]), any(vCache).(*kern.Buffer[gpu.BFloat16]),
			qkv, qNorm, kNorm, pos, slots, rows, nh, nkv, d, hd, norm, eps, ratio)
	case *kern.Buffer[gpu.Half]:
		return qkvPrepF16Kernel.Launch(qu, grid, o, any(kCache).(*kern.Buffer[gpu.Half]), any(vCache).(*kern.Buffer[gpu.Half]),
			qkv, qNorm, kNorm, pos, slots, rows, nh, nkv, d, hd, norm, eps, ratio)
	}
	return fmt.Errorf("qwen3: fused q/k/v preparation of %T", q)
}

// rmsNormCastLaunch runs rmsNormCast over rows rows of cols.
func rmsNormCastLaunch[T ops.Half16](qu kern.Queue, out *kern.Buffer[T], x, w *kern.Buffer[float32], rows, cols int, eps float32) error {
	grid := kern.Blocks(gpu.Dim3{X: rows, Y: 1, Z: 1}, gpu.Dim3{X: normThreads, Y: 1, Z: 1})
	switch o := any(out).(type) {
	case *kern.Buffer[gpu.BFloat16]:
		return rmsNormCastBF16Kernel.Launch(qu, grid, o, x, w, cols, eps)
	case *kern.Buffer[gpu.Half]:
		return rmsNormCastF16Kernel.Launch(qu, grid, o, x, w, cols, eps)
	}
	return fmt.Errorf("qwen3: RMSNorm and cast to %T", out)
}
