package gomlx

// float64 kernels: the float families of kernels_float.go computed in
// float64 throughout (the codecs there widen to float32, which would
// throw float64's precision away), plus float64's data movement,
// scatter and conversions. Same op codes, same layouts, 256 threads.

import (
	"math"

	"github.com/gokern/kern/gpu"
)

func unary64(op int, x float64) float64 {
	switch op {
	case opNeg:
		return -x
	case opAbs:
		return math.Abs(x)
	case opExp:
		return gpu.Exp(x)
	case opLog:
		return gpu.Log(x)
	case opSqrt:
		return math.Sqrt(x)
	case opRsqrt:
		return 1 / math.Sqrt(x)
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
		return math.Floor(x)
	case opCeil:
		return math.Ceil(x)
	case opRound:
		f := math.Floor(x)
		d := x - f
		if d > 0.5 || (d == 0.5 && math.Floor(f/2)*2 != f) {
			return f + 1
		}
		return f
	case opSign:
		if x > 0 {
			return 1
		}
		if x < 0 {
			return -1
		}
		return x
	}
	return x
}

func binary64(op int, x, y float64) float64 {
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
		if y == 0 {
			return 1
		}
		r := gpu.Exp2(y * gpu.Log2(math.Abs(x)))
		if x < 0 {
			if math.Floor(y) != y {
				return math.Float64frombits(0x7ff8000000000001) // NaN
			}
			if math.Floor(y/2)*2 != y {
				return -r
			}
		}
		return r
	case opRem:
		return x - math.Trunc(x/y)*y
	}
	return x
}

func compare64(op int, x, y float64) bool {
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

//kern:kernel block=256
func unaryF64(t gpu.Thread, out, x []float64, op int) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = unary64(op, x[i])
	}
}

//kern:kernel block=256
func isPredF64(t gpu.Thread, out []bool, x []float64, op int) {
	if i := t.GlobalX(); i < len(out) {
		v := x[i]
		if op == 0 {
			out[i] = v-v == 0
		} else {
			out[i] = v != v
		}
	}
}

//kern:kernel block=256
func binaryF64(t gpu.Thread, out, a, b []float64, op, sa, sb int) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = binary64(op, a[i*sa], b[i*sb])
	}
}

//kern:kernel block=256
func compareF64(t gpu.Thread, out []bool, a, b []float64, op, sa, sb int) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = compare64(op, a[i*sa], b[i*sb])
	}
}

//kern:kernel block=256
func reduceF64(t gpu.Thread, out, x []float64, cols, op int) {
	r := t.GlobalX()
	if r >= len(out) {
		return
	}
	acc := x[r*cols]
	for j := 1; j < cols; j++ {
		v := x[r*cols+j]
		switch op {
		case redSum:
			acc += v
		case redProd:
			acc *= v
		case redMax:
			acc = binary64(opMax, v, acc)
		default:
			acc = binary64(opMin, v, acc)
		}
	}
	out[r] = acc
}

//kern:kernel block=256
func argRowsF64(t gpu.Thread, out []int32, x []float64, cols, isMin int) {
	r := t.GlobalX()
	if r >= len(out) {
		return
	}
	best := x[r*cols]
	k := 0
	for j := 1; j < cols; j++ {
		v := x[r*cols+j]
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
func matmulF64(t gpu.Thread, out, a, b []float64, m, k, n int) {
	i := t.GlobalX()
	if i >= len(out) {
		return
	}
	bi, r, col := i/(m*n), (i/n)%m, i%n
	var acc float64
	for p := 0; p < k; p++ {
		acc += a[(bi*m+r)*k+p] * b[(bi*k+p)*n+col]
	}
	out[i] = acc
}

//kern:kernel block=256
func iotaF64(t gpu.Thread, out []float64, dim, stride int) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = float64((i / stride) % dim)
	}
}

//kern:kernel block=256
func copyF64(t gpu.Thread, out, x []float64, meta []int32, rank, n, srcOff, dstOff int) {
	copyStrided(t, out, x, meta, rank, n, srcOff, dstOff)
}

//kern:kernel block=256
func fillF64(t gpu.Thread, out, v []float64) { fill(t, out, v) }

//kern:kernel block=256
func whereF64(t gpu.Thread, out []float64, cond []bool, a, b []float64, cs, as, bs int) {
	where(t, out, cond, a, b, cs, as, bs)
}

//kern:kernel block=256
func gatherF64(t gpu.Thread, out, x []float64, idx, meta []int32, rank, nIdx, idxStride int) {
	gatherAt(t, out, x, idx, meta, rank, nIdx, idxStride)
}

//kern:kernel block=256
func scatterAddF64(t gpu.Thread, out, upd []float64, idx, meta []int32, ur, or, nIdx, idxStride int) {
	i := t.GlobalX()
	if i >= len(upd) {
		return
	}
	if off, ok := scatterOffset(i, idx, meta, ur, or, nIdx, idxStride); ok {
		gpu.AtomicAdd(&out[off], upd[i])
	}
}

// Conversions: float64 ↔ float32 is the hub's edge; float64 ↔ int32,
// int64 and bool convert directly so that no value passes through
// float32's 24-bit mantissa.

//kern:kernel block=256
func cvtF64F32(t gpu.Thread, out []float32, x []float64) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = float32(x[i])
	}
}

//kern:kernel block=256
func cvtF32F64(t gpu.Thread, out []float64, x []float32) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = float64(x[i])
	}
}

//kern:kernel block=256
func cvtF64I32(t gpu.Thread, out []int32, x []float64) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = int32(x[i])
	}
}

//kern:kernel block=256
func cvtI32F64(t gpu.Thread, out []float64, x []int32) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = float64(x[i])
	}
}

//kern:kernel block=256
func cvtF64I64(t gpu.Thread, out []int64, x []float64) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = int64(x[i])
	}
}

//kern:kernel block=256
func cvtI64F64(t gpu.Thread, out []float64, x []int64) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = float64(x[i])
	}
}

//kern:kernel block=256
func cvtF64Bool(t gpu.Thread, out []bool, x []float64) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = x[i] != 0
	}
}

//kern:kernel block=256
func cvtBoolF64(t gpu.Thread, out []float64, x []bool) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = 0
		if x[i] {
			out[i] = 1
		}
	}
}
