//go:build gpu

package cublas

// Tests against a real GPU and the real cuBLAS: go test -tags gpu ./cublas.
// They skip, saying why, without a driver, a device or cuBLAS, unless
// KERN_REQUIRE_GPU=1, which makes that a failure (for machines that are
// supposed to have a GPU).

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"unsafe"

	"github.com/gokern/kern/cuda"
	"github.com/gokern/kern/gpu"
)

func gpuUnavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("KERN_REQUIRE_GPU") == "1" {
		t.Fatalf("KERN_REQUIRE_GPU=1: "+format, args...)
	}
	t.Skipf(format, args...)
}

// gpuHandle opens device 0's primary context and a cuBLAS handle on it.
func gpuHandle(t *testing.T) (*Handle, cuda.Context) {
	t.Helper()
	if err := cuda.Init(); err != nil {
		gpuUnavailable(t, "no CUDA driver: %v", err)
	}
	if n, err := cuda.DeviceCount(); err != nil || n == 0 {
		gpuUnavailable(t, "no CUDA device (count %d, %v)", n, err)
	}
	dev, err := cuda.DeviceGet(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := cuda.PrimaryCtxRetain(dev)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Release() })
	if err := Load(); err != nil {
		gpuUnavailable(t, "no cuBLAS: %v", err)
	}
	h, err := Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Destroy() })
	v, _ := h.Version()
	t.Logf("cuBLAS %d from %s", v, h.Library())
	return h, ctx
}

func devUpload[T any](t *testing.T, ctx cuda.Context, xs []T) cuda.DevicePtr {
	t.Helper()
	var p cuda.DevicePtr
	err := ctx.Do(func() (err error) {
		if p, err = cuda.MemAlloc(uint64(len(xs)) * uint64(unsafe.Sizeof(xs[0]))); err != nil {
			return err
		}
		return cuda.CopyHtoD(p, xs)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Do(func() error { return cuda.MemFree(p) }) })
	return p
}

func devDownload[T any](t *testing.T, ctx cuda.Context, p cuda.DevicePtr, n int) []T {
	t.Helper()
	out := make([]T, n)
	if err := ctx.Do(func() error {
		if err := cuda.CtxSynchronize(); err != nil {
			return err
		}
		return cuda.CopyDtoH(out, p)
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkGPU allows each element 1e-6 + eps·mag (mag = Σ|a·b| of its dot
// product) and reports the worst error as a share of the allowed one.
func checkGPU(t *testing.T, got []float32, want, mag []float64, eps float64) {
	t.Helper()
	bad, worst := 0, 0.0
	for i := range got {
		allowed := 1e-6 + eps*mag[i]
		d := math.Abs(float64(got[i]) - want[i])
		if d > allowed || math.IsNaN(float64(got[i])) {
			if bad < 5 {
				t.Errorf("C[%d] = %v, want %v (allowed %.3g)", i, got[i], want[i], allowed)
			}
			bad++
		}
		worst = max(worst, d/allowed)
	}
	t.Logf("worst error %.3f of the allowed", worst)
	if bad > 0 {
		t.Errorf("%d of %d out of tolerance", bad, len(got))
	}
}

func TestGPUSgemmAgainstCPU(t *testing.T) {
	h, ctx := gpuHandle(t)
	const m, n, k = 192, 160, 320
	r := rand.New(rand.NewPCG(7, 8))
	a := make([]float32, m*k) // column-major m×k
	b := make([]float32, n*k) // column-major n×k: op(B) = Bᵀ
	for i := range a {
		a[i] = r.Float32()*2 - 1
	}
	for i := range b {
		b[i] = r.Float32()*2 - 1
	}
	pa, pb := devUpload(t, ctx, a), devUpload(t, ctx, b)
	pc := devUpload(t, ctx, make([]float32, m*n))
	// C = A·Bᵀ with B stored n×k (ldb = n): exercises a transpose.
	if err := h.Sgemm(OpN, OpT, m, n, k, 1, pa, m, pb, n, 0, pc, m); err != nil {
		t.Fatal(err)
	}
	got := devDownload[float32](t, ctx, pc, m*n)
	want, mag := make([]float64, m*n), make([]float64, m*n)
	for j := range n {
		for i := range m {
			for p := range k {
				x, y := float64(a[i+p*m]), float64(b[j+p*n])
				want[i+j*m] += x * y
				mag[i+j*m] += math.Abs(x * y)
			}
		}
	}
	// float32 accumulation: a few ulps of the sum of magnitudes.
	checkGPU(t, got, want, mag, 4*float64(k)*0x1p-24)
}

func TestGPUSgemmRowMajor(t *testing.T) {
	h, ctx := gpuHandle(t)
	const m, n, k = 65, 33, 17
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(i%7 - 3)
	}
	for i := range b {
		b[i] = float32(i%5 - 2)
	}
	pc := devUpload(t, ctx, make([]float32, m*n))
	if err := h.SgemmRowMajor(m, n, k, 1, devUpload(t, ctx, a), devUpload(t, ctx, b), 0, pc); err != nil {
		t.Fatal(err)
	}
	got := devDownload[float32](t, ctx, pc, m*n)
	for i := range m {
		for j := range n {
			var want float32
			for p := range k {
				want += a[i*k+p] * b[p*n+j]
			}
			if got[i*n+j] != want {
				t.Fatalf("C[%d,%d] = %v, want %v (small integers are exact)", i, j, got[i*n+j], want)
			}
		}
	}
}

func TestGPUGemmExHalf(t *testing.T) {
	h, ctx := gpuHandle(t)
	const m, n, k = 128, 96, 64
	r := rand.New(rand.NewPCG(9, 10))
	a, b := make([]gpu.Half, m*k), make([]gpu.Half, k*n)
	for i := range a {
		a[i] = gpu.ToHalf(float32(r.IntN(9)-4) / 4)
	}
	for i := range b {
		b[i] = gpu.ToHalf(float32(r.IntN(9)-4) / 4)
	}
	pc := devUpload(t, ctx, make([]float32, m*n))
	err := h.GemmEx(OpN, OpN, m, n, k, 1, devUpload(t, ctx, a), Float16, m, devUpload(t, ctx, b), Float16, k,
		0, pc, Float32, m, Compute32F, GemmDefaultTensorOp)
	if err != nil {
		t.Fatal(err)
	}
	got := devDownload[float32](t, ctx, pc, m*n)
	for j := range n {
		for i := range m {
			var want float64
			for p := range k {
				want += float64(a[i+p*m].Float32()) * float64(b[p+j*k].Float32())
			}
			if float64(got[i+j*m]) != want {
				t.Fatalf("C[%d,%d] = %v, want %v (quarters accumulate exactly in float32)", i, j, got[i+j*m], want)
			}
		}
	}
}
