package ops

// Dequantization of integer weights to Float, and the host-side
// quantizers that produce the formats:
//
//	Int8:     out[i]   = w[i]·scale                            (per tensor)
//	Int8Rows: out[r,j] = w[r,j]·scales[r]                      (per output channel)
//	Int4:     out[r,j] = (nibble(r,j) - 8)·scales[r, j/128]     (group 128)
//	Q6:       out[r,j] = (sixbits(r,j) - 32)·scales[r, j/64]    (group 64)
//
// Shapes and layouts, row-major, out [rows, cols] of T ∈ {float32,
// float16, bfloat16}; every scale is float32 (converting a checkpoint's
// float16 scales once at load time costs nothing and keeps them exact):
//
//	Int8      w [n] int8, scale a scalar
//	Int8Rows  w [rows, cols] int8, scales [rows]
//	Int4      packed [rows, cols/2] uint8: byte k of a row holds element
//	          2k in its low nibble and 2k+1 in its high nibble, each an
//	          unsigned 4-bit value with zero point 8 (so -8..7);
//	          scales [rows, ceil(cols/128)]; cols even. This is the
//	          symmetric group-128 layout of GPTQ/AWQ-style checkpoints
//	          after unpacking their 32-bit words into bytes.
//	Q6        packed [rows, cols·3/4] uint8: each 3 bytes b0 b1 b2 hold 4
//	          elements as the 24-bit little-endian word b0 | b1<<8 | b2<<16,
//	          element k in bits 6k..6k+5, unsigned with zero point 32 (so
//	          -32..31); scales [rows, ceil(cols/64)]; cols a multiple of 4.
//
// Q6 is kern's own format, kept simple as the template for writing
// another: a fixed number of values per whole number of bytes (so each
// thread decodes one unit with no neighbour's bits), the unit never
// straddling a row or a scale group, the scale index computed from the
// element's row and column. (llama.cpp's Q6_K splits the bits differently
// and adds 8-bit sub-block scales; it is not this format.)
//
// Arithmetic: the integer converts exactly to float32, one float32
// multiply by the scale, one rounding to T.
//
// Block: one thread per unit — an element (int8), a byte (int4, two
// elements) or 3 bytes (Q6, four elements) — 256 per block. Dequant is a
// pure stream; a GEMM would rather dequantize tiles in registers, which
// this file's unpacking helpers are written to allow.
//
// Versions: v1 only.

import (
	"fmt"
	"math"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// Group sizes of the formats.
const (
	Int4Group = 128
	Q6Group   = 64
)

// ---------------------------------------------------------------------------
// kernels

//kern:kernel block=256
func dequantInt8F32(t gpu.Thread, out []float32, w []int8, scale float32) {
	dequantInt8(f32c{}, t, out, w, scale)
}

//kern:kernel block=256
func dequantInt8F16(t gpu.Thread, out []gpu.Half, w []int8, scale float32) {
	dequantInt8(f16c{}, t, out, w, scale)
}

//kern:kernel block=256
func dequantInt8BF16(t gpu.Thread, out []gpu.BFloat16, w []int8, scale float32) {
	dequantInt8(bf16c{}, t, out, w, scale)
}

func dequantInt8[T any, C codec[T]](c C, t gpu.Thread, out []T, w []int8, scale float32) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = c.store(float32(w[i]) * scale)
	}
}

//kern:kernel block=256
func dequantInt8RowsF32(t gpu.Thread, out []float32, w []int8, scales []float32, cols int) {
	dequantInt8Rows(f32c{}, t, out, w, scales, cols)
}

//kern:kernel block=256
func dequantInt8RowsF16(t gpu.Thread, out []gpu.Half, w []int8, scales []float32, cols int) {
	dequantInt8Rows(f16c{}, t, out, w, scales, cols)
}

