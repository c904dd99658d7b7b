package tile

import (
	"math"

	"github.com/gokern/kern/gpu"
)

// Attention tiles: what a FlashAttention-2 forward needs beyond Dot, in
// the tensor cores' own register layout so that nothing moves between
// the two products (ops/internal/tileattn uses them; ops/flash.go
// describes the algorithm).
//
// Layout (fixed; a block is 4 warps, block=128):
//
//   - a Frag[R] is a block's 64 rows × 8·len(R) columns of float32 in
//     mma.sync.m16n8k16's C layout (gpu/mma.go): warp w owns rows
//     16w … 16w+15; lane l holds rows g = l/4 and g+8 of each 8-column
//     n-tile j, columns 8j + 2(l%4) and +1, in v[j][2r], v[j][2r+1]
//     (r = 0 for row g, 1 for g+8). Scores (S = Q·Kᵀ, 64 keys) and the
//     output O (head dim 64 or 128) are Frags;
//   - that C layout of S over 16 keys is the A layout of P = softmax(S)
//     for a k16 step (FlashAttention-2's observation), so DotPV packs P
//     to f16 or bf16 in registers, no shared memory;
//   - a Col holds one value per row of a Frag (lane l: rows g, g+8), the
//     result of a row reduction, which reads only the lane's quad (two
//     shuffles);
//   - a SeqTile is a staged tile of 64 rows × hd elements of a [tokens,
//     heads, hd] tensor in shared memory, rows padded to hd+8 elements
//     (16 bytes), so that the eight rows an ldmatrix reads, and a quarter
//     warp's 16-byte copies, fall in distinct bank groups. Q and K are
//     read by ldmatrix, V by ldmatrix.trans (V is [keys, hd] row-major,
//     the B operand of P·V wants it k-major).

// FlashRows is the query rows of a block (16 per warp of 4), FlashKeys
// the keys of one K/V tile, FlashPad the padding of a staged row.
const (
	FlashRows = 64
	FlashKeys = 64
	FlashPad  = 8
)

func (F16) pack(lo, hi float32) uint32 { return gpu.PackHalf2(gpu.ToHalf(lo), gpu.ToHalf(hi)) }

func (BF16) pack(lo, hi float32) uint32 {
	return gpu.PackBFloat162(gpu.ToBFloat16(lo), gpu.ToBFloat16(hi))
}

// FragRegs is the per-lane register array of a Frag: 8 or 16 n-tiles of
// 8 columns (64 or 128).
type FragRegs interface{ [8][4]float32 | [16][4]float32 }

// Frag is a block's 64-row accumulator tile in the mma C layout (see
// above); its zero value is all zeros.
type Frag[R FragRegs] struct{ v R }

// Scores is a Frag of 64 keys: S = Q·Kᵀ of one K tile, and P.
type Scores = Frag[[8][4]float32]

// Col is one value per row of a Frag (lane l: rows l/4 and l/4+8 of its
// warp's 16).
type Col struct{ v [2]float32 }

// FullCol returns a Col of x.
func FullCol(x float32) Col { return Col{[2]float32{x, x}} }

// HeadDim is the columns of a Frag of R: the head dimension.
func HeadDim[R FragRegs]() int {
	var r R
	return 8 * len(r)
}

// Seq is one sequence of one head in a [tokens, heads, hd] tensor of
// varlen layout (cu holds the batch's token offsets).
type Seq[R FragRegs] struct{ base, stride, n int }

// HeadSeq returns sequence b of head h of a tensor of elems elements
// with heads heads of R's head dim, from the offsets cu. Offsets that
// are not ordered within the tokens are a device error (a kernel trap).
func HeadSeq[R FragRegs](cu []int32, b, h, heads, elems int) Seq[R] {
	hd := HeadDim[R]()
	s, e := int(cu[b]), int(cu[b+1])
	if s < 0 || e < s || e > elems/(heads*hd) {
		panic("ops.FlashAttention: cuSeqQ or cuSeqK is not an ordered list of offsets within the tokens")
	}
	return Seq[R]{base: s*heads*hd + h*hd, stride: heads * hd, n: e - s}
}

