package emu

// Lane loops shared by the instruction families: each applies a scalar
// function to every lane of a warp-instruction.

import (
	"encoding/binary"
	"math/bits"
)

const fullMask = 0xffffffff

// lanes32 returns the 32 lane values of a register operand, or nil.
func (w *warp) lanes32(o *opnd) []uint64 {
	if o.kind != oReg || o.neg {
		return nil
	}
	return w.regs[o.r : o.r+32 : o.r+32]
}

// unop builds a handler for d = f(a).
func unop(f func(a uint64) uint64) execFn {
	return func(w *warp, in *inst, m uint32) error {
		d, a := in.ops[0].r, &in.ops[1]
		if ra := w.lanes32(a); m == fullMask && ra != nil {
			rd := w.regs[d : d+32 : d+32]
			for l := range rd {
				rd[l] = f(ra[l])
			}
			return nil
		}
		for mm := m; mm != 0; mm &= mm - 1 {
			l := bits.TrailingZeros32(mm)
			w.regs[int(d)+l] = f(w.get(a, l))
		}
		return nil
	}
}

// binop builds a handler for d = f(a, b).
func binop(f func(a, b uint64) uint64) execFn {
	return func(w *warp, in *inst, m uint32) error {
		d, a, b := in.ops[0].r, &in.ops[1], &in.ops[2]
		if ra := w.lanes32(a); m == fullMask && ra != nil {
			rd := w.regs[d : d+32 : d+32]
			if rb := w.lanes32(b); rb != nil {
				for l := range rd {
					rd[l] = f(ra[l], rb[l])
				}
				return nil
			}
			if b.kind == oImm {
				bv := b.imm
				for l := range rd {
					rd[l] = f(ra[l], bv)
				}
				return nil
			}
		}
		for mm := m; mm != 0; mm &= mm - 1 {
			l := bits.TrailingZeros32(mm)
			w.regs[int(d)+l] = f(w.get(a, l), w.get(b, l))
		}
		return nil
	}
}

// triop builds a handler for d = f(a, b, c).
func triop(f func(a, b, c uint64) uint64) execFn {
	return func(w *warp, in *inst, m uint32) error {
		d, a, b, c := in.ops[0].r, &in.ops[1], &in.ops[2], &in.ops[3]
		if ra, rb, rc := w.lanes32(a), w.lanes32(b), w.lanes32(c); m == fullMask && ra != nil && rb != nil && rc != nil {
			rd := w.regs[d : d+32 : d+32]
			for l := range rd {
				rd[l] = f(ra[l], rb[l], rc[l])
			}
			return nil
		}
		for mm := m; mm != 0; mm &= mm - 1 {
			l := bits.TrailingZeros32(mm)
			w.regs[int(d)+l] = f(w.get(a, l), w.get(b, l), w.get(c, l))
		}
		return nil
	}
}

// loadLE reads a little-endian value of size 1, 2, 4 or 8 bytes.
func loadLE(b []byte, size int) uint64 {
	switch size {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

// storeLE writes the low size bytes of v little-endian.
func storeLE(b []byte, size int, v uint64) {
	switch size {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
}
