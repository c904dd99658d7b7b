package gpu

// wgmma in native mode. Matrix descriptors hold 18-bit shared addresses,
// so native mode gives the block's shared memory a virtual shared address
// space: dynamic shared memory at 0, then each Shared array in the order
// the block first used them, each at a 1024-byte boundary (the alignment
// the 128-byte swizzle needs). WGMMADesc encodes virtual addresses and
// wgmma reads through them, applying the swizzle to the virtual address
// as a GPU applies it to the shared address.
//
// Accumulation is native MMA's (native_mma.go): float32, in k order.
// Each thread computes its own accumulator elements: with operands in
// shared memory they depend on no other thread, and the warpgroup's
// warps need not meet. The register-A forms read the A fragments of the
// warp's lanes through a warp rendezvous. Fence, commit and wait do
// nothing: every result is complete when the call returns.

import (
	"fmt"
	"unsafe"
)

const sharedWindowBytes = 1 << 18 // a descriptor's 18-bit address range

// virtRegions lists the block's shared regions with their virtual bases.
func (s *sharedMem) virtRegions(f func(base int, mem []byte) bool) {
	base := 0
	if len(s.dyn) > 0 {
		if !f(0, s.dyn) {
			return
		}
		base = (len(s.dyn) + 1023) &^ 1023
	}
	s.mu.RLock()
	arrays := s.arrays
	s.mu.RUnlock()
	for _, a := range arrays {
		if !f(base, a.mem) {
			return
		}
		base = (base + len(a.mem) + 1023) &^ 1023
	}
}

// virtOf returns the virtual shared address of p.
func (s *sharedMem) virtOf(p unsafe.Pointer) (int, bool) {
	v, ok := -1, false
	s.virtRegions(func(base int, mem []byte) bool {
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
		if uintptr(p) >= lo && uintptr(p) < lo+uintptr(len(mem)) {
			v, ok = base+int(uintptr(p)-lo), true
			return false
		}
		return true
	})
	return v, ok
}

// virtBytes returns the n bytes at virtual shared address v.
func (s *sharedMem) virtBytes(v, n int) ([]byte, bool) {
	var out []byte
	s.virtRegions(func(base int, mem []byte) bool {
		if v >= base && v+n <= base+len(mem) {
			out = mem[v-base : v-base+n]
			return false
		}
		return true
	})
	return out, out != nil
}

func wgmmaDesc[T Elem](th *thread, p *T, lbo, sbo int, sw Swizzle) uint64 {
	v, ok := th.blk.shared.virtOf(unsafe.Pointer(p))
	if !ok || v%16 != 0 {
		panic(fmt.Sprintf("gpu.WGMMADesc: %p is not a 16-byte aligned address of this block's shared memory", p))
	}
	if v >= sharedWindowBytes {
		panic(fmt.Sprintf("gpu.WGMMADesc: the block uses more than %d bytes of shared memory", sharedWindowBytes))
	}
	return EncodeWGMMADesc(v, lbo, sbo, sw)
}

// EncodeWGMMADesc packs a matrix descriptor from a shared address, the
// leading and stride byte offsets and the swizzle (PTX ISA §9.7.15,
// "Matrix Descriptor Format"); the compiler emits the same arithmetic.
func EncodeWGMMADesc(addr, lbo, sbo int, sw Swizzle) uint64 {
	return uint64(addr)&0x3ffff>>4 | (uint64(lbo)>>4&0x3fff)<<16 | (uint64(sbo)>>4&0x3fff)<<32 | sw.descMode()<<62
}

// WGMMAElemOffset is the shared address of element (row, k) of a K-major
// 16-bit operand described by desc: the layout rules of WGMMADesc, then
// the swizzle. Package emu implements the same function.
func WGMMAElemOffset(desc uint64, row, k int) int {
	start := int(desc&0x3fff) << 4
	lbo := int(desc>>16&0x3fff) << 4
	sbo := int(desc>>32&0x3fff) << 4
	var w int
	switch desc >> 62 {
	case 0:
		return start + row/8*sbo + k/8*lbo + row%8*16 + k%8*2
	case 1:
		w = 128
	case 2:
		w = 64
	default:
		w = 32
	}
	a := start + row/8*sbo + row%8*w + k*2
	return SwizzleAddr(a, w)
}

