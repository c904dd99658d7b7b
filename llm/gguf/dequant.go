package gguf

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gokern/kern/gpu"
)

// Float32 dequantises the tensor into a new slice, innermost dimension
// first (row-major for the PyTorch shape). Each format's arithmetic
// follows ggml's reference dequantisers (ggml-quants.c): scales are f16,
// products are float32, so the values equal what ggml and transformers'
// GGUF loader compute.
func (t *Tensor) Float32() ([]float32, error) {
	out := make([]float32, t.Elems())
	if err := t.dequantize(out); err != nil {
		return nil, err
	}
	return out, nil
}

func (t *Tensor) dequantize(out []float32) error {
	b, le := t.raw, binary.LittleEndian
	h := func(p []byte) float32 { return gpu.Half(le.Uint16(p)).Float32() }
	switch t.Type {
	case F32:
		for i := range out {
			out[i] = math.Float32frombits(le.Uint32(b[4*i:]))
		}
	case F16:
		for i := range out {
			out[i] = h(b[2*i:])
		}
	case BF16:
		for i := range out {
			out[i] = gpu.BFloat16(le.Uint16(b[2*i:])).Float32()
		}
	case Q4_0: // d f16 | 16 bytes: element j in the low nibble of byte j, j+16 in the high
		for blk := 0; blk < len(out)/32; blk++ {
			p, y := b[blk*18:], out[blk*32:]
			d := h(p)
			for j := 0; j < 16; j++ {
				y[j] = float32(int(p[2+j]&15)-8) * d
				y[j+16] = float32(int(p[2+j]>>4)-8) * d
			}
		}
	case Q4_1: // d f16 | m f16 | 16 bytes; x = q·d + m
		for blk := 0; blk < len(out)/32; blk++ {
			p, y := b[blk*20:], out[blk*32:]
			d, m := h(p), h(p[2:])
			for j := 0; j < 16; j++ {
				y[j] = float32(p[4+j]&15)*d + m
				y[j+16] = float32(p[4+j]>>4)*d + m
			}
		}
	case Q8_0: // d f16 | 32 int8
		for blk := 0; blk < len(out)/32; blk++ {
			p, y := b[blk*34:], out[blk*32:]
			d := h(p)
			for j := 0; j < 32; j++ {
				y[j] = float32(int8(p[2+j])) * d
			}
		}
	case Q6_K:
		for blk := 0; blk < len(out)/256; blk++ {
			dequantQ6K(b[blk*210:blk*210+210], out[blk*256:blk*256+256])
		}
	default:
		return fmt.Errorf("gguf: %s: tensor %q: type %s is not supported (F32, F16, BF16, Q4_0, Q4_1, Q8_0, Q6_K are)", t.file.Path, t.Name, t.Type)
	}
	return nil
}

// dequantQ6K decodes one Q6_K super-block: ql[128] (low 4 bits) | qh[64]
// (high 2 bits) | 16 int8 scales | d f16. Each half of 128 elements is
// four runs of 32 whose 6-bit values combine a nibble of ql with two bits
// of qh; a scale covers 16 elements.
func dequantQ6K(p []byte, y []float32) {
	ql, qh, sc := p[:128], p[128:192], p[192:208]
	d := gpu.Half(binary.LittleEndian.Uint16(p[208:])).Float32()
	for half := 0; half < 2; half++ {
		ql, qh, sc, y := ql[64*half:], qh[32*half:], sc[8*half:], y[128*half:]
		for l := 0; l < 32; l++ {
			is := l / 16
			q1 := int(ql[l]&15|(qh[l]&3)<<4) - 32
			q2 := int(ql[l+32]&15|(qh[l]>>2&3)<<4) - 32
			q3 := int(ql[l]>>4|(qh[l]>>4&3)<<4) - 32
			q4 := int(ql[l+32]>>4|(qh[l]>>6&3)<<4) - 32
			y[l] = d * float32(int8(sc[is])) * float32(q1)
			y[l+32] = d * float32(int8(sc[is+2])) * float32(q2)
			y[l+64] = d * float32(int8(sc[is+4])) * float32(q3)
			y[l+96] = d * float32(int8(sc[is+6])) * float32(q4)
		}
	}
}