//kern:kernel block=256
func dequantInt8RowsBF16(t gpu.Thread, out []gpu.BFloat16, w []int8, scales []float32, cols int) {
	dequantInt8Rows(bf16c{}, t, out, w, scales, cols)
}

func dequantInt8Rows[T any, C codec[T]](c C, t gpu.Thread, out []T, w []int8, scales []float32, cols int) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = c.store(float32(w[i]) * scales[i/cols])
	}
}

//kern:kernel block=256
func dequantInt4F32(t gpu.Thread, out []float32, packed []uint8, scales []float32, cols int) {
	dequantInt4(f32c{}, t, out, packed, scales, cols)
}

//kern:kernel block=256
func dequantInt4F16(t gpu.Thread, out []gpu.Half, packed []uint8, scales []float32, cols int) {
	dequantInt4(f16c{}, t, out, packed, scales, cols)
}

//kern:kernel block=256
func dequantInt4BF16(t gpu.Thread, out []gpu.BFloat16, packed []uint8, scales []float32, cols int) {
	dequantInt4(bf16c{}, t, out, packed, scales, cols)
}

// dequantInt4 decodes byte GlobalX into elements 2k and 2k+1 (same row,
// same group: cols and the group size are even).
func dequantInt4[T any, C codec[T]](c C, t gpu.Thread, out []T, packed []uint8, scales []float32, cols int) {
	k := t.GlobalX()
	if k >= len(packed) {
		return
	}
	e := 2 * k
	s := scales[groupIndex(e, cols, Int4Group)]
	v := packed[k]
	out[e] = c.store(float32(int32(v&15)-8) * s)
	out[e+1] = c.store(float32(int32(v>>4)-8) * s)
}

//kern:kernel block=256
func dequantQ6F32(t gpu.Thread, out []float32, packed []uint8, scales []float32, cols int) {
	dequantQ6(f32c{}, t, out, packed, scales, cols)
}

//kern:kernel block=256
func dequantQ6F16(t gpu.Thread, out []gpu.Half, packed []uint8, scales []float32, cols int) {
	dequantQ6(f16c{}, t, out, packed, scales, cols)
}

//kern:kernel block=256
func dequantQ6BF16(t gpu.Thread, out []gpu.BFloat16, packed []uint8, scales []float32, cols int) {
	dequantQ6(bf16c{}, t, out, packed, scales, cols)
}

// dequantQ6 decodes the 3-byte unit GlobalX into elements 4k..4k+3 (same
// row and group: cols and the group size are multiples of 4).
func dequantQ6[T any, C codec[T]](c C, t gpu.Thread, out []T, packed []uint8, scales []float32, cols int) {
	k := t.GlobalX()
	if k >= len(packed)/3 {
		return
	}
	e := 4 * k
	s := scales[groupIndex(e, cols, Q6Group)]
	w := uint32(packed[3*k]) | uint32(packed[3*k+1])<<8 | uint32(packed[3*k+2])<<16
	//kern:unroll
	for v := 0; v < 4; v++ {
		out[e+v] = c.store(float32(int32(w>>(6*v)&63)-32) * s)
	}
}

// groupIndex is the scale index of element e of a [rows, cols] matrix
// whose rows are split into groups of g (the last one possibly short).
func groupIndex(e, cols, g int) int {
	return e/cols*((cols+g-1)/g) + e%cols/g
}

// ---------------------------------------------------------------------------
// Go API

var (
	dequantInt8K     = kset{dequantInt8F32Kernel.Kernel(), dequantInt8F16Kernel.Kernel(), dequantInt8BF16Kernel.Kernel()}
	dequantInt8RowsK = kset{dequantInt8RowsF32Kernel.Kernel(), dequantInt8RowsF16Kernel.Kernel(), dequantInt8RowsBF16Kernel.Kernel()}
	dequantInt4K     = kset{dequantInt4F32Kernel.Kernel(), dequantInt4F16Kernel.Kernel(), dequantInt4BF16Kernel.Kernel()}
	dequantQ6K       = kset{dequantQ6F32Kernel.Kernel(), dequantQ6F16Kernel.Kernel(), dequantQ6BF16Kernel.Kernel()}
)

