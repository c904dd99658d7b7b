package tile

import "github.com/gokern/kern/gpu"

// Dot on the tensor cores: A·Bᵀ with f16 or bf16 operands and float32
// accumulators, lowered to ldmatrix + mma.sync.m16n8k16 (PTX ISA
// §9.7.14.5) from XOR-swizzled shared memory, the building blocks of
// ops/internal/mm's pipelined GEMM with its swizzle (swz4 there).
//
// Layout (fixed in this slice; kern check -v prints it per kernel):
//
//   - an Operand is BK = 32 columns (k) of a block of rows of a row-major
//     matrix, A[M,K] or W[N,K] (B given transposed, as the weights of a
//     linear layer are), staged in shared memory as rows of 64 bytes:
//     16-byte chunk c of row r is stored at chunk c ^ ((r>>1)&3), so the
//     eight rows one ldmatrix 8×8 matrix reads, and the eight chunks a
//     quarter warp stores, fall in eight distinct bank groups;
//   - an Acc is a block's accumulator tile of 32·W × 64 (W warps): warp w
//     owns rows 32w … 32w+31, as 2×8 mma tiles of 16×8 (64 float32 per
//     thread, in the fragment layout of gpu/mma.go);
//   - per k16 step a warp issues 2 ldmatrix.x4 for A, 4 for B (the B tile
//     is shared by the warps) and 16 mma.sync;
//   - Acc.Mat moves the accumulators into the 2-D tile layout of Mat
//     (AccRegs: [32][2]float32 per thread) through shared memory, warp by
//     warp, for an epilogue written with Mat's operations.

// BK is the k extent of an Operand, consumed by one Dot.
const BK = 32

// MMA is a codec whose storage type the tensor cores multiply: F16, BF16.
type MMA[T any] interface {
	Codec[T]
	mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32
	pack(lo, hi float32) uint32 // two values rounded to T, lo low: an A register (flash.go)
}

func (F16) mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return gpu.MMAF16(t, a, b, c)
}

func (BF16) mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return gpu.MMABF16(t, a, b, c)
}

// Operand is a staged, swizzled k-slab of a matrix in shared memory (see
// Stage).
type Operand[T gpu.Elem, C MMA[T]] struct{ s []T }

// swz is the stored chunk of chunk ch of row r of a 64-byte row.
func swz(r, ch int) int { return ch ^ (r >> 1 & 3) }

// Stage copies rows ti·R … ti·R+R-1 and columns kt·BK … kt·BK+BK-1 of v
// into s (shared memory of R·BK elements), swizzled; elements outside v
// are 0 (the ragged edges). Every thread calls it. When v's rows are a
// multiple of 8 elements the copy is 16-byte cp.async chunks (v must
// then start 16-byte aligned, as a kernel's slice parameter does), else
// element by element. The copy is complete only in the Dot that takes
// the Operand: Dot waits for it and synchronizes the block before it
// reads, and again after, so the next Stage into s may start at once.
func Stage[T gpu.Elem, C MMA[T]](t gpu.Thread, s []T, v InMat[T, C], ti, kt int) Operand[T, C] {
	rows := len(s) / BK
	r0, k0 := ti*rows, kt*BK
	tid, nt := t.ThreadIdx().X, t.BlockDim().X
	// v's elements cut to rows·ld: an element or chunk i is copied under
	// 0 ≤ i < len of the cut (and its column below cols), which is its row
	// mask too and proves the index (see DotK).
	src := v.s[:v.rows*v.ld]
	if !chunked(v) {
		stageElems(s, src, v.ld, v.cols, r0, k0, tid, nt)
		return Operand[T, C]{s}
	}
	p0 := &v.s[0]
	for e := tid; e < rows*BK/8; e += nt {
		r, ch := e>>2, e&3
		p, n := p0, 0 // any readable element: the source of a zero fill
		if i, gc := (r0+r)*v.ld+k0+ch*8, k0+ch*8; gc < v.cols && uint(i) < uint(len(src)) {
			p, n = &src[i], 16
		}
		gpu.CpAsyncZFill(t, &s[r*BK+swz(r, ch)*8], p, 16, n)
	}
	gpu.CpAsyncCommit(t)
	return Operand[T, C]{s}
}

// stageElems stores, element by element, rows r0 … r0+R-1 and columns
// k0 … k0+BK-1 of a matrix with rows of ld elements, cols of them in the
// matrix, into d (R = len(d)/BK rows), swizzled as Stage stores them, and
// zero outside the matrix: the elements e0, e0+step, … of the slab. src
// is the matrix's elements cut to rows·ld, so 0 ≤ i < len(src) is the
// row mask of element i and proves its index (see DotK).
func stageElems[T gpu.Elem](d, src []T, ld, cols, r0, k0, e0, step int) {
	for e := e0; e < len(d); e += step {
		r, c := e/BK, e%BK
		var x T
		if i, gc := (r0+r)*ld+k0+c, k0+c; gc < cols && uint(i) < uint(len(src)) {
			x = src[i]
		}
		if j := r*BK + swz(r, c>>3)*8 + c&7; uint(j) < uint(len(d)) {
			d[j] = x
		}
	}
}