// SwizzleAddr applies the shared-memory swizzle of rows w bytes wide
// (32, 64 or 128) to address a: the 16-byte chunk bits 4.. are XORed with
// the bits 7.. of the 128-byte row index, as many bits as w/16 needs.
func SwizzleAddr(a, w int) int {
	mask := w/16 - 1
	return a ^ (a>>7&mask)<<4
}

func wgmmaSync(th *thread) {}

// warpGatherA returns the A fragments of every lane of th's warp. A lane
// reads w.wgA right after the round's release and arrives at the next
// round only afterwards, so the next round's gather cannot overwrite it
// early.
func warpGatherA(th *thread, a [4]uint32) *[WarpSize][4]uint32 {
	w := fullWarp(th, "WGMMAF16RegA")
	w.slots[th.lane].a = a
	if w.rv.arrive(th, waitInfo{kind: kindWGMMA}) {
		for l := range WarpSize {
			w.wgA[l] = w.slots[l].a
		}
		w.rv.release(th.blk)
	}
	return &w.wgA
}

func wgmma[A WGAccum](th *thread, acc *A, aDesc uint64, aRegs *[4]uint32, bDesc uint64, accumulate, bf16 bool) {
	wgmmaMajor(th, acc, aDesc, aRegs, bDesc, accumulate, bf16, KMajor, KMajor)
}

func wgmmaMajor[A WGAccum](th *thread, acc *A, aDesc uint64, aRegs *[4]uint32, bDesc uint64, accumulate, bf16 bool, aMajor, bMajor Major) {
	d := unsafe.Slice((*float32)(unsafe.Pointer(acc)), unsafe.Sizeof(*acc)/4)
	n := 2 * len(d)
	conv := halfToFloat32
	if bf16 {
		conv = bf16ToFloat32
	}
	sh := &th.blk.shared
	load := func(desc uint64, major Major, row, k int) float32 {
		off := WGMMAOperandOffset(desc, major, row, k)
		b, ok := sh.virtBytes(off, 2)
		if !ok {
			panic(fmt.Sprintf("gpu.WGMMA: operand element (%d, %d) at shared address %#x is outside the block's shared memory", row, k, off))
		}
		return conv(uint16(b[0]) | uint16(b[1])<<8)
	}
	wi := th.linear / WarpSize % 4
	lane := th.linear % WarpSize
	g, q := lane/4, lane%4
	var aRow [2][16]float32 // the thread's two rows of A
	if aRegs != nil {
		frag := warpGatherA(th, *aRegs)
		for r := range 2 {
			for k := range 16 {
				// mma.sync m16n8k16 A layout: lane 4g'+q' holds rows g', g'+8,
				// columns 2q'..2q'+1 and 2q'+8..2q'+9.
				qq := k % 8 / 2
				reg := r + 2*(k/8)
				v := frag[4*g+qq][reg] >> (16 * uint(k%2)) & 0xffff
				aRow[r][k] = conv(uint16(v))
			}
		}
	} else {
		for r := range 2 {
			for k := range 16 {
				aRow[r][k] = load(aDesc, aMajor, 16*wi+g+8*r, k)
			}
		}
	}
	for j := range n / 8 {
		for i := range 4 {
			r, col := i/2, 8*j+2*q+i%2
			// As native MMA: products and sums rounded to float32, in k order.
			var s float32
			if accumulate {
				s = d[4*j+i]
			}
			for k := range 16 {
				s += float32(aRow[r][k] * load(bDesc, bMajor, col, k))
			}
			d[4*j+i] = s
		}
	}
}