// Len is the tokens of the sequence.
func (s Seq[R]) Len() int { return s.n }

// SeqTile is a 64-row tile of a sequence staged in shared memory: rows
// off/ld … of s (ld = hd + FlashPad).
type SeqTile[T gpu.Elem, C MMA[T], R FragRegs] struct {
	s   []T
	off int
}

// HeadsAt is slot i of sm (64 rows of hd+FlashPad elements each), as Stage
// fills it.
func HeadsAt[C MMA[T], R FragRegs, T gpu.Elem](sm []T, i int) SeqTile[T, C, R] {
	return SeqTile[T, C, R]{sm, i * FlashRows * (HeadDim[R]() + FlashPad)}
}

// StageHeads issues the cp.async copies of rows 64·j … 64·j+63 of s, from v,
// into slot i of sm; rows past the sequence are zero-filled without
// reading v. The caller commits and waits (gpu.CpAsyncCommit, Wait) and
// synchronizes the block before a Dot reads the tile. 128 threads: a
// thread copies chunk tid%(hd/8) of rows tid/(hd/8), + step, … (16
// bytes each, hd/16 of them), one base plus a constant per copy.
func StageHeads[C MMA[T], R FragRegs, T gpu.Elem](t gpu.Thread, sm []T, i int, v In[T, C], s Seq[R], j int) SeqTile[T, C, R] {
	d := HeadsAt[C, R](sm, i)
	var r1 R
	hd := 8 * len(r1)
	cpr := hd / 8 // 16-byte chunks per row: 8 or 16
	step := 128 / cpr
	tid := t.ThreadIdx().X
	r0, cc := tid>>(3+hd/128), tid&(cpr-1)
	rows := s.n - j*FlashRows
	dst := d.off + r0*(hd+FlashPad) + 8*cc
	g := s.base + (j*FlashRows+r0)*s.stride + 8*cc
	//kern:unroll
	for it := range 8 {
		if it < hd/16 {
			if r0+it*step < rows {
				gpu.CpAsync(t, &sm[dst+it*step*(hd+FlashPad)], &v[g], 16)
			} else {
				gpu.CpAsyncZFill(t, &sm[dst+it*step*(hd+FlashPad)], &v[0], 16, 0)
			}
			g += step * s.stride
		}
	}
	return d
}

// QFrags is Q's A fragments for S = Q·Kᵀ: at head dim 128 in registers
// (loaded once), at 64 re-read from the staged tile per Dot, as the
// warp-level twin does (ptxas holds that kernel to 128 registers on
// sm_80, where 16 more would spill).
type QFrags[T gpu.Elem, C MMA[T], R FragRegs] struct {
	a    [8][4]uint32
	q    SeqTile[T, C, R]
	addr int
}

// Frags returns the calling lane's view of q as the A operand: lane l
// addresses row l%8 of 8×8 matrix l/8 (a[i]: rows 8(i%2)…, columns
// 8(i/2)…).
func (q SeqTile[T, C, R]) Frags(t gpu.Thread) QFrags[T, C, R] {
	var r0 R
	hd, l := 8*len(r0), t.Lane()
	mi, mj := l>>3, l&7
	f := QFrags[T, C, R]{q: q, addr: q.off + (t.Warp()*16+8*(mi&1)+mj)*(hd+FlashPad) + 8*(mi>>1)}
	//kern:unroll
	for kk := range 8 {
		if kk < hd/16 && hd > 64 {
			f.a[kk] = gpu.LdMatrixX4(t, &q.s[f.addr+16*kk])
		}
	}
	return f
}

