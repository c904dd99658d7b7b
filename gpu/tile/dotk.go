package tile

import "github.com/gokern/kern/gpu"

// DotK is a whole K loop of Dots, pipelined: what a kernel's
//
//	for kt := 0; kt*BK < K; kt++ {
//		acc = Dot(t, acc, Stage(t, sa, a, ti, kt), Stage(t, sb, b, tj, kt))
//	}
//
// computes, with the copies of slab kt+1 in flight while slab kt is
// multiplied. A Stage/Dot step waits for its own copies (cp.async
// .wait_group 0) and synchronizes the block twice; DotK keeps Stages
// slabs of each operand in shared memory, a double buffer, and per step
// waits for slab kt, synchronizes once, issues slab kt+1 into the buffer
// every warp finished reading at the barrier, and multiplies slab kt
// (the ring of ops/internal/mm's GEMM, two stages deep so that a 128-row
// A, a 64-row B and Acc.Mat's staging fit in 48 KiB of static shared
// memory).
//
// What a step costs is fixed before the loop, where Stage decides it per
// call:
//
//   - copy slots: lane l of warp w copies chunk l&3 of rows l>>2, +8,
//     +16, +24 of the warp's own 32 rows of A (the rows its Dot reads),
//     and thread i chunks i and i+B of B's 256 (B the block's threads);
//     their source offsets differ by a constant row stride, so a copy in
//     the loop is an add, two compares (the column, uint(i) < len) and a
//     cp.async;
//   - bounds: the sources are a's and b's elements cut to rows·ld (one
//     check, before the loop: a view is made with rows·cols ≤ len), and a
//     chunk is copied under `uint(i) < uint(len)` of that cut (0 ≤ i <
//     len in one compare, compiler/bounds_unsigned.go), which is also its
//     row mask (rows past the view's end start past the cut) and proves
//     the index; the shared buffers are arrays of a constant shape (one
//     conversion each, before the loop), so every shared index and every
//     ldmatrix address is proven from the lane arithmetic;
//   - path: 16-byte cp.async chunks need rows (ld) and K that are
//     multiples of 8 elements and a block of 4 to 8 whole warps; other
//     shapes take a loop of element copies into the same ring (a warp
//     its own rows of A, the block B), chosen once.
//
// sa holds Stages·32·W·BK elements (W the block's warps; rows ti·32W … of
// a), sb Stages·64·BK (rows tj·64 … of b); K is a's columns (b has as
// many). Every thread calls it, under uniform control flow; on return the
// copies are complete and the block synchronized, so sa and sb may be
// reused.
func DotK[T gpu.Elem, C MMA[T]](t gpu.Thread, acc Acc, sa, sb []T, a, b InMat[T, C], ti, tj int) Acc {
	nt := t.BlockDim().X
	// The two slabs of the ring (Stages = 2): the warp's 32 rows of A,
	// B's 64 (one check each, here; the loop swaps the pointers).
	w := t.Warp()
	a0, a1 := (*[32 * BK]T)(sa[w*Stages*32*BK:]), (*[32 * BK]T)(sa[(w*Stages+1)*32*BK:])
	b0, b1 := (*[64 * BK]T)(sb), (*[64 * BK]T)(sb[64*BK:])
	as, bs := a.s[:a.rows*a.ld], b.s[:b.rows*b.ld]
	if nt < 128 || nt > 256 || nt%32 != 0 || !chunked(a) || !chunked(b) {
		// Element copies (a warp its own rows of A, the block B's), which
		// are complete at the barrier; the ring still needs only one.
		for k0 := 0; k0 < a.cols; k0 += BK {
			stageElems(a0[:], as, a.ld, a.cols, ti*nt+w*32, k0, t.Lane(), 32)
			stageElems(b0[:], bs, b.ld, b.cols, tj*64, k0, t.ThreadIdx().X, nt)
			t.Sync()
			acc = mmaSlab[T, C](t, acc, a0, b0)
			a0, a1, b0, b1 = a1, a0, b1, b0
		}
		t.Sync()
		return acc
	}
	// Any readable element: the source of a zero-filled chunk, not read.
	pa, pb := &a.s[0], &b.s[0]
	ch := t.ThreadIdx().X & 3 // every slot's chunk: lanes and B are multiples of 4
	// Element (row, chunk ch) of each slot 0, at k = 0.
	ia := (ti*nt+w*32+t.Lane()>>2)*a.ld + ch*8
	ib := (tj*64+t.ThreadIdx().X>>2)*b.ld + ch*8
	sta, stb := 8*a.ld, nt/4*b.ld
	copyA(t, a0, as, pa, ia, sta, ch*8, a.cols)
	copyB(t, b0, bs, pb, ib, stb, ch*8, b.cols)
	gpu.CpAsyncCommit(t)
	for k0 := 0; k0 < a.cols; k0 += BK {
		gpu.CpAsyncWait(t, 0)
		t.Sync()
		// Slab k0+BK (past K it is all zero-fill: no branch), into the
		// buffer of the slab before k0, which every warp has finished.
		k1 := k0 + BK
		copyA(t, a1, as, pa, ia+k1, sta, k1+ch*8, a.cols)
		copyB(t, b1, bs, pb, ib+k1, stb, k1+ch*8, b.cols)
		gpu.CpAsyncCommit(t)
		acc = mmaSlab[T, C](t, acc, a0, b0)
		a0, a1, b0, b1 = a1, a0, b1, b0
	}
	gpu.CpAsyncWait(t, 0)
	t.Sync()
	return acc
}

