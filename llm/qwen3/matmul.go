package qwen3

// The matrix multiply the forward pass calls, behind an interface so that
// a faster kernel (a tensor-core ops.Matmul, cuBLAS) can be swapped in.

import (
	"fmt"

	"github.com/gokern/kern"
)

// Matmul computes out = x·wᵀ: x [rows, w.In] float32, out [rows, w.Out]
// float32, w a linear layer's weight [Out, In] as stored by Hugging Face.
// Implementations accumulate in float32.
type Matmul interface {
	MatmulT(q kern.Queue, out, x *kern.Buffer[float32], w *Weight, rows int) error
}

// WarpMatmul is the default Matmul: matmul* in kernels.go, a warp per
// output element, on every device.
type WarpMatmul struct{}

// MatmulT implements Matmul.
func (WarpMatmul) MatmulT(q kern.Queue, out, x *kern.Buffer[float32], w *Weight, rows int) error {
	n := rows * w.Out
	switch {
	case x == nil || out == nil:
		return fmt.Errorf("qwen3: matmul %s: nil buffer", w.Name)
	case x.Len() != rows*w.In:
		return fmt.Errorf("qwen3: matmul %s: x has %d elements, want rows×in = %d×%d", w.Name, x.Len(), rows, w.In)
	case out.Len() != n:
		return fmt.Errorf("qwen3: matmul %s: out has %d elements, want rows×out = %d×%d", w.Name, out.Len(), rows, w.Out)
	}
	if n == 0 {
		return nil
	}
	const warpsPerBlock = 8 // block=256
	grid := kern.Cover((n + warpsPerBlock - 1) / warpsPerBlock * 256)
	var err error
	switch {
	case w.bf16 != nil:
		err = matmulBF16Kernel.Launch(q, grid, out, x, w.bf16, rows, w.Out, w.In)
	case w.f16 != nil:
		err = matmulF16Kernel.Launch(q, grid, out, x, w.f16, rows, w.Out, w.In)
	default:
		err = matmulF32Kernel.Launch(q, grid, out, x, w.f32, rows, w.Out, w.In)
	}
	if err != nil {
		return fmt.Errorf("qwen3: matmul %s: %w", w.Name, err)
	}
	return nil
}
