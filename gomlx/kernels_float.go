package gomlx

// Floating-point compute kernels, one body per job generic over a codec
// (float32, float16, bfloat16: load widens to float32 exactly, store
// rounds to nearest even), with a one-line kernel per dtype.
//
//	unary    out[i] = f(x[i]), f chosen by op (opNeg … opSign)
//	isPred   out[i] = IsFinite(x[i]) or IsNaN(x[i]) (bool)
//	binary   out[i] = a[i·sa] ∘ b[i·sb], ∘ chosen by op; sa, sb ∈ {0, 1}
//	compare  out[i] = a[i·sa] ⋚ b[i·sb] (bool)
//	reduce   out[r] = ⊕ x[r·cols : (r+1)·cols], x as [rows, cols]
//	         row-major; one thread per row, float32 accumulator
//	argRows  out[r] = the first index of the largest (smallest) element of
//	         row r, int32
//	matmul   out[b, i, j] = Σ_p a[b, i, p]·b[b, p, j], a [B, M, K],
//	         b [B, K, N], out [B, M, N] row-major; one thread per output,
//	         float32 accumulator (v1: no tiling; the backend favours
//	         correctness first, kern's ops.Matmul can replace it where the
//	         shapes allow)
//	iota     out[i] = (i / stride) mod dim
//
// Block: 256 threads, one output element per thread.

import (
	"math"

	"github.com/gokern/kern/gpu"
)

// The op codes, shared by the kernels and the builder.
const (
	opNeg = iota
	opAbs
	opExp
	opLog
	opSqrt
	opRsqrt
	opTanh
	opLogistic
	opSin
	opCos
	opErf
	opFloor
	opCeil
	opRound
	opSign
	opNot // int: bitwise not; bool: logical not
)

const (
	opAdd = iota
	opSub
	opMul
	opDiv
	opMax
	opMin
	opPow
	opRem
	opAnd // int bitwise, bool logical
	opOr
	opXor
)

const (
	cmpEq = iota
	cmpNe
	cmpLt
	cmpLe
	cmpGt
	cmpGe
)

const (
	redSum = iota
	redProd
	redMax
	redMin
	// Bool reductions.
	redAnd
	redOr
	redXor
)

// codec converts an element type to float32 and back.
type codec[T any] interface {
	load(T) float32
	store(float32) T
}

type f32c struct{}

func (f32c) load(x float32) float32  { return x }
func (f32c) store(v float32) float32 { return v }

type f16c struct{}

func (f16c) load(x gpu.Half) float32  { return x.Float32() }
func (f16c) store(v float32) gpu.Half { return gpu.ToHalf(v) }

type bf16c struct{}

func (bf16c) load(x gpu.BFloat16) float32  { return x.Float32() }
func (bf16c) store(v float32) gpu.BFloat16 { return gpu.ToBFloat16(v) }

func unaryF(op int, x float32) float32 {
	switch op {
	case opNeg:
		return -x
	case opAbs:
		return gpu.Abs(x)
	case opExp:
		return gpu.Exp(x)
	case opLog:
		return gpu.Log(x)
	case opSqrt:
		return gpu.Sqrt(x)
	case opRsqrt:
		return gpu.Rsqrt(x)
	case opTanh:
		return gpu.Tanh(x)
	case opLogistic:
		return 1 / (1 + gpu.Exp(-x))
	case opSin:
		return gpu.Sin(x)
	case opCos:
		return gpu.Cos(x)
	case opErf:
		return gpu.Erf(x)
	case opFloor:
		return gpu.Floor(x)
	case opCeil:
		return gpu.Ceil(x)
	case opRound:
		return roundEven(x)
	case opSign:
		if x > 0 {
			return 1
		}
		if x < 0 {
			return -1
		}
		return x // ±0 and NaN keep themselves
	}
	return x
}

// roundEven rounds half-way cases to the even neighbour (math.RoundToEven).
func roundEven(x float32) float32 {
	f := gpu.Floor(x)
	d := x - f
	if d > 0.5 {
		return f + 1
	}
	if d < 0.5 {
		return f
	}
	if gpu.Floor(f/2)*2 == f {
		return f
	}
	return f + 1
}

