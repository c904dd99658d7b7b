package gpu

// Tensor-core operations of native mode: MMA (mma.sync) and LdMatrix
// (ldmatrix), warp rendezvous whose last lane gathers every lane's fragment
// into whole matrices, computes, and scatters the results back, using the
// fragment layouts documented in mma.go.
//
// Accumulation order: D[i][j] starts as C[i][j] and adds A[i][k]·B[k][j]
// for k = 0, 1, ..., K-1, each product and each sum rounded to float32
// (f16/bf16) or wrapping in int32 (s8). Products of two f16 values are exact
// in float32 (11+11 significant bits), as are products of bf16 values unless
// they overflow or underflow float32's range. A GPU's tensor core adds in an
// unspecified order and precision, so compare tensor-core results with a
// tolerance, not bit for bit.

import (
	"fmt"
	"unsafe"
)

// fullWarp returns th's warp, panicking if it has fewer than 32 lanes: the
// fragment layouts need all of them.
func fullWarp(th *thread, op string) *warp {
	if n := th.warp.rv.size; n != WarpSize {
		panic(fmt.Sprintf("gpu.%s needs a full warp of 32 threads; warp %d has %d (make the block size a multiple of 32)",
			op, th.linear/WarpSize, n))
	}
	return th.warp
}

func mmaF16(th *thread, a [4]uint32, b [2]uint32, c [4]float32, bf bool) [4]float32 {
	kind, name := kindMMAF16, "MMAF16"
	if bf {
		kind, name = kindMMABF16, "MMABF16"
	}
	w := fullWarp(th, name)
	s := &w.slots[th.lane]
	s.a, s.b = a, b
	for i, v := range c {
		s.c[i] = uint32(wordBits(v))
	}
	if w.rv.arrive(th, waitInfo{kind: kind}) {
		w.mmaF16(bf)
		w.rv.release(th.blk)
	}
	var d [4]float32
	for i := range d {
		d[i] = wordFrom[float32](uint64(s.d[i]))
	}
	return d
}

// mmaF16 computes every lane's D fragment of m16n8k16 from the lanes' A, B
// and C fragments.
func (w *warp) mmaF16(bf bool) {
	conv := halfToFloat32
	if bf {
		conv = bf16ToFloat32
	}
	var A [16][16]float32
	var B [16][8]float32
	var C [16][8]float32
	pair := func(u uint32) (float32, float32) { return conv(uint16(u)), conv(uint16(u >> 16)) }
	for l := range WarpSize {
		s, g, t := &w.slots[l], l/4, l%4
		A[g][2*t], A[g][2*t+1] = pair(s.a[0])
		A[g+8][2*t], A[g+8][2*t+1] = pair(s.a[1])
		A[g][2*t+8], A[g][2*t+9] = pair(s.a[2])
		A[g+8][2*t+8], A[g+8][2*t+9] = pair(s.a[3])
		B[2*t][g], B[2*t+1][g] = pair(s.b[0])
		B[2*t+8][g], B[2*t+9][g] = pair(s.b[1])
		C[g][2*t], C[g][2*t+1] = wordFrom[float32](uint64(s.c[0])), wordFrom[float32](uint64(s.c[1]))
		C[g+8][2*t], C[g+8][2*t+1] = wordFrom[float32](uint64(s.c[2])), wordFrom[float32](uint64(s.c[3]))
	}
	var D [16][8]float32
	for i := range 16 {
		for j := range 8 {
			acc := C[i][j]
			for k := range 16 {
				acc += float32(A[i][k] * B[k][j]) // the conversion forbids fusing
			}
			D[i][j] = acc
		}
	}
	for l := range WarpSize {
		s, g, t := &w.slots[l], l/4, l%4
		s.d = [4]uint32{
			uint32(wordBits(D[g][2*t])), uint32(wordBits(D[g][2*t+1])),
			uint32(wordBits(D[g+8][2*t])), uint32(wordBits(D[g+8][2*t+1])),
		}
	}
}

