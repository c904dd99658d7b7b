package qwen3

// OpsMatmul: the float32 path's projections on ops.Matmul (tensor cores;
// the decode GEMV for few rows) at float32 accuracy.
//
// ops.Matmul multiplies 16-bit operands, exactly, summing in float32. A
// float32 activation x is split into two 16-bit numbers of the weights'
// type, hi = round(x) and lo = round(x - hi), which together carry 16 of
// its 24 significant bits (bf16: |x - hi - lo| ≤ 2^-18·|x|); the two
// halves go through one ops.Matmul as 2·rows rows, and the halves of the
// product are added: x·wᵀ = hi·wᵀ + lo·wᵀ up to that 2^-18 and float32
// summation. The weights need no splitting: they are 16-bit already.
// The cost: twice the multiply-adds (prefill, compute-bound) but the same
// weight bytes (decode, bandwidth-bound: the GEMV streams w once for all
// its rows, while 2·rows ≤ 16).
//
// This is what lets the engine's acceptance (logits within 2e-3 of an
// fp32 reference) hold with its projections on ops; the ops path (ops.go)
// instead feeds bf16 activations straight in and cannot (see there). Not
// batch-invariant: ops.Matmul picks the GEMV or the tensor-core kernel by
// the row count, so a row's sum order depends on what it is batched with.

import (
	"fmt"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops"
)

// OpsMatmul implements Matmul with ops.Matmul over split activations.
// Its scratch buffers are reused across calls: like a Model, it must not
// be used concurrently. Float32 weights go to Fallback.
type OpsMatmul struct {
	Fallback Matmul // nil: WarpMatmul{}
	scratch  map[scratchKey]any
}

type scratchKey struct {
	n    int
	kind byte // 'b' bf16, 'h' f16, 'f' float32
}

// maxScratch bounds the buffers kept (a server's prefills come in every
// row count); past it they are all freed, between calls.
const maxScratch = 32

// MatmulT implements Matmul.
func (o *OpsMatmul) MatmulT(q kern.Queue, out, x *kern.Buffer[float32], w *Weight, rows int) error {
	switch {
	case w.bf16 != nil:
		return opsMatmulT[gpu.BFloat16](o, q, out, x, w, rows, 'b')
	case w.f16 != nil:
		return opsMatmulT[gpu.Half](o, q, out, x, w, rows, 'h')
	case o.Fallback != nil:
		return o.Fallback.MatmulT(q, out, x, w, rows)
	}
	return WarpMatmul{}.MatmulT(q, out, x, w, rows)
}

func opsMatmulT[T ops.Half16](o *OpsMatmul, q kern.Queue, out, x *kern.Buffer[float32], w *Weight, rows int, kind byte) error {
	n, k := w.Out, w.In
	switch {
	case x == nil || out == nil:
		return fmt.Errorf("qwen3: matmul %s: nil buffer", w.Name)
	case x.Len() != rows*k:
		return fmt.Errorf("qwen3: matmul %s: x has %d elements, want rows×in = %d×%d", w.Name, x.Len(), rows, k)
	case out.Len() != rows*n:
		return fmt.Errorf("qwen3: matmul %s: out has %d elements, want rows×out = %d×%d", w.Name, out.Len(), rows, n)
	case rows == 0 || n == 0:
		return nil
	}
	dev := x.Device()
	if len(o.scratch) >= maxScratch-1 { // room for this call's two
		o.Free()
	}
	xs, err := scratchBuf[T](o, dev, 2*rows*k, kind)
	if err != nil {
		return fmt.Errorf("qwen3: matmul %s: %w", w.Name, err)
	}
	ys, err := scratchBuf[float32](o, dev, 2*rows*n, 'f')
	if err != nil {
		return fmt.Errorf("qwen3: matmul %s: %w", w.Name, err)
	}
	if err := splitHiLoLaunch(q, xs, x, rows*k); err != nil {
		return fmt.Errorf("qwen3: matmul %s: split: %w", w.Name, err)
	}
	if err := ops.Matmul(q, ys, xs, wbuf[T](w), 2*rows, n, k, ops.MatmulOpts[float32]{}); err != nil {
		return fmt.Errorf("qwen3: matmul %s: %w", w.Name, err)
	}
	if err := addHalvesKernel.Launch(q, kern.Cover(rows*n), out, ys, rows*n); err != nil {
		return fmt.Errorf("qwen3: matmul %s: sum of halves: %w", w.Name, err)
	}
	return nil
}

// scratchBuf returns o's buffer of exactly n elements of T (ops checks
// lengths exactly), made on first use.
func scratchBuf[T gpu.Elem](o *OpsMatmul, dev *kern.Device, n int, kind byte) (*kern.Buffer[T], error) {
	key := scratchKey{n, kind}
	if b, ok := o.scratch[key].(*kern.Buffer[T]); ok && b.Device() == dev {
		return b, nil
	}
	if o.scratch == nil {
		o.scratch = map[scratchKey]any{}
	}
	b, err := kern.Alloc[T](dev, n)
	if err != nil {
		return nil, err
	}
	o.scratch[key] = b
	return b, nil
}

// Free releases the scratch buffers.
func (o *OpsMatmul) Free() {
	for _, b := range o.scratch {
		switch b := b.(type) {
		case *kern.Buffer[gpu.BFloat16]:
			b.Free()
		case *kern.Buffer[gpu.Half]:
			b.Free()
		case *kern.Buffer[float32]:
			b.Free()
		}
	}
	o.scratch = nil
}