func binaryF(op int, x, y float32) float32 {
	switch op {
	case opAdd:
		return x + y
	case opSub:
		return x - y
	case opMul:
		return x * y
	case opDiv:
		return x / y
	case opMax:
		if x != x || x > y {
			return x
		}
		return y
	case opMin:
		if x != x || x < y {
			return x
		}
		return y
	case opPow:
		return powF(x, y)
	case opRem:
		x64, y64 := float64(x), float64(y)
		return float32(x64 - math.Trunc(x64/y64)*y64)
	}
	return x
}

// powF is x**y through exp2(y·log2|x|), with Go's math.Pow signs for a
// negative base (an odd integer y negates, a non-integer y gives NaN).
func powF(x, y float32) float32 {
	if y == 0 {
		return 1
	}
	ax := gpu.Abs(x)
	r := gpu.Exp2(y * gpu.Log2(ax))
	if x < 0 {
		if gpu.Floor(y) != y {
			return math.Float32frombits(0x7fc00000) // NaN
		}
		if gpu.Floor(y/2)*2 != y {
			return -r
		}
	}
	return r
}

func compareF(op int, x, y float32) bool {
	switch op {
	case cmpEq:
		return x == y
	case cmpNe:
		return x != y
	case cmpLt:
		return x < y
	case cmpLe:
		return x <= y
	case cmpGt:
		return x > y
	}
	return x >= y
}

func unary[T any, C codec[T]](c C, t gpu.Thread, out, x []T, op int) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = c.store(unaryF(op, c.load(x[i])))
	}
}

//kern:kernel block=256
func unaryF32(t gpu.Thread, out, x []float32, op int) { unary(f32c{}, t, out, x, op) }

//kern:kernel block=256
func unaryF16(t gpu.Thread, out, x []gpu.Half, op int) { unary(f16c{}, t, out, x, op) }

//kern:kernel block=256
func unaryBF16(t gpu.Thread, out, x []gpu.BFloat16, op int) { unary(bf16c{}, t, out, x, op) }

// isPred: op 0 is IsFinite, 1 is IsNaN.
func isPred[T any, C codec[T]](c C, t gpu.Thread, out []bool, x []T, op int) {
	if i := t.GlobalX(); i < len(out) {
		v := c.load(x[i])
		if op == 0 {
			out[i] = v-v == 0 // Inf-Inf and NaN are NaN
		} else {
			out[i] = v != v
		}
	}
}

//kern:kernel block=256
func isPredF32(t gpu.Thread, out []bool, x []float32, op int) { isPred(f32c{}, t, out, x, op) }

//kern:kernel block=256
func isPredF16(t gpu.Thread, out []bool, x []gpu.Half, op int) { isPred(f16c{}, t, out, x, op) }

//kern:kernel block=256
func isPredBF16(t gpu.Thread, out []bool, x []gpu.BFloat16, op int) { isPred(bf16c{}, t, out, x, op) }

func binary[T any, C codec[T]](c C, t gpu.Thread, out, a, b []T, op, sa, sb int) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = c.store(binaryF(op, c.load(a[i*sa]), c.load(b[i*sb])))
	}
}

//kern:kernel block=256
func binaryF32(t gpu.Thread, out, a, b []float32, op, sa, sb int) {
	binary(f32c{}, t, out, a, b, op, sa, sb)
}

//kern:kernel block=256
func binaryF16(t gpu.Thread, out, a, b []gpu.Half, op, sa, sb int) {
	binary(f16c{}, t, out, a, b, op, sa, sb)
}

//kern:kernel block=256
func binaryBF16(t gpu.Thread, out, a, b []gpu.BFloat16, op, sa, sb int) {
	binary(bf16c{}, t, out, a, b, op, sa, sb)
}

func compare[T any, C codec[T]](c C, t gpu.Thread, out []bool, a, b []T, op, sa, sb int) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = compareF(op, c.load(a[i*sa]), c.load(b[i*sb]))
	}
}

//kern:kernel block=256
func compareF32(t gpu.Thread, out []bool, a, b []float32, op, sa, sb int) {
	compare(f32c{}, t, out, a, b, op, sa, sb)
}

//kern:kernel block=256
func compareF16(t gpu.Thread, out []bool, a, b []gpu.Half, op, sa, sb int) {
	compare(f16c{}, t, out, a, b, op, sa, sb)
}

//kern:kernel block=256
func compareBF16(t gpu.Thread, out []bool, a, b []gpu.BFloat16, op, sa, sb int) {
	compare(bf16c{}, t, out, a, b, op, sa, sb)
}

