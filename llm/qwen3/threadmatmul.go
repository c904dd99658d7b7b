package qwen3

// The float32 path's matrix multiply for the native device.
//
// In native mode every GPU thread is a goroutine and a warp collective is
// a rendezvous of 32 of them: WarpSum costs about 1.6 µs per thread, six
// times a launch's whole per-thread cost without one (BenchmarkWarpSum1M
// and BenchmarkElementwise1M in package gpu, 2-core VM). WarpMatmul's
// warp per output pays that rendezvous for every output, about 95% of a
// decode step there. ThreadMatmul gives each output one thread that sums
// its row alone, in order: no collective, 32 times fewer threads, and a
// loop the Go compiler runs as it would any dot product.
//
// On a GPU it would be slow (each thread strides through its own weight
// row, so a warp's loads are 32 rows apart and never coalesce), which is
// why it is the native device's default only (DefaultMatmul).

import (
	"fmt"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

//kern:kernel block=256
func matmulThreadF32(t gpu.Thread, out, x, w []float32, rows, cols, k int) {
	matmulThread(f32w{}, t, out, x, w, rows, cols, k)
}

//kern:kernel block=256
func matmulThreadF16(t gpu.Thread, out, x []float32, w []gpu.Half, rows, cols, k int) {
	matmulThread(f16w{}, t, out, x, w, rows, cols, k)
}

//kern:kernel block=256
func matmulThreadBF16(t gpu.Thread, out, x []float32, w []gpu.BFloat16, rows, cols, k int) {
	matmulThread(bf16w{}, t, out, x, w, rows, cols, k)
}

// matmulThread: thread i computes out[i] (row i/cols, column i%cols) as
// Σ_j x[row, j]·w[column, j], j in order, fused multiply-adds.
func matmulThread[T any, C wcodec[T]](c C, t gpu.Thread, out, x []float32, w []T, rows, cols, k int) {
	i := t.GlobalX()
	if i >= rows*cols {
		return
	}
	r, col := i/cols, i%cols
	xr, wr := x[r*k:(r+1)*k], w[col*k:(col+1)*k]
	acc := float32(0)
	for j := range xr {
		acc = gpu.FMA(xr[j], c.load(wr[j]), acc)
	}
	out[i] = acc
}

// ThreadMatmul is the Matmul of the native device (see the file
// comment): a thread per output. It runs on every device, and is correct
// on all of them; only in native mode is it the fast one.
type ThreadMatmul struct{}

// MatmulT implements Matmul.
func (ThreadMatmul) MatmulT(q kern.Queue, out, x *kern.Buffer[float32], w *Weight, rows int) error {
	n := rows * w.Out
	if err := matmulShapes(out, x, w, rows); err != nil || n == 0 {
		return err
	}
	grid := kern.Cover(n)
	var err error
	switch {
	case w.bf16 != nil:
		err = matmulThreadBF16Kernel.Launch(q, grid, out, x, w.bf16, rows, w.Out, w.In)
	case w.f16 != nil:
		err = matmulThreadF16Kernel.Launch(q, grid, out, x, w.f16, rows, w.Out, w.In)
	default:
		err = matmulThreadF32Kernel.Launch(q, grid, out, x, w.f32, rows, w.Out, w.In)
	}
	if err != nil {
		return fmt.Errorf("qwen3: matmul %s: %w", w.Name, err)
	}
	return nil
}

// DefaultMatmul is the Matmul a model on dev starts with: ThreadMatmul
// on the native device, WarpMatmul elsewhere.
func DefaultMatmul(dev *kern.Device) Matmul {
	if dev != nil && dev.Kind() == "native" {
		return ThreadMatmul{}
	}
	return WarpMatmul{}
}
