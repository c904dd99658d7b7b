//go:build linux && !gpu

package cublas

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/gokern/kern/cuda"
	"github.com/gokern/kern/gpu"
)

// refGemm is the float64 reference: C = alpha·op(A)·op(B) + beta·C,
// column-major, as BLAS defines it (C not read when beta is 0).
func refGemm(ta, tb Operation, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int,
	beta float64, c []float64, ldc int) {
	at := func(i, p int) float64 {
		if ta == OpN {
			return a[i+p*lda]
		}
		return a[p+i*lda]
	}
	bt := func(p, j int) float64 {
		if tb == OpN {
			return b[p+j*ldb]
		}
		return b[j+p*ldb]
	}
	for j := range n {
		for i := range m {
			var acc float64
			for p := range k {
				acc += at(i, p) * bt(p, j)
			}
			old := 0.0
			if beta != 0 {
				old = beta * c[i+j*ldc]
			}
			c[i+j*ldc] = alpha*acc + old
		}
	}
}

// stored returns the rows and columns of an operand as stored: op(X) is
// r×c, so X is r×c for OpN and c×r otherwise.
func stored(op Operation, r, c int) (int, int) {
	if op == OpN {
		return r, c
	}
	return c, r
}

// pad is the value left in the rows between a column's last element and
// the next column (ld > rows); a GEMM must neither read it into the
// result nor write it.
const pad = 12345

// matrix returns a rows×cols column-major matrix with leading dimension
// ld, random in [-1, 1) with pad between columns.
func matrix(r *rand.Rand, rows, cols, ld int) []float64 {
	x := make([]float64, ld*cols)
	for j := range cols {
		for i := range ld {
			if i < rows {
				x[i+j*ld] = r.Float64()*2 - 1
			} else {
				x[i+j*ld] = pad
			}
		}
	}
	return x
}

