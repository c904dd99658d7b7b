package qwen3

// The small kernels the ops path (opsforward.go) needs between package
// ops calls: the attention ops take head dimensions of 64 and 128 only
// and 16-bit elements, so the engine pads smaller heads with zeros (zero
// columns add nothing to q·k, and a zero column of v gives a zero column
// of the output, which unpad drops) and gathers a prefill's keys out of
// the paged cache into the contiguous layout ops.FlashAttention reads.
//
//	padCast   out [rows, dp] T = x [rows, d] float32 rounded, columns
//	          d ≤ j < dp zero.
//	unpad     out [rows, d] = x [rows, dp] minus the padding columns.
//	splitQKV  q [rows, nq], k and v [rows, nkv] from the stacked
//	          projection's qkv [rows, nq+2·nkv] (float32).
//	gatherKV  out[i, :] = cache[slots[i], :] for the first n elements of
//	          out (rows of cols elements; out may be longer, a buffer
//	          kept across steps).

import (
	"fmt"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops"
)

// scodec rounds a float32 to a 16-bit element type.
type scodec[T any] interface {
	store(float32) T
}

func (f16w) store(v float32) gpu.Half      { return gpu.ToHalf(v) }
func (bf16w) store(v float32) gpu.BFloat16 { return gpu.ToBFloat16(v) }

//kern:kernel block=256 pdl
func padCastBF16(t gpu.Thread, out []gpu.BFloat16, x []float32, d, dp int) {
	padCast(bf16w{}, t, out, x, d, dp)
}

//kern:kernel block=256 pdl
func padCastF16(t gpu.Thread, out []gpu.Half, x []float32, d, dp int) {
	padCast(f16w{}, t, out, x, d, dp)
}

func padCast[T any, C scodec[T]](c C, t gpu.Thread, out []T, x []float32, d, dp int) {
	i := t.GlobalX()
	if i >= len(out) {
		return
	}
	col := i % dp
	v := float32(0)
	if col < d {
		v = x[i/dp*d+col]
	}
	out[i] = c.store(v)
}

//kern:kernel block=256 pdl
func unpadBF16(t gpu.Thread, out, x []gpu.BFloat16, d, dp int) { unpad(t, out, x, d, dp) }

//kern:kernel block=256 pdl
func unpadF16(t gpu.Thread, out, x []gpu.Half, d, dp int) { unpad(t, out, x, d, dp) }

func unpad[T any](t gpu.Thread, out, x []T, d, dp int) {
	i := t.GlobalX()
	if i < len(out) {
		out[i] = x[i/d*dp+i%d]
	}
}

//kern:kernel block=256 pdl
func splitQKV(t gpu.Thread, q, k, v, qkv []float32, nq, nkv int) {
	i := t.GlobalX()
	if i >= len(qkv) {
		return
	}
	w := nq + 2*nkv
	r, c := i/w, i%w
	switch {
	case c < nq:
		q[r*nq+c] = qkv[i]
	case c < nq+nkv:
		k[r*nkv+c-nq] = qkv[i]
	default:
		v[r*nkv+c-nq-nkv] = qkv[i]
	}
}

//kern:kernel block=256 pdl
func gatherKVBF16(t gpu.Thread, out, cache []gpu.BFloat16, slots []int32, cols, n int) {
	gatherKV(t, out, cache, slots, cols, n)
}

//kern:kernel block=256 pdl
func gatherKVF16(t gpu.Thread, out, cache []gpu.Half, slots []int32, cols, n int) {
	gatherKV(t, out, cache, slots, cols, n)
}

func gatherKV[T any](t gpu.Thread, out, cache []T, slots []int32, cols, n int) {
	i := t.GlobalX()
	if i < n {
		out[i] = cache[int(slots[i/cols])*cols+i%cols]
	}
}

// The launchers by element type, for the generic ops pass.

func padCastLaunch[T ops.Half16](q kern.Queue, out *kern.Buffer[T], x *kern.Buffer[float32], d, dp int) error {
	switch o := any(out).(type) {
	case *kern.Buffer[gpu.BFloat16]:
		return padCastBF16Kernel.Launch(q, kern.Cover(o.Len()), o, x, d, dp)
	case *kern.Buffer[gpu.Half]:
		return padCastF16Kernel.Launch(q, kern.Cover(o.Len()), o, x, d, dp)
	}
	return fmt.Errorf("qwen3: padCast of %T", out)
}

func unpadLaunch[T ops.Half16](q kern.Queue, out, x *kern.Buffer[T], d, dp int) error {
	switch o := any(out).(type) {
	case *kern.Buffer[gpu.BFloat16]:
		return unpadBF16Kernel.Launch(q, kern.Cover(o.Len()), o, any(x).(*kern.Buffer[gpu.BFloat16]), d, dp)
	case *kern.Buffer[gpu.Half]:
		return unpadF16Kernel.Launch(q, kern.Cover(o.Len()), o, any(x).(*kern.Buffer[gpu.Half]), d, dp)
	}
	return fmt.Errorf("qwen3: unpad of %T", out)
}

func gatherKVLaunch[T ops.Half16](q kern.Queue, out, cache *kern.Buffer[T], slots *kern.Buffer[int32], cols, n int) error {
	switch o := any(out).(type) {
	case *kern.Buffer[gpu.BFloat16]:
		return gatherKVBF16Kernel.Launch(q, kern.Cover(n), o, any(cache).(*kern.Buffer[gpu.BFloat16]), slots, cols, n)
	case *kern.Buffer[gpu.Half]:
		return gatherKVF16Kernel.Launch(q, kern.Cover(n), o, any(cache).(*kern.Buffer[gpu.Half]), slots, cols, n)
	}
	return fmt.Errorf("qwen3: gatherKV of %T", out)
}

// hcodec converts a 16-bit type to float32 and back.
type hcodec[T any] interface {
	load(T) float32
	store(float32) T
}

// splitHiLo writes x [n] float32 as out [2n]: out[i] = hi = round(x[i]),
// out[n+i] = round(x[i] - hi) (OpsMatmul).
//
//kern:kernel block=256 pdl
func splitHiLoBF16(t gpu.Thread, out []gpu.BFloat16, x []float32, n int) {
	splitHiLo(bf16w{}, t, out, x, n)
}

//kern:kernel block=256 pdl
func splitHiLoF16(t gpu.Thread, out []gpu.Half, x []float32, n int) {
	splitHiLo(f16w{}, t, out, x, n)
}

func splitHiLo[T any, C hcodec[T]](c C, t gpu.Thread, out []T, x []float32, n int) {
	i := t.GlobalX()
	if i < n {
		v := x[i]
		out[i] = c.store(v)
		out[n+i] = c.store(v - c.load(c.store(v)))
	}
}

// addHalves: out[i] = y[i] + y[n+i], the two halves of OpsMatmul's
// product.
//
//kern:kernel block=256 pdl
func addHalves(t gpu.Thread, out, y []float32, n int) {
	i := t.GlobalX()
	if i < n {
		out[i] = y[i] + y[n+i]
	}
}

func splitHiLoLaunch[T ops.Half16](q kern.Queue, out *kern.Buffer[T], x *kern.Buffer[float32], n int) error {
	switch o := any(out).(type) {
	case *kern.Buffer[gpu.BFloat16]:
		return splitHiLoBF16Kernel.Launch(q, kern.Cover(n), o, x, n)
	case *kern.Buffer[gpu.Half]:
		return splitHiLoF16Kernel.Launch(q, kern.Cover(n), o, x, n)
	}
	return fmt.Errorf("qwen3: splitHiLo of %T", out)
}
