package ops

// Element-wise arithmetic and conversions:
//
//	Add:   out = a + b
//	Mul:   out = a·b
//	Scale: out = s·x (s a float32 scalar)
//	Cast:  out = x converted from one Float type to another
//
// Shapes: every buffer [n], any layout. For 16-bit types each operand is
// widened to float32 exactly, the operation is one float32 rounding, and
// the result is rounded once more to T — the same as computing in the
// wider type and converting, which is what PyTorch does for half and
// bfloat16 tensors. Cast rounds to nearest even (float32 → float16
// overflows to ±Inf, NaN stays NaN); float16 ↔ bfloat16 goes through
// float32, which holds both exactly, so it is rounded once.
//
// Block: one element per thread, 256 per block (see activation.go).
//
// Versions: v1 only.

import (
	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// ---------------------------------------------------------------------------
// kernels

//kern:kernel block=256
func addF32(t gpu.Thread, out, a, b []float32) { add(f32c{}, t, out, a, b) }

//kern:kernel block=256
func addF16(t gpu.Thread, out, a, b []gpu.Half) { add(f16c{}, t, out, a, b) }

//kern:kernel block=256
func addBF16(t gpu.Thread, out, a, b []gpu.BFloat16) { add(bf16c{}, t, out, a, b) }

func add[T any, C codec[T]](c C, t gpu.Thread, out, a, b []T) {
	x, y := loadN(c, t, a, len(out)), loadN(c, t, b, len(out))
	//kern:unroll
	for k := range perThread {
		x[k] += y[k]
	}
	storeN(c, t, out, x)
}

//kern:kernel block=256
func mulF32(t gpu.Thread, out, a, b []float32) { mul(f32c{}, t, out, a, b) }

//kern:kernel block=256
func mulF16(t gpu.Thread, out, a, b []gpu.Half) { mul(f16c{}, t, out, a, b) }

//kern:kernel block=256
func mulBF16(t gpu.Thread, out, a, b []gpu.BFloat16) { mul(bf16c{}, t, out, a, b) }

func mul[T any, C codec[T]](c C, t gpu.Thread, out, a, b []T) {
	x, y := loadN(c, t, a, len(out)), loadN(c, t, b, len(out))
	//kern:unroll
	for k := range perThread {
		x[k] *= y[k]
	}
	storeN(c, t, out, x)
}

//kern:kernel block=256
func scaleF32(t gpu.Thread, out, x []float32, s float32) { scale(f32c{}, t, out, x, s) }

//kern:kernel block=256
func scaleF16(t gpu.Thread, out, x []gpu.Half, s float32) { scale(f16c{}, t, out, x, s) }

//kern:kernel block=256
func scaleBF16(t gpu.Thread, out, x []gpu.BFloat16, s float32) { scale(bf16c{}, t, out, x, s) }

func scale[T any, C codec[T]](c C, t gpu.Thread, out, x []T, s float32) {
	v := loadN(c, t, x, len(out))
	//kern:unroll
	for k := range perThread {
		v[k] = s * v[k]
	}
	storeN(c, t, out, v)
}

// Casts, named cast<From><To>.

//kern:kernel block=256
func castF32F16(t gpu.Thread, out []gpu.Half, x []float32) { cast(f32c{}, f16c{}, t, out, x) }

//kern:kernel block=256
func castF32BF16(t gpu.Thread, out []gpu.BFloat16, x []float32) { cast(f32c{}, bf16c{}, t, out, x) }

//kern:kernel block=256
func castF16F32(t gpu.Thread, out []float32, x []gpu.Half) { cast(f16c{}, f32c{}, t, out, x) }

//kern:kernel block=256
func castF16BF16(t gpu.Thread, out []gpu.BFloat16, x []gpu.Half) { cast(f16c{}, bf16c{}, t, out, x) }

//kern:kernel block=256
func castBF16F32(t gpu.Thread, out []float32, x []gpu.BFloat16) { cast(bf16c{}, f32c{}, t, out, x) }

//kern:kernel block=256
func castBF16F16(t gpu.Thread, out []gpu.Half, x []gpu.BFloat16) { cast(bf16c{}, f16c{}, t, out, x) }

func cast[A, B any, CA codec[A], CB codec[B]](ca CA, cb CB, t gpu.Thread, out []B, x []A) {
	storeN(cb, t, out, loadN(ca, t, x, len(out)))
}

// loadN reads the perThread elements of x the thread moves (see
// perThread) that are below n, all loads issued before any is used; the
// others are 0.
func loadN[T any, C codec[T]](c C, t gpu.Thread, x []T, n int) [perThread]float32 {
	i, s := t.GlobalX(), t.GridDim().X*t.BlockDim().X
	var v [perThread]float32
	//kern:unroll
	for k := 0; k < perThread; k++ {
		if j := i + k*s; j < n {
			v[k] = c.load(x[j])
		}
	}
	return v
}

// storeN writes the thread's perThread elements of out, as loadN reads
// them.
func storeN[T any, C codec[T]](c C, t gpu.Thread, out []T, v [perThread]float32) {
	i, s := t.GlobalX(), t.GridDim().X*t.BlockDim().X
	//kern:unroll
	for k := 0; k < perThread; k++ {
		if j := i + k*s; j < len(out) {
			out[j] = c.store(v[k])
		}
	}
}

// ---------------------------------------------------------------------------
// Go API

var (
	addK   = kset{addF32Kernel.Kernel(), addF16Kernel.Kernel(), addBF16Kernel.Kernel()}
	mulK   = kset{mulF32Kernel.Kernel(), mulF16Kernel.Kernel(), mulBF16Kernel.Kernel()}
	scaleK = kset{scaleF32Kernel.Kernel(), scaleF16Kernel.Kernel(), scaleBF16Kernel.Kernel()}
	// castK[from][to], indexed by dtypeIndex; the diagonal is nil.
	castK = [3][3]*kern.Kernel{
		{nil, castF32F16Kernel.Kernel(), castF32BF16Kernel.Kernel()},
		{castF16F32Kernel.Kernel(), nil, castF16BF16Kernel.Kernel()},
		{castBF16F32Kernel.Kernel(), castBF16F16Kernel.Kernel(), nil},
	}
)

// Add writes out = a + b; all buffers hold n elements.
func Add[T Float](q kern.Queue, out, a, b *kern.Buffer[T], n int) error {
	return binary(newShape("ops.Add"), pick[T](addK), q, out, a, b, n)
}

// Mul writes out = a·b (element-wise); all buffers hold n elements.
func Mul[T Float](q kern.Queue, out, a, b *kern.Buffer[T], n int) error {
	return binary(newShape("ops.Mul"), pick[T](mulK), q, out, a, b, n)
}

// Scale writes out = s·x; x and out hold n elements.
func Scale[T Float](q kern.Queue, out, x *kern.Buffer[T], s float32, n int) error {
	sh := newShape("ops.Scale")
	sh.atLeast("n", n, 0)
	buf(sh, "x", x, n, "n")
	buf(sh, "out", out, n, "n")
	return elementwise4(sh, pick[T](scaleK), q, n, bufArg(out), bufArg(x), f32Arg(s))
}

// Cast converts the n elements of x to out's element type, rounding to
// nearest even. From and To must differ.
func Cast[From, To Float](q kern.Queue, out *kern.Buffer[To], x *kern.Buffer[From], n int) error {
	s := newShape("ops.Cast")
	k := castK[dtypeIndex[From]()][dtypeIndex[To]()]
	if k == nil {
		s.fail("from %s to %s: the types are the same; copy the buffer instead", dtypeName[From](), dtypeName[To]())
	}
	return unary(s, k, q, out, x, n)
}

func binary[T Float](s *shape, k *kern.Kernel, q kern.Queue, out, x, y *kern.Buffer[T], n int) error {
	s.atLeast("n", n, 0)
	buf(s, "a", x, n, "n")
	buf(s, "b", y, n, "n")
	buf(s, "out", out, n, "n")
	return elementwise4(s, k, q, n, bufArg(out), bufArg(x), bufArg(y))
}