// DotQK returns S = Q·Kᵀ for 64 keys: the warp's 16 query rows of q
// against k's 64 rows, hd/16 k-steps of 8 mma each.
func DotQK[T gpu.Elem, C MMA[T], R FragRegs](t gpu.Thread, q QFrags[T, C, R], k SeqTile[T, C, R]) Scores {
	var c C
	var s Scores
	var r0 R
	hd, l := 8*len(r0), t.Lane()
	mi, mj := l>>3, l&7
	// K as B (not transposed): matrix i = keys 8(i/2)…, dims 8(i%2)….
	ka := k.off + (8*(mi>>1)+mj)*(hd+FlashPad) + 8*(mi&1)
	//kern:unroll
	for kk := range 8 {
		if kk < hd/16 {
			a := q.a[kk]
			if hd == 64 {
				a = gpu.LdMatrixX4(t, &q.q.s[q.addr+16*kk])
			}
			//kern:unroll
			for np := range 4 {
				r := gpu.LdMatrixX4(t, &k.s[ka+16*np*(hd+FlashPad)+16*kk])
				s.v[2*np] = c.mma(t, a, [2]uint32{r[0], r[1]}, s.v[2*np])
				s.v[2*np+1] = c.mma(t, a, [2]uint32{r[2], r[3]}, s.v[2*np+1])
			}
		}
	}
	return s
}

// DotPV returns o + P·V: p (64 keys) packed to T in registers as the A
// operand, v's 64 rows read transposed (ldmatrix.trans) as B.
func DotPV[T gpu.Elem, C MMA[T], R FragRegs](t gpu.Thread, o Frag[R], p Scores, v SeqTile[T, C, R]) Frag[R] {
	var c C
	var r0 R
	hd, l := 8*len(r0), t.Lane()
	mi, mj := l>>3, l&7
	// V as B, transposed: matrix i = keys 8(i%2)…, dims 8(i/2)….
	va := v.off + (8*(mi&1)+mj)*(hd+FlashPad) + 8*(mi>>1)
	//kern:unroll
	for kk := range 4 {
		// P's A fragment for keys 16kk…: a[r] from n-tile 2kk, a[2+r]
		// from 2kk+1.
		var a [4]uint32
		//kern:unroll
		for h := range 2 {
			//kern:unroll
			for r := range 2 {
				x := p.v[2*kk+h]
				a[r+2*h] = c.pack(x[2*r], x[2*r+1])
			}
		}
		//kern:unroll
		for dp := range 8 {
			if dp < hd/16 {
				b := gpu.LdMatrixX4Trans(t, &v.s[va+16*kk*(hd+FlashPad)+16*dp])
				o.v[2*dp] = c.mma(t, a, [2]uint32{b[0], b[1]}, o.v[2*dp])
				o.v[2*dp+1] = c.mma(t, a, [2]uint32{b[2], b[3]}, o.v[2*dp+1])
			}
		}
	}
	return o
}

// MaskKeys sets to -Inf the scores of keys k0+c (c the column) at or
// past lk and, when causal, past row i's diagonal i + diag (i = q0 + the
// row in the block), i.e. masks the keys a query may not see. Only the
// tiles that reach either limit do any work.
func (s Frag[R]) MaskKeys(t gpu.Thread, q0, k0, lk, diag int, causal bool) Frag[R] {
	if n := 8 * len(s.v); k0+n <= lk && (!causal || k0+n-1 <= q0+diag) {
		return s
	}
	l := t.Lane()
	row, tig := q0+t.Warp()*16+l>>2, l&3
	var lim [2]int32
	//kern:unroll
	for r := range 2 {
		lr := lk
		if causal {
			lr = min(lk, row+8*r+diag+1)
		}
		lim[r] = int32(lr - k0 - 2*tig)
	}
	// Element e of v[j] is key k0 + 8j + 2·tig + e%2 of row e/2.
	//kern:unroll
	for j := range len(s.v) {
		//kern:unroll
		for e := range 4 {
			if int32(8*j+e%2) >= lim[e/2] {
				s.v[j][e] = NegInf()
			}
		}
	}
	return s
}

