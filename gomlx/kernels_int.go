package gomlx

// Integer and boolean compute kernels. Integer bodies are generic over an
// icodec (int32, int64), which widens to int64 and narrows back, with a
// one-line kernel per dtype; the op codes are those of kernels_float.go.
//
//	unaryI    out[i] = f(x[i]): opNeg, opAbs, opSign, opNot (bitwise)
//	binaryI   out[i] = a[i·sa] ∘ b[i·sb]: add, sub, mul, div, max, min,
//	          rem, and, or, xor. Division by zero gives -1 and remainder
//	          by zero gives x, as XLA defines them (Go would panic).
//	compareI  out[i] = a[i·sa] ⋚ b[i·sb] (bool)
//	reduceI   out[r] = ⊕ row r (sum, prod, max, min), int64 accumulator
//	iotaI     out[i] = (i / stride) mod dim
//	logical   out[i] = a[i·sa] and/or/xor b[i·sb]; notB; reduceB
//
// Block: 256 threads, one output element per thread.

import "github.com/gokern/kern/gpu"

type icodec[T any] interface {
	load(T) int64
	store(int64) T
}

type i32c struct{}

func (i32c) load(x int32) int64  { return int64(x) }
func (i32c) store(v int64) int32 { return int32(v) }

type i64c struct{}

func (i64c) load(x int64) int64  { return x }
func (i64c) store(v int64) int64 { return v }

func unaryInt(op int, x int64) int64 {
	switch op {
	case opNeg:
		return -x
	case opAbs:
		if x < 0 {
			return -x
		}
		return x
	case opSign:
		if x > 0 {
			return 1
		}
		if x < 0 {
			return -1
		}
		return 0
	case opNot:
		return ^x
	}
	return x
}

func binaryInt(op int, x, y int64) int64 {
	switch op {
	case opAdd:
		return x + y
	case opSub:
		return x - y
	case opMul:
		return x * y
	case opDiv:
		if y == 0 {
			return -1
		}
		return x / y
	case opMax:
		if x > y {
			return x
		}
		return y
	case opMin:
		if x < y {
			return x
		}
		return y
	case opRem:
		if y == 0 {
			return x
		}
		return x % y
	case opAnd:
		return x & y
	case opOr:
		return x | y
	case opXor:
		return x ^ y
	}
	return x
}

func compareInt(op int, x, y int64) bool {
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

func unaryI[T any, C icodec[T]](c C, t gpu.Thread, out, x []T, op int) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = c.store(unaryInt(op, c.load(x[i])))
	}
}

//kern:kernel block=256
func unaryI32(t gpu.Thread, out, x []int32, op int) { unaryI(i32c{}, t, out, x, op) }

//kern:kernel block=256
func unaryI64(t gpu.Thread, out, x []int64, op int) { unaryI(i64c{}, t, out, x, op) }

func binaryI[T any, C icodec[T]](c C, t gpu.Thread, out, a, b []T, op, sa, sb int) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = c.store(binaryInt(op, c.load(a[i*sa]), c.load(b[i*sb])))
	}
}

//kern:kernel block=256
func binaryI32(t gpu.Thread, out, a, b []int32, op, sa, sb int) {
	binaryI(i32c{}, t, out, a, b, op, sa, sb)
}

//kern:kernel block=256
func binaryI64(t gpu.Thread, out, a, b []int64, op, sa, sb int) {
	binaryI(i64c{}, t, out, a, b, op, sa, sb)
}

func compareI[T any, C icodec[T]](c C, t gpu.Thread, out []bool, a, b []T, op, sa, sb int) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = compareInt(op, c.load(a[i*sa]), c.load(b[i*sb]))
	}
}

//kern:kernel block=256
func compareI32(t gpu.Thread, out []bool, a, b []int32, op, sa, sb int) {
	compareI(i32c{}, t, out, a, b, op, sa, sb)
}

//kern:kernel block=256
func compareI64(t gpu.Thread, out []bool, a, b []int64, op, sa, sb int) {
	compareI(i64c{}, t, out, a, b, op, sa, sb)
}

func reduceI[T any, C icodec[T]](c C, t gpu.Thread, out, x []T, cols, op int) {
	r := t.GlobalX()
	if r >= len(out) {
		return
	}
	acc := c.load(x[r*cols])
	for j := 1; j < cols; j++ {
		v := c.load(x[r*cols+j])
		switch op {
		case redSum:
			acc += v
		case redProd:
			acc *= v
		case redMax:
			acc = binaryInt(opMax, acc, v)
		default:
			acc = binaryInt(opMin, acc, v)
		}
	}
	out[r] = c.store(acc)
}

//kern:kernel block=256
func reduceI32(t gpu.Thread, out, x []int32, cols, op int) { reduceI(i32c{}, t, out, x, cols, op) }

//kern:kernel block=256
func reduceI64(t gpu.Thread, out, x []int64, cols, op int) { reduceI(i64c{}, t, out, x, cols, op) }

func iotaI[T any, C icodec[T]](c C, t gpu.Thread, out []T, dim, stride int) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = c.store(int64((i / stride) % dim))
	}
}

//kern:kernel block=256
func iotaI32(t gpu.Thread, out []int32, dim, stride int) { iotaI(i32c{}, t, out, dim, stride) }

//kern:kernel block=256
func iotaI64(t gpu.Thread, out []int64, dim, stride int) { iotaI(i64c{}, t, out, dim, stride) }

//kern:kernel block=256
func logical(t gpu.Thread, out, a, b []bool, op, sa, sb int) {
	if i := t.GlobalX(); i < len(out) {
		x, y := a[i*sa], b[i*sb]
		switch op {
		case opAnd:
			out[i] = x && y
		case opOr:
			out[i] = x || y
		default:
			out[i] = x != y
		}
	}
}

//kern:kernel block=256
func notB(t gpu.Thread, out, x []bool) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = !x[i]
	}
}

//kern:kernel block=256
func reduceB(t gpu.Thread, out, x []bool, cols, op int) {
	r := t.GlobalX()
	if r >= len(out) {
		return
	}
	acc := x[r*cols]
	for j := 1; j < cols; j++ {
		v := x[r*cols+j]
		switch op {
		case redAnd:
			acc = acc && v
		case redOr:
			acc = acc || v
		default:
			acc = acc != v
		}
	}
	out[r] = acc
}