func reduce[T any, C codec[T]](c C, t gpu.Thread, out, x []T, cols, op int) {
	r := t.GlobalX()
	if r >= len(out) {
		return
	}
	var acc float32
	switch op {
	case redProd:
		acc = 1
	case redMax:
		acc = math.Float32frombits(0xff800000) // -Inf
	case redMin:
		acc = math.Float32frombits(0x7f800000) // +Inf
	}
	for j := 0; j < cols; j++ {
		v := c.load(x[r*cols+j])
		switch op {
		case redSum:
			acc += v
		case redProd:
			acc *= v
		case redMax:
			acc = binaryF(opMax, v, acc)
		default:
			acc = binaryF(opMin, v, acc)
		}
	}
	out[r] = c.store(acc)
}

//kern:kernel block=256
func reduceF32(t gpu.Thread, out, x []float32, cols, op int) { reduce(f32c{}, t, out, x, cols, op) }

//kern:kernel block=256
func reduceF16(t gpu.Thread, out, x []gpu.Half, cols, op int) { reduce(f16c{}, t, out, x, cols, op) }

//kern:kernel block=256
func reduceBF16(t gpu.Thread, out, x []gpu.BFloat16, cols, op int) {
	reduce(bf16c{}, t, out, x, cols, op)
}

// argRows: isMin 0 finds the largest, 1 the smallest; a NaN wins, as in
// GoMLX (the first NaN of the row).
func argRows[T any, C codec[T]](c C, t gpu.Thread, out []int32, x []T, cols, isMin int) {
	r := t.GlobalX()
	if r >= len(out) {
		return
	}
	best := c.load(x[r*cols])
	k := 0
	for j := 1; j < cols; j++ {
		v := c.load(x[r*cols+j])
		if best != best {
			break
		}
		if v != v || (isMin == 0 && v > best) || (isMin != 0 && v < best) {
			best, k = v, j
		}
	}
	out[r] = int32(k)
}

//kern:kernel block=256
func argRowsF32(t gpu.Thread, out []int32, x []float32, cols, isMin int) {
	argRows(f32c{}, t, out, x, cols, isMin)
}

//kern:kernel block=256
func argRowsF16(t gpu.Thread, out []int32, x []gpu.Half, cols, isMin int) {
	argRows(f16c{}, t, out, x, cols, isMin)
}

//kern:kernel block=256
func argRowsBF16(t gpu.Thread, out []int32, x []gpu.BFloat16, cols, isMin int) {
	argRows(bf16c{}, t, out, x, cols, isMin)
}

func matmul[T any, C codec[T]](c C, t gpu.Thread, out, a, b []T, m, k, n int) {
	i := t.GlobalX()
	if i >= len(out) {
		return
	}
	bi, r, col := i/(m*n), (i/n)%m, i%n
	var acc float32
	for p := 0; p < k; p++ {
		acc += c.load(a[(bi*m+r)*k+p]) * c.load(b[(bi*k+p)*n+col])
	}
	out[i] = c.store(acc)
}

//kern:kernel block=256
func matmulF32(t gpu.Thread, out, a, b []float32, m, k, n int) { matmul(f32c{}, t, out, a, b, m, k, n) }

//kern:kernel block=256
func matmulF16(t gpu.Thread, out, a, b []gpu.Half, m, k, n int) {
	matmul(f16c{}, t, out, a, b, m, k, n)
}

//kern:kernel block=256
func matmulBF16(t gpu.Thread, out, a, b []gpu.BFloat16, m, k, n int) {
	matmul(bf16c{}, t, out, a, b, m, k, n)
}

func iotaFill[T any, C codec[T]](c C, t gpu.Thread, out []T, dim, stride int) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = c.store(float32((i / stride) % dim))
	}
}

//kern:kernel block=256
func iotaF32(t gpu.Thread, out []float32, dim, stride int) { iotaFill(f32c{}, t, out, dim, stride) }

//kern:kernel block=256
func iotaF16(t gpu.Thread, out []gpu.Half, dim, stride int) { iotaFill(f16c{}, t, out, dim, stride) }

//kern:kernel block=256
func iotaBF16(t gpu.Thread, out []gpu.BFloat16, dim, stride int) {
	iotaFill(bf16c{}, t, out, dim, stride)
}
