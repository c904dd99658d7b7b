package safetensors

// Element types and their conversion to the types kern computes in.

import (
	"encoding/binary"
	"math"

	"github.com/gokern/kern/gpu"
)

// DType is a safetensors element type, spelled as in the header.
type DType string

// The element types a header may name. The engine computes with the
// floating-point ones; the integer ones appear in reference files.
const (
	F64  DType = "F64"
	F32  DType = "F32"
	F16  DType = "F16"
	BF16 DType = "BF16"
	I64  DType = "I64"
	I32  DType = "I32"
	I16  DType = "I16"
	I8   DType = "I8"
	U8   DType = "U8"
	Bool DType = "BOOL"
)

var dtypeSizes = map[DType]int{F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, Bool: 1}

func parseDType(s string) (DType, bool) {
	d := DType(s)
	_, ok := dtypeSizes[d]
	return d, ok
}

// Size is the bytes per element.
func (d DType) Size() int { return dtypeSizes[d] }

// IsFloat reports whether the engine can load d as weights.
func (d DType) IsFloat() bool { return d == F32 || d == F16 || d == BF16 || d == F64 }

// Float32 converts a floating-point tensor to float32 (bf16 and f16
// exactly; f64 rounded).
func (t *Tensor) Float32() ([]float32, error) {
	n := t.Elems()
	out := make([]float32, n)
	b := t.raw
	switch t.DType {
	case F32:
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case BF16:
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16)
		}
	case F16:
		for i := range out {
			out[i] = gpu.Half(binary.LittleEndian.Uint16(b[2*i:])).Float32()
		}
	case F64:
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])))
		}
	default:
		return nil, t.errorf("dtype %s is not floating point", t.DType)
	}
	return out, nil
}

// BFloat16 returns a bf16 tensor's elements (a copy; no rounding).
func (t *Tensor) BFloat16() ([]gpu.BFloat16, error) {
	if t.DType != BF16 {
		return nil, t.errorf("dtype %s, want BF16", t.DType)
	}
	out := make([]gpu.BFloat16, t.Elems())
	for i := range out {
		out[i] = gpu.BFloat16(binary.LittleEndian.Uint16(t.raw[2*i:]))
	}
	return out, nil
}

// Half returns an f16 tensor's elements (a copy; no rounding).
func (t *Tensor) Half() ([]gpu.Half, error) {
	if t.DType != F16 {
		return nil, t.errorf("dtype %s, want F16", t.DType)
	}
	out := make([]gpu.Half, t.Elems())
	for i := range out {
		out[i] = gpu.Half(binary.LittleEndian.Uint16(t.raw[2*i:]))
	}
	return out, nil
}

// Int64 returns an I64 tensor's elements.
func (t *Tensor) Int64() ([]int64, error) {
	if t.DType != I64 {
		return nil, t.errorf("dtype %s, want I64", t.DType)
	}
	out := make([]int64, t.Elems())
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(t.raw[8*i:]))
	}
	return out, nil
}

// CheckShape returns an error naming the file and tensor unless t has
// exactly the shape want.
func (t *Tensor) CheckShape(want ...int) error {
	ok := len(want) == len(t.Shape)
	for i := 0; ok && i < len(want); i++ {
		ok = want[i] == t.Shape[i]
	}
	if !ok {
		return t.errorf("shape %v, want %v", t.Shape, want)
	}
	return nil
}
