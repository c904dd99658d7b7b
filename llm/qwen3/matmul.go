package qwen3

// The matrix multiply the float32 forward pass calls, behind an interface
// so that a faster kernel can be swapped in: OpsMatmul (opsmatmul.go) runs
// it on ops.Matmul's tensor cores at float32 accuracy.

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

// WarpMatmul is the default Matmul on a GPU and the emulator
// (DefaultMatmul): matmul* in kernels.go, v2 (4 rows per warp, vector
// loads) when the inner dimension is a multiple of 4 and at least v2MinK,
// else v1.
type WarpMatmul struct {
	V1 bool // always v1 (for tests)
}

// v2MinK: below it half a warp's lanes or more idle in v2's 4-wide loop
// and its per-row predication costs more than it saves (on the emulator,
// the tiny test models' decode step took twice as long with v2 at k = 64).
const v2MinK = 256

// MatmulT implements Matmul.
func (m WarpMatmul) MatmulT(q kern.Queue, out, x *kern.Buffer[float32], w *Weight, rows int) error {
	n := rows * w.Out
	if err := matmulShapes(out, x, w, rows); err != nil || n == 0 {
		return err
	}
	const warpsPerBlock = 8 // block=256
	var err error
	if w.In%4 == 0 && w.In >= v2MinK && !m.V1 {
		warps := (rows + 3) / 4 * w.Out
		grid := kern.Cover((warps + warpsPerBlock - 1) / warpsPerBlock * 256)
		switch {
		case w.bf16 != nil:
			err = matmul4BF16Kernel.Launch(q, grid, out, x, w.bf16, rows, w.Out, w.In)
		case w.f16 != nil:
			err = matmul4F16Kernel.Launch(q, grid, out, x, w.f16, rows, w.Out, w.In)
		default:
			err = matmul4F32Kernel.Launch(q, grid, out, x, w.f32, rows, w.Out, w.In)
		}
	} else {
		grid := kern.Cover((n + warpsPerBlock - 1) / warpsPerBlock * 256)
		switch {
		case w.bf16 != nil:
			err = matmulBF16Kernel.Launch(q, grid, out, x, w.bf16, rows, w.Out, w.In)
		case w.f16 != nil:
			err = matmulF16Kernel.Launch(q, grid, out, x, w.f16, rows, w.Out, w.In)
		default:
			err = matmulF32Kernel.Launch(q, grid, out, x, w.f32, rows, w.Out, w.In)
		}
	}
	if err != nil {
		return fmt.Errorf("qwen3: matmul %s: %w", w.Name, err)
	}
	return nil
}

// matmulShapes checks out = x·wᵀ's buffers against rows and w.
func matmulShapes(out, x *kern.Buffer[float32], w *Weight, rows int) error {
	switch {
	case x == nil || out == nil:
		return fmt.Errorf("qwen3: matmul %s: nil buffer", w.Name)
	case x.Len() != rows*w.In:
		return fmt.Errorf("qwen3: matmul %s: x has %d elements, want rows×in = %d×%d", w.Name, x.Len(), rows, w.In)
	case out.Len() != rows*w.Out:
		return fmt.Errorf("qwen3: matmul %s: out has %d elements, want rows×out = %d×%d", w.Name, out.Len(), rows, w.Out)
	}
	return nil
}