// DequantInt8 writes out[i] = w[i]·scale for the n elements of w.
func DequantInt8[T Float](q kern.Queue, out *kern.Buffer[T], w *kern.Buffer[int8], scale float32, n int) error {
	s := newShape("ops.DequantInt8")
	s.atLeast("n", n, 0)
	buf(s, "w", w, n, "n")
	buf(s, "out", out, n, "n")
	checkScale(s, "scale", scale)
	return elementwise(s, pick[T](dequantInt8K), q, n, bufArg(out), bufArg(w), f32Arg(scale))
}

// DequantInt8Rows writes out[r,j] = w[r,j]·scales[r]: w and out are
// [rows, cols], scales [rows] (one per output channel).
func DequantInt8Rows[T Float](q kern.Queue, out *kern.Buffer[T], w *kern.Buffer[int8], scales *kern.Buffer[float32], rows, cols int) error {
	s := newShape("ops.DequantInt8Rows")
	n := rowsCols(s, rows, cols)
	buf(s, "w", w, n, "rows×cols")
	buf(s, "out", out, n, "rows×cols")
	buf(s, "scales", scales, rows, "rows")
	return elementwise(s, pick[T](dequantInt8RowsK), q, n, bufArg(out), bufArg(w), bufArg(scales), intArg(cols))
}

// DequantInt4 unpacks symmetric 4-bit weights in groups of 128 along each
// row (layout in quant.go's header): packed is [rows, cols/2], scales
// [rows, ceil(cols/128)], out [rows, cols]; cols must be even.
func DequantInt4[T Float](q kern.Queue, out *kern.Buffer[T], packed *kern.Buffer[uint8], scales *kern.Buffer[float32], rows, cols int) error {
	s := newShape("ops.DequantInt4")
	n := packedShape(s, out, packed, scales, rows, cols, 2, 1, Int4Group)
	return elementwise(s, pick[T](dequantInt4K), q, n/2, bufArg(out), bufArg(packed), bufArg(scales), intArg(cols))
}

// DequantQ6 unpacks kern's 6-bit format, 4 values in 3 bytes in groups of
// 64 along each row (layout in quant.go's header): packed is [rows,
// cols·3/4], scales [rows, ceil(cols/64)], out [rows, cols]; cols must be
// a multiple of 4.
func DequantQ6[T Float](q kern.Queue, out *kern.Buffer[T], packed *kern.Buffer[uint8], scales *kern.Buffer[float32], rows, cols int) error {
	s := newShape("ops.DequantQ6")
	n := packedShape(s, out, packed, scales, rows, cols, 4, 3, Q6Group)
	return elementwise(s, pick[T](dequantQ6K), q, n/4, bufArg(out), bufArg(packed), bufArg(scales), intArg(cols))
}

// packedShape checks a format packing per elements into bytes bytes, with
// one scale per group elements of a row, and returns rows·cols.
func packedShape[T Float](s *shape, out *kern.Buffer[T], packed *kern.Buffer[uint8], scales *kern.Buffer[float32], rows, cols, per, bytes, group int) int {
	n := rowsCols(s, rows, cols)
	if cols%per != 0 {
		s.fail("cols = %d, want a multiple of %d (%d values per %d-byte unit)", cols, per, per, bytes)
	}
	buf(s, "out", out, n, "rows×cols")
	buf(s, "packed", packed, n/per*bytes, fmt.Sprintf("rows×cols·%d/%d", bytes, per))
	buf(s, "scales", scales, s.mul(rows, (cols+group-1)/group), fmt.Sprintf("rows×ceil(cols/%d)", group))
	return n
}

func checkScale(s *shape, name string, v float32) {
	if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
		s.fail("%s = %g, want a finite value", name, v)
	}
}