// RowMax returns the maximum of each row: the lane's 2·len(R) elements
// of it, then the quad's (shuffles over lanes l^1, l^2).
func (s Frag[R]) RowMax(t gpu.Thread) Col {
	var c Col
	//kern:unroll
	for r := range 2 {
		x := NegInf()
		//kern:unroll
		for j := range len(s.v) {
			x = gpu.Max(x, gpu.Max(s.v[j][2*r], s.v[j][2*r+1]))
		}
		x = gpu.Max(x, gpu.ShflXor(t, x, 1))
		c.v[r] = gpu.Max(x, gpu.ShflXor(t, x, 2))
	}
	return c
}

// LaneRowSums returns the lane's part of each row's sum (its 2·len(R)
// elements); QuadSum completes it. A running sum needs the quad's only
// once, at the end.
func (s Frag[R]) LaneRowSums() Col {
	var c Col
	//kern:unroll
	for r := range 2 {
		//kern:unroll
		for j := range len(s.v) {
			c.v[r] += s.v[j][2*r] + s.v[j][2*r+1]
		}
	}
	return c
}

// Exp2 returns 2^(x·scale - m) element-wise, m the row's value (one FFMA
// and one ex2.approx per element).
func (s Frag[R]) Exp2(scale float32, m Col) Frag[R] {
	//kern:unroll
	for j := range len(s.v) {
		//kern:unroll
		for e := range 4 {
			s.v[j][e] = gpu.Exp2(gpu.FMA(s.v[j][e], scale, -m.v[e/2]))
		}
	}
	return s
}

// MulRows returns s with each row multiplied by its value in c.
func (s Frag[R]) MulRows(c Col) Frag[R] {
	//kern:unroll
	for j := range len(s.v) {
		//kern:unroll
		for e := range 4 {
			s.v[j][e] *= c.v[e/2]
		}
	}
	return s
}

// Max returns the row-wise maximum of c and d.
func (c Col) Max(d Col) Col {
	return Col{[2]float32{gpu.Max(c.v[0], d.v[0]), gpu.Max(c.v[1], d.v[1])}}
}

// Mul returns c·d row-wise.
func (c Col) Mul(d Col) Col { return Col{[2]float32{c.v[0] * d.v[0], c.v[1] * d.v[1]}} }

// Add returns c+d row-wise.
func (c Col) Add(d Col) Col { return Col{[2]float32{c.v[0] + d.v[0], c.v[1] + d.v[1]}} }

// Shift returns c·scale, with 0 for a row at -Inf (a row with no key
// seen yet: 2^(-Inf·scale - 0) = 0, not NaN), the m of Exp2 for an
// online softmax whose running maximum is c.
func (c Col) Shift(scale float32) Col {
	//kern:unroll
	for r := range 2 {
		x := c.v[r] * scale
		if c.v[r] == NegInf() {
			x = 0
		}
		c.v[r] = x
	}
	return c
}

// Exp2 returns 2^(c·scale - m) row-wise (as Frag.Exp2).
func (c Col) Exp2(scale float32, m Col) Col {
	//kern:unroll
	for r := range 2 {
		c.v[r] = gpu.Exp2(gpu.FMA(c.v[r], scale, -m.v[r]))
	}
	return c
}

// QuadSum completes the row sums of LaneRowSums: the sum over the quad.
func (c Col) QuadSum(t gpu.Thread) Col {
	//kern:unroll
	for r := range 2 {
		c.v[r] += gpu.ShflXor(t, c.v[r], 1)
		c.v[r] += gpu.ShflXor(t, c.v[r], 2)
	}
	return c
}

// Inv returns 1/c row-wise, 0 where c is not > 0 (an empty row).
func (c Col) Inv() Col {
	//kern:unroll
	for r := range 2 {
		x := float32(0)
		if c.v[r] > 0 {
			x = 1 / c.v[r]
		}
		c.v[r] = x
	}
	return c
}

// Ln2 is ln 2, converting a base-2 log to a natural one.
const Ln2 = math.Ln2
