package tile

import "github.com/gokern/kern/gpu"

// PartHeads is the calling block's partition of an attention output: the
// 64 query rows 64·x … of sequence z at head y (its BlockIdx), in out
// [tokens, heads, hd], and the same rows of lse [heads, tokens]. Blocks
// of other (x, y, z) own disjoint rows, given ordered offsets (Heads
// checks them) and y < heads (a block past the heads gets no rows).
type PartHeads[T gpu.Elem, C MMA[T], R FragRegs] struct {
	s    []T
	lse  []float32
	q    Seq[R] // the sequence at the block's head
	q0   int    // the block's first row in it
	rows int    // its rows: min(64, q.n - q0), ≤ 0 for none
	l0   int    // lse index of row 0 of the sequence
	h    int    // the head
}

// Heads partitions out and lse by block, for a grid of (⌈maxSeq/64⌉,
// heads, batch) blocks; cu holds the batch's query offsets. A sequence
// longer than the grid's rows, or offsets out of order, are a device
// error.
func Heads[C MMA[T], R FragRegs, T gpu.Elem](t gpu.Thread, out []T, lse []float32, cu []int32, heads int) PartHeads[T, C, R] {
	b := t.BlockIdx()
	h := min(b.Y, heads-1)
	q := HeadSeq[R](cu, b.Z, h, heads, len(out))
	if q.n > t.GridDim().X*FlashRows {
		panic("ops.FlashAttention: a query sequence is longer than maxSeqQ")
	}
	p := PartHeads[T, C, R]{s: out, lse: lse, q: q, q0: b.X * FlashRows, h: h}
	p.rows = min(FlashRows, q.n-p.q0)
	if b.Y >= heads {
		p.rows = 0
	}
	p.l0 = h*(len(out)/(heads*HeadDim[R]())) + int(cu[b.Z])
	return p
}

// Seq is the partition's sequence (at its head), for the input laid out
// as the output (Q); Row0 is the block's first row in it, Rows its rows
// (≤ 0: none).
func (p PartHeads[T, C, R]) Seq() Seq[R] { return p.q }
func (p PartHeads[T, C, R]) Row0() int   { return p.q0 }
func (p PartHeads[T, C, R]) Rows() int   { return p.rows }

// Head is the partition's head (BlockIdx().Y).
func (p PartHeads[T, C, R]) Head() int { return p.h }

// Store writes o, rounded to T, to the partition's rows (rows past the
// sequence are masked): 32-bit stores of the C layout's column pairs.
func (p PartHeads[T, C, R]) Store(t gpu.Thread, o Frag[R]) {
	var c C
	l := t.Lane()
	row, tig := t.Warp()*16+l>>2, l&3
	//kern:unroll
	for r := range 2 {
		if i := row + 8*r; i < p.rows {
			ob := p.q.base + (p.q0+i)*p.q.stride + 2*tig
			//kern:unroll
			for j := range len(o.v) {
				gpu.Store2(p.s, ob+8*j, [2]T{c.store(o.v[j][2*r]), c.store(o.v[j][2*r+1])})
			}
		}
	}
}

// StoreLSE writes each row's log-sum-exp, ln Σ e^(s·scale) over its
// keys: (m·scale + log2 l)·ln 2 for the running maximum m of the raw
// scores and sum l (QuadSum'd) of 2^(s·scale - m·scale); -Inf for a row
// with no keys. One lane per quad stores.
func (p PartHeads[T, C, R]) StoreLSE(t gpu.Thread, m, l Col, scale float32) {
	lane := t.Lane()
	row := t.Warp()*16 + lane>>2
	//kern:unroll
	for r := range 2 {
		if i := row + 8*r; i < p.rows && lane&3 == 0 {
			x := NegInf()
			if l.v[r] > 0 {
				x = gpu.FMA(m.v[r], scale, gpu.Log2(l.v[r])) * Ln2
			}
			p.lse[p.l0+p.q0+i] = x
		}
	}
}