// Stages is the depth of DotK's ring: its shared arrays hold Stages slabs
// of each operand. DotK's ring is two slab pointers swapped per step, so
// it is 2.
const Stages = 2

// chunked reports whether v's rows can be copied in 16-byte chunks from a
// non-empty view.
func chunked[T any, C Codec[T]](v InMat[T, C]) bool {
	return v.ld%8 == 0 && v.cols%8 == 0 && len(v.s) > 0
}

// copyA issues the calling lane's 4 chunks of its warp's 32 rows of an A
// slab into d: rows l>>2 + 8s, chunk l&3, from src[i0 + s·stride] (each
// 8 elements), zero-filled unless 0 ≤ i < len(src) and column gc < cols.
func copyA[T gpu.Elem](t gpu.Thread, d *[32 * BK]T, src []T, p0 *T, i0, stride, gc, cols int) {
	l := t.Lane()
	r := l >> 2
	dst := r*BK + swz(r, l&3)*8 // rows r+8s share r's swizzle bits 1..2
	//kern:unroll
	for s := range 4 {
		p, n := p0, 0
		if i := i0 + s*stride; gc < cols && uint(i) < uint(len(src)) {
			p, n = &src[i], 16
		}
		gpu.CpAsyncZFill(t, &d[dst+s*8*BK], p, 16, n)
	}
}

// copyB issues the calling thread's chunks e = i, i+B (e < 256; B the
// block's threads) of a 64-row B slab into d: row e>>2, chunk e&3, from
// src[i0 + s·stride], masked as copyA's.
func copyB[T gpu.Elem](t gpu.Thread, d *[64 * BK]T, src []T, p0 *T, i0, stride, gc, cols int) {
	tid, nt := t.ThreadIdx().X, t.BlockDim().X
	//kern:unroll
	for s := range 2 {
		if e := tid + s*nt; e < 64*BK/8 {
			r := e >> 2
			p, n := p0, 0
			if i := i0 + s*stride; gc < cols && uint(i) < uint(len(src)) {
				p, n = &src[i], 16
			}
			gpu.CpAsyncZFill(t, &d[r*BK+swz(r, e&3)*8], p, 16, n)
		}
	}
}