func mmaS8(th *thread, a [4]uint32, b [2]uint32, c [4]int32) [4]int32 {
	w := fullWarp(th, "MMAS8")
	s := &w.slots[th.lane]
	s.a, s.b = a, b
	for i, v := range c {
		s.c[i] = uint32(v)
	}
	if w.rv.arrive(th, waitInfo{kind: kindMMAS8}) {
		w.mmaS8()
		w.rv.release(th.blk)
	}
	return [4]int32{int32(s.d[0]), int32(s.d[1]), int32(s.d[2]), int32(s.d[3])}
}

// mmaS8 computes every lane's D fragment of m16n8k32 s8.
func (w *warp) mmaS8() {
	var A [16][32]int32
	var B [32][8]int32
	var C [16][8]int32
	for l := range WarpSize {
		s, g, t := &w.slots[l], l/4, l%4
		for q := range 4 {
			sh := 8 * q
			A[g][4*t+q] = int32(int8(s.a[0] >> sh))
			A[g+8][4*t+q] = int32(int8(s.a[1] >> sh))
			A[g][4*t+16+q] = int32(int8(s.a[2] >> sh))
			A[g+8][4*t+16+q] = int32(int8(s.a[3] >> sh))
			B[4*t+q][g] = int32(int8(s.b[0] >> sh))
			B[4*t+16+q][g] = int32(int8(s.b[1] >> sh))
		}
		C[g][2*t], C[g][2*t+1] = int32(s.c[0]), int32(s.c[1])
		C[g+8][2*t], C[g+8][2*t+1] = int32(s.c[2]), int32(s.c[3])
	}
	for l := range WarpSize {
		s, g, t := &w.slots[l], l/4, l%4
		for r, ij := range [4][2]int{{g, 2 * t}, {g, 2*t + 1}, {g + 8, 2 * t}, {g + 8, 2*t + 1}} {
			i, j := ij[0], ij[1]
			acc := C[i][j]
			for k := range 32 {
				acc += A[i][k] * B[k][j]
			}
			s.d[r] = uint32(acc)
		}
	}
}

// ldmatrix loads n 8×8 matrices of 16-bit elements, lanes 8i..8i+7 giving
// the row addresses of matrix i. Each address must be 16-byte aligned and
// its 16 bytes must lie in the block's shared memory; the runtime checks
// both, so a wrong address is a panic, not a wild read. Registers past n
// are zero.
func ldmatrix[T Elem](th *thread, row *T, n int, trans bool) [4]uint32 {
	w := fullWarp(th, "LdMatrix")
	s := &w.slots[th.lane]
	s.ptr = nil
	if th.lane < 8*n {
		p := unsafe.Pointer(row)
		if p == nil || uintptr(p)%16 != 0 {
			panic(fmt.Sprintf("gpu.LdMatrix: lane %d's row address %p is not 16-byte aligned", th.lane, p))
		}
		if !th.blk.shared.contains(p, 16) {
			panic(fmt.Sprintf("gpu.LdMatrix: the 16 bytes at lane %d's row address %p are not in this block's shared memory", th.lane, p))
		}
		s.ptr = p
	}
	variant := uint8(n)
	if trans {
		variant |= 8
	}
	if w.rv.arrive(th, waitInfo{kind: kindLdMatrix, arg: variant}) {
		w.ldmatrix(n, trans)
		w.rv.release(th.blk)
	}
	return s.d
}

// ldmatrix reads the rows the lanes deposited and fills every lane's
// registers: lane L's register i holds elements [L/4][2*(L%4)] and
// [L/4][2*(L%4)+1] of matrix i (of its transpose if trans), low first.
func (w *warp) ldmatrix(n int, trans bool) {
	for l := range WarpSize {
		w.slots[l].d = [4]uint32{}
	}
	for i := range n {
		var m [8][8]uint16
		for j := range 8 {
			m[j] = *(*[8]uint16)(w.slots[8*i+j].ptr)
		}
		for l := range WarpSize {
			r, c := l/4, 2*(l%4)
			lo, hi := m[r][c], m[r][c+1]
			if trans {
				lo, hi = m[c][r], m[c+1][r]
			}
			w.slots[l].d[i] = uint32(lo) | uint32(hi)<<16
		}
	}
}