// ---------------------------------------------------------------------------
// host-side quantizers (the formats' reference encoders)

// QuantizeInt8Rows quantizes w ([rows, cols]) per row: scales[r] =
// max|w[r,:]|/127 and q = round(w/scale), so |w - q·scale| ≤ scale/2.
func QuantizeInt8Rows(w []float32, rows, cols int) (q []int8, scales []float32, err error) {
	if err := hostShape("ops.QuantizeInt8Rows", len(w), rows, cols, 1); err != nil {
		return nil, nil, err
	}
	q, scales = make([]int8, len(w)), make([]float32, rows)
	for r := range rows {
		sc := absMax(w[r*cols:(r+1)*cols]) / 127
		scales[r] = sc
		for j := r * cols; j < (r+1)*cols; j++ {
			q[j] = int8(quantRound(w[j], sc, 127))
		}
	}
	return q, scales, nil
}

// QuantizeInt4 encodes w ([rows, cols], cols even) in DequantInt4's
// format with scale = max|group|/7, so |w - dequant| ≤ scale/2.
func QuantizeInt4(w []float32, rows, cols int) (packed []uint8, scales []float32, err error) {
	if err := hostShape("ops.QuantizeInt4", len(w), rows, cols, 2); err != nil {
		return nil, nil, err
	}
	groups := (cols + Int4Group - 1) / Int4Group
	packed, scales = make([]uint8, len(w)/2), make([]float32, rows*groups)
	for r := range rows {
		for g := range groups {
			lo, hi := r*cols+g*Int4Group, r*cols+min((g+1)*Int4Group, cols)
			sc := absMax(w[lo:hi]) / 7
			scales[r*groups+g] = sc
			for e := lo; e < hi; e++ {
				packed[e/2] |= uint8(quantRound(w[e], sc, 7)+8) << (4 * (e % 2))
			}
		}
	}
	return packed, scales, nil
}

// QuantizeQ6 encodes w ([rows, cols], cols a multiple of 4) in
// DequantQ6's format with scale = max|group|/31.
func QuantizeQ6(w []float32, rows, cols int) (packed []uint8, scales []float32, err error) {
	if err := hostShape("ops.QuantizeQ6", len(w), rows, cols, 4); err != nil {
		return nil, nil, err
	}
	groups := (cols + Q6Group - 1) / Q6Group
	packed, scales = make([]uint8, len(w)/4*3), make([]float32, rows*groups)
	for r := range rows {
		for g := range groups {
			lo, hi := r*cols+g*Q6Group, r*cols+min((g+1)*Q6Group, cols)
			sc := absMax(w[lo:hi]) / 31
			scales[r*groups+g] = sc
			for e := lo; e < hi; e++ {
				v := uint32(quantRound(w[e], sc, 31) + 32)
				bit := 6 * (e % 4)
				word := packed[e/4*3 : e/4*3+3]
				for k := range 3 {
					word[k] |= uint8(v << bit >> (8 * k))
				}
			}
		}
	}
	return packed, scales, nil
}

func hostShape(op string, n, rows, cols, per int) error {
	s := newShape(op)
	m := rowsCols(s, rows, cols)
	if cols%per != 0 {
		s.fail("cols = %d, want a multiple of %d", cols, per)
	}
	if s.err == nil && n != m {
		s.fail("w has %d elements, want rows×cols = %d", n, m)
	}
	return s.err
}

func absMax(xs []float32) float32 {
	m := float32(0)
	for _, x := range xs {
		m = max(m, float32(math.Abs(float64(x))))
	}
	return m
}

// quantRound is round(x/scale) clamped to [-lim, lim]; 0 for a zero scale.
func quantRound(x, scale float32, lim int) int {
	if scale == 0 {
		return 0
	}
	return max(-lim, min(lim, int(math.RoundToEven(float64(x/scale)))))
}