func f32s(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

// checkClose compares got with want element by element: each must be
// within abs + |want|·rel. It reports the first mismatches and the largest
// error as a share of what was allowed.
func checkClose(t *testing.T, what string, got, want []float64, abs, rel float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	bad, worst := 0, 0.0
	for i := range got {
		allowed := abs + math.Abs(want[i])*rel
		d := math.Abs(got[i] - want[i])
		if math.IsNaN(got[i]) || d > allowed {
			if bad < 5 {
				t.Errorf("%s[%d] = %v, want %v (allowed error %.3g)", what, i, got[i], want[i], allowed)
			}
			bad++
		}
		worst = max(worst, d/allowed)
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements out of tolerance; worst error %.2f× the allowed", what, bad, len(got), worst)
	}
}

func TestSgemmTransposesAndLeadingDimensions(t *testing.T) {
	h, ctx := stubHandle(t)
	r := rand.New(rand.NewPCG(1, 2))
	const m, n, k = 5, 7, 3
	ops := []Operation{OpN, OpT, OpC}
	for _, ta := range ops {
		for _, tb := range ops {
			t.Run(fmt.Sprintf("%v_%v", ta, tb), func(t *testing.T) {
				ar, ac := stored(ta, m, k)
				br, bc := stored(tb, k, n)
				// Leading dimensions past the rows, all different, so
				// any mix-up of lda, ldb and ldc reads pad or faults.
				lda, ldb, ldc := ar+2, br+1, m+3
				a, b, c := matrix(r, ar, ac, lda), matrix(r, br, bc, ldb), matrix(r, m, n, ldc)
				const alpha, beta = 1.5, -0.5
				pa, pb, pc := upload(t, ctx, f32s(a)), upload(t, ctx, f32s(b)), upload(t, ctx, f32s(c))
				if err := h.Sgemm(ta, tb, m, n, k, alpha, pa, lda, pb, ldb, beta, pc, ldc); err != nil {
					t.Fatal(err)
				}
				want := append([]float64(nil), f64s(f32s(c))...)
				refGemm(ta, tb, m, n, k, alpha, f64s(f32s(a)), lda, f64s(f32s(b)), ldb, beta, want, ldc)
				got := f64s(download[float32](t, ctx, pc, len(c)))
				checkClose(t, "C", got, want, 1e-6, 1e-6)
				rec := lastGemm()
				if rec.call != "cublasSgemm_v2" || rec.transA != int32(ta) || rec.transB != int32(tb) ||
					rec.m != m || rec.n != n || rec.k != k || rec.lda != int32(lda) || rec.ldb != int32(ldb) || rec.ldc != int32(ldc) ||
					rec.alpha != alpha || rec.beta != beta {
					t.Errorf("the stub saw %+v", rec)
				}
			})
		}
	}
}

func f64s(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

func TestSgemmRowMajor(t *testing.T) {
	h, ctx := stubHandle(t)
	r := rand.New(rand.NewPCG(3, 4))
	const m, n, k = 4, 3, 6
	a := make([]float32, m*k) // row-major m×k
	b := make([]float32, k*n) // row-major k×n
	for i := range a {
		a[i] = float32(r.IntN(9) - 4)
	}
	for i := range b {
		b[i] = float32(r.IntN(9) - 4)
	}
	want := make([]float64, m*n)
	for i := range m {
		for j := range n {
			for p := range k {
				want[i*n+j] += float64(a[i*k+p]) * float64(b[p*n+j])
			}
		}
	}
	pa, pb, pc := upload(t, ctx, a), upload(t, ctx, b), upload(t, ctx, make([]float32, m*n))
	if err := h.SgemmRowMajor(m, n, k, 1, pa, pb, 0, pc); err != nil {
		t.Fatal(err)
	}
	checkClose(t, "C (row-major)", f64s(download[float32](t, ctx, pc, m*n)), want, 0, 0)
	// The trick is the documented call with the operands swapped.
	if rec := lastGemm(); rec.m != n || rec.n != m || rec.k != k || rec.lda != n || rec.ldb != k || rec.ldc != n {
		t.Errorf("SgemmRowMajor called %+v", rec)
	}
}

func TestSgemmBetaZeroDoesNotReadC(t *testing.T) {
	h, ctx := stubHandle(t)
	const m, n, k = 3, 2, 2
	nan := float32(math.NaN())
	a := []float32{1, 2, 3, 4, 5, 6}
	b := []float32{1, 0, 0, 1}
	pc := upload(t, ctx, []float32{nan, nan, nan, nan, nan, nan})
	if err := h.Sgemm(OpN, OpN, m, n, k, 2, upload(t, ctx, a), m, upload(t, ctx, b), k, 0, pc, m); err != nil {
		t.Fatal(err)
	}
	checkClose(t, "C", f64s(download[float32](t, ctx, pc, m*n)), []float64{2, 4, 6, 8, 10, 12}, 0, 0)
}

func TestGemmExTypes(t *testing.T) {
	h, ctx := stubHandle(t)
	r := rand.New(rand.NewPCG(5, 6))
	cases := []struct {
		ab, c   DataType
		compute ComputeType
		algo    GemmAlgo
		rel     float64 // rounding of the output type
	}{
		{Float16, Float32, Compute32F, GemmDefaultTensorOp, 1e-6},
		{BFloat16, Float32, Compute32F, GemmDefaultTensorOp, 1e-6},
		{Float16, Float16, Compute32F, GemmDefaultTensorOp, 1.0 / 1024},
		{BFloat16, BFloat16, Compute32F, GemmDefault, 1.0 / 128},
		{Float16, Float16, Compute16F, GemmDefaultTensorOp, 1.0 / 1024},
		{Float32, Float32, Compute32FFastTF32, GemmDefaultTensorOp, 1e-6},
	}
	// The values cuBLAS's headers give these enums; a wrong constant
	// makes cuBLAS compute something else or refuse.
	raw := map[DataType]int32{Float32: 0, Float16: 2, BFloat16: 14}
	rawCompute := map[ComputeType]int32{Compute32F: 68, Compute16F: 64, Compute32FFastTF32: 77}
	rawAlgo := map[GemmAlgo]int32{GemmDefault: -1, GemmDefaultTensorOp: 99}
	const m, n, k = 6, 5, 4
	for _, tc := range cases {
		for _, ops := range [][2]Operation{{OpN, OpN}, {OpT, OpN}, {OpN, OpT}} {
			name := fmt.Sprintf("%v_%v_%v_%v_%v", tc.ab, tc.c, tc.compute, ops[0], ops[1])
			t.Run(name, func(t *testing.T) {
				ar, ac := stored(ops[0], m, k)
				br, bc := stored(ops[1], k, n)
				lda, ldb, ldc := ar+1, br+2, m+1
				// Quarters in [-2, 2] are exact in every type here, so
				// the reference sees the same inputs as the library.
				quarters := func(rows, cols, ld int) []float64 {
					x := make([]float64, ld*cols)
					for i := range x {
						x[i] = float64(r.IntN(17)-8) / 4
					}
					return x
				}
				a, b, c := quarters(ar, ac, lda), quarters(br, bc, ldb), quarters(m, n, ldc)
				const alpha, beta = 0.5, 2
				pa, pb, pc := upload(t, ctx, encode(tc.ab, a)), upload(t, ctx, encode(tc.ab, b)), upload(t, ctx, encode(tc.c, c))
				err := h.GemmEx(ops[0], ops[1], m, n, k, alpha, pa, tc.ab, lda, pb, tc.ab, ldb, beta, pc, tc.c, ldc, tc.compute, tc.algo)
				if err != nil {
					t.Fatal(err)
				}
				want := append([]float64(nil), c...)
				refGemm(ops[0], ops[1], m, n, k, alpha, a, lda, b, ldb, beta, want, ldc)
				got := decode(tc.c, downloadBytes(t, ctx, pc, len(c)*tc.c.Size()))
				checkClose(t, "C", got, want, 1e-6, tc.rel)
				rec := lastGemm()
				if rec.call != "cublasGemmEx" || rec.aType != raw[tc.ab] || rec.bType != raw[tc.ab] || rec.cType != raw[tc.c] ||
					rec.compute != rawCompute[tc.compute] || rec.algo != rawAlgo[tc.algo] ||
					rec.transA != int32(ops[0]) || rec.transB != int32(ops[1]) || rec.lda != int32(lda) || rec.ldb != int32(ldb) || rec.ldc != int32(ldc) {
					t.Errorf("the stub saw %+v", rec)
				}
				// alpha and beta reach cuBLAS in the compute type's scalar type.
				if rec.alpha != alpha || rec.beta != beta {
					t.Errorf("alpha, beta = %v, %v as the stub read them; want %v, %v", rec.alpha, rec.beta, alpha, beta)
				}
			})
		}
	}
}

func TestGemmExRejectsUnsupportedTypes(t *testing.T) {
	h, ctx := stubHandle(t)
	p := upload(t, ctx, make([]float32, 16))
	err := h.GemmEx(OpN, OpN, 2, 2, 2, 1, p, Float16, 2, p, BFloat16, 2, 0, p, Float32, 2, Compute32F, GemmDefault)
	if !errors.Is(err, StatusNotSupported) || !strings.Contains(err.Error(), "cublasGemmEx") {
		t.Errorf("f16×bf16: %v, want CUBLAS_STATUS_NOT_SUPPORTED from cublasGemmEx", err)
	}
}

// encode converts values to the bytes of a DataType.
func encode(dt DataType, x []float64) []byte {
	out := make([]byte, 0, len(x)*dt.Size())
	for _, v := range x {
		switch dt {
		case Float16:
			h := gpu.ToHalf(float32(v))
			out = append(out, byte(h), byte(h>>8))
		case BFloat16:
			b := gpu.ToBFloat16(float32(v))
			out = append(out, byte(b), byte(b>>8))
		default:
			u := math.Float32bits(float32(v))
			out = append(out, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
		}
	}
	return out
}

func decode(dt DataType, b []byte) []float64 {
	out := make([]float64, len(b)/dt.Size())
	for i := range out {
		switch dt {
		case Float16:
			out[i] = float64(gpu.Half(uint16(b[2*i]) | uint16(b[2*i+1])<<8).Float32())
		case BFloat16:
			out[i] = float64(gpu.BFloat16(uint16(b[2*i]) | uint16(b[2*i+1])<<8).Float32())
		default:
			out[i] = float64(math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24))
		}
	}
	return out
}

func downloadBytes(t *testing.T, ctx cuda.Context, p cuda.DevicePtr, n int) []byte {
	return download[byte](t, ctx, p, n)
}

func TestInvalidLeadingDimensionIsAnErrorNamingTheCall(t *testing.T) {
	h, ctx := stubHandle(t)
	p := upload(t, ctx, make([]float32, 64))
	err := h.Sgemm(OpN, OpN, 4, 4, 4, 1, p, 3, p, 4, 0, p, 4) // lda < m
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("lda < m: %v, want *Error", err)
	}
	if e.Call != "cublasSgemm_v2" || e.Status != StatusInvalidValue || e.Name != "CUBLAS_STATUS_INVALID_VALUE" {
		t.Errorf("error %+v", e)
	}
	// The text is the library's own (cublasGetStatusString).
	if e.Text != "stub: invalid value" || !errors.Is(err, StatusInvalidValue) {
		t.Errorf("text %q, errors.Is %v", e.Text, errors.Is(err, StatusInvalidValue))
	}
	if got := err.Error(); got != "cublas: cublasSgemm_v2: CUBLAS_STATUS_INVALID_VALUE (7): stub: invalid value" {
		t.Errorf("message %q", got)
	}
}

func TestArgumentsThatDoNotFitACInt(t *testing.T) {
	h, _ := stubHandle(t)
	err := h.Sgemm(OpN, OpN, 1<<31, 1, 1, 1, 0, 1<<31, 0, 1, 0, 0, 1<<31)
	if !errors.Is(err, StatusInvalidValue) || !strings.Contains(err.Error(), "m = 2147483648") {
		t.Errorf("m = 2^31: %v", err)
	}
	if n := stub.calls("cublasSgemm_v2"); n != 0 {
		t.Errorf("the call reached cuBLAS %d times", n)
	}
}

func TestSetStreamAndMathMode(t *testing.T) {
	h, ctx := stubHandle(t)
	var s cuda.Stream
	if err := ctx.Do(func() (err error) { s, err = cuda.StreamCreate(cuda.StreamNonBlocking); return }); err != nil {
		t.Fatal(err)
	}
	defer ctx.Do(s.Destroy)
	if err := h.SetStream(s); err != nil {
		t.Fatal(err)
	}
	if err := h.SetMathMode(TF32TensorOpMath); err != nil {
		t.Fatal(err)
	}
	p := upload(t, ctx, make([]float32, 4))
	if err := h.Sgemm(OpN, OpN, 2, 2, 1, 1, p, 2, p, 1, 0, p, 2); err != nil {
		t.Fatal(err)
	}
	if rec := lastGemm(); rec.stream != s || rec.mathMode != 3 || h.Stream() != s {
		t.Errorf("GEMM ran on stream %#x with math mode %d; want %#x, 3", rec.stream, rec.mathMode, s)
	}
	if v, err := h.Version(); err != nil || v != 120405 {
		t.Errorf("Version = %d, %v", v, err)
	}
}

func TestCallsNeedTheHandlesContext(t *testing.T) {
	h, _ := stubHandle(t)
	// Called directly, without Do, on a thread with no current context,
	// the stub answers like cuBLAS without a context.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	prev, err := cuda.CtxGetCurrent()
	if err != nil {
		t.Fatal(err)
	}
	if err := cuda.CtxSetCurrent(0); err != nil {
		t.Fatal(err)
	}
	defer cuda.CtxSetCurrent(prev)
	l := h.lib
	if err := l.call(&l.cublasSetStream, h.h, 0); !errors.Is(err, StatusNotInitialized) {
		t.Errorf("without a current context: %v, want CUBLAS_STATUS_NOT_INITIALIZED", err)
	}
	// Through the Handle, Do makes the context current.
	if err := h.SetStream(0); err != nil {
		t.Errorf("through the Handle: %v", err)
	}
}

func TestHandlesFromManyGoroutines(t *testing.T) {
	needStubs(t)
	ctx, err := cuda.PrimaryCtxRetain(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Release()
	a := upload(t, ctx, []float32{1, 2, 3, 4})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			h, err := Create(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer h.Destroy()
			var out cuda.DevicePtr
			err = ctx.Do(func() (err error) { out, err = cuda.MemAlloc(16); return })
			if err != nil {
				errs <- err
				return
			}
			defer ctx.Do(func() error { return cuda.MemFree(out) })
			for range 20 {
				runtime.Gosched()
				if err := h.Sgemm(OpN, OpN, 2, 2, 2, float32(g), a, 2, a, 2, 0, out, 2); err != nil {
					errs <- err
					return
				}
			}
			got := make([]float32, 4)
			if err := ctx.Do(func() error { return cuda.CopyDtoH(got, out) }); err != nil {
				errs <- err
				return
			}
			// [1 3; 2 4]² = [7 15; 10 22], column-major [7 10 15 22].
			if want := []float32{7, 10, 15, 22}; got[3] != float32(g)*want[3] || got[0] != float32(g)*want[0] {
				errs <- fmt.Errorf("goroutine %d: %v", g, got)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestCreateFailureAndDestroy(t *testing.T) {
	needStubs(t)
	ctx, err := cuda.PrimaryCtxRetain(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Release()
	before := stub.live()
	stub.failNext("cublasCreate_v2", int32(StatusAllocFailed))
	if _, err := Create(ctx); !errors.Is(err, StatusAllocFailed) || !strings.Contains(err.Error(), "cublasCreate_v2") {
		t.Errorf("Create with ALLOC_FAILED injected: %v", err)
	}
	h, err := Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stub.live() != before+1 {
		t.Errorf("live handles %d, want %d", stub.live(), before+1)
	}
	if err := h.Destroy(); err != nil {
		t.Fatal(err)
	}
	if stub.live() != before {
		t.Errorf("Destroy left %d live handles, want %d", stub.live(), before)
	}
	if err := h.Destroy(); err == nil || !strings.Contains(err.Error(), "destroyed") {
		t.Errorf("second Destroy: %v", err)
	}
	if err := h.Sgemm(OpN, OpN, 1, 1, 1, 1, 0, 1, 0, 1, 0, 0, 1); !errors.Is(err, StatusNotInitialized) {
		t.Errorf("Sgemm on a destroyed handle: %v", err)
	}
}