// Acc is a block's float32 accumulator tile, 32·W × 64 (see the layout
// above); its zero value is all zeros.
type Acc struct{ v [2][8][4]float32 }

// Dot returns acc + A·Bᵀ over one BK: a holds the block's 32·W rows of A,
// b 64 rows of W (= columns of B). Every thread calls it, under uniform
// control flow: it waits for the Stages' copies and synchronizes the
// block (two barriers per call: before reading a and b, and after, so
// that the Stages of the next step may overwrite them).
func Dot[T gpu.Elem, C MMA[T]](t gpu.Thread, acc Acc, a, b Operand[T, C]) Acc {
	gpu.CpAsyncWait(t, 0)
	t.Sync()
	// The warp's 32 rows of A and the 64 rows of B as arrays of known
	// size: one bounds check per operand and call (the conversion), after
	// which the range analysis proves every ldmatrix address from the
	// lane arithmetic (a too-small operand still fails the conversion).
	acc = mmaSlab[T, C](t, acc, (*[32 * BK]T)(a.s[t.Warp()*32*BK:]), (*[64 * BK]T)(b.s))
	t.Sync()
	return acc
}

// mmaSlab returns acc + A·Bᵀ over one staged BK slab: as holds the
// calling warp's 32 rows of A, bs the 64 rows of B, both swizzled as
// Stage stores them. It neither waits nor synchronizes (Dot and DotK do).
func mmaSlab[T gpu.Elem, C MMA[T]](t gpu.Thread, acc Acc, as *[32 * BK]T, bs *[64 * BK]T) Acc {
	var c C
	l := t.Lane()
	// Lane l addresses row l%8 of 8×8 matrix l/8 of each ldmatrix.x4. A:
	// matrices 1, 3 are rows 8…15, 2, 3 the next k chunk. B (W rows):
	// matrices 2, 3 are the next n8 tile, 1, 3 the next k chunk.
	lr, lc := (l>>3&1)<<3|l&7, l>>4
	lb, lk := (l>>4)<<3|l&7, l>>3&1
	//kern:unroll
	for kk := range BK / 16 {
		var fb [8][2]uint32
		//kern:unroll
		for p := range 4 {
			f := gpu.LdMatrixX4(t, &bs[(p*16+lb)*BK+swz(lb, 2*kk+lk)*8])
			fb[2*p], fb[2*p+1] = [2]uint32{f[0], f[1]}, [2]uint32{f[2], f[3]}
		}
		//kern:unroll
		for i := range 2 {
			// Rows 16i+lr of the warp's 32 share lr's bits 1..2 (the warp's
			// first row is a multiple of 32), hence its swizzle.
			fa := gpu.LdMatrixX4(t, &as[(i*16+lr)*BK+swz(lr, 2*kk+lc)*8])
			//kern:unroll
			for j := range 8 {
				acc.v[i][j] = c.mma(t, fa, fb[j], acc.v[i][j])
			}
		}
	}
	return acc
}

// AccRegs and AccRow are the type arguments of the Mat that Acc.Mat
// returns: 32 rows of 2 registers per thread, a 32·W × 64 tile.
type (
	AccRegs = [32][2]float32
	AccRow  = [2]float32
)

// accLd is the row stride, in words, of Acc.Mat's staging: 64 + 8, so
// that the 64-bit stores of a half warp (rows g, words 2q) hit 32
// distinct banks.
const accLd = 72

// Mat returns the accumulators as a 2-D tile (Mat[AccRegs, AccRow]) of
// the same rows and columns, for an epilogue. Each warp moves its own
// rows through shared memory, 8 rows at a time, so no block barrier is
// needed; the block has at most 8 warps.
func (acc Acc) Mat(t gpu.Thread) Mat[AccRegs, AccRow] {
	st := gpu.Shared[float32](t, 8*8*accLd)[t.Warp()*8*accLd:]
	l := t.Lane()
	g, q := l>>2, l&3
	var m Mat[AccRegs, AccRow]
	//kern:unroll
	for round := range 4 { // rows 8·round … of the warp: mma tile i, half h
		i, h := round>>1, round&1
		//kern:unroll
		for j := range 8 {
			x := acc.v[i][j]
			gpu.Store2(st, g*accLd+j*8+2*q, [2]float32{x[2*h], x[2*h+1]})
		}
		t.SyncWarp()
		//kern:unroll
		for r := range 8 {
			m.v[8*round+r] = [2]float32{st[r*accLd+l], st[r*accLd+32+l]}
		}
		t.SyncWarp()
	}
	return m
}
