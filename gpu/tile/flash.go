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
//     for a k16 step (FlashAttention-2's observation), so Attn.PV packs P
//     to f16 or bf16 in registers, no shared memory;
//   - a Col holds one value per row of a Frag (lane l: rows g, g+8), the
//     result of a row reduction, which reads only the lane's quad (two
//     shuffles);
//   - a staged tile (Attn.Stage) is 64 rows × hd elements of a
//     [tokens, heads, hd] tensor in shared memory, rows padded to hd+8 elements
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
type Seq[R FragRegs] struct{ base, stride, n, end int }

// HeadSeq returns sequence b of head h of a tensor of elems elements
// with heads heads of R's head dim, from the offsets cu. Offsets that
// are not ordered within the tokens are a device error (a kernel trap).
func HeadSeq[R FragRegs](cu []int32, b, h, heads, elems int) Seq[R] {
	hd := HeadDim[R]()
	s, e := int(cu[b]), int(cu[b+1])
	if s < 0 || e < s || e > elems/(heads*hd) {
		panic("ops.FlashAttention: cuSeqQ or cuSeqK is not an ordered list of offsets within the tokens")
	}
	q := Seq[R]{base: s*heads*hd + h*hd, stride: heads * hd, n: e - s}
	q.end = q.base + (q.n-1)*q.stride + hd // ≤ 0 for an empty sequence
	return q
}

// Len is the tokens of the sequence.
func (s Seq[R]) Len() int { return s.n }

// A staged tile is slot i of a kernel's shared array sm: 64 rows of
// hd+FlashPad elements from element i·64·(hd+FlashPad). The functions
// take sm itself, not a value holding it, so that its loads stay
// shared-memory addresses (a slice kept in a struct is a generic pointer
// to the compiler: one conversion per ldmatrix).

// slot is the first element of slot i.
func slot[R FragRegs](i int) int {
	var r R
	return i * FlashRows * (8*len(r) + FlashPad)
}

// Attn is the calling lane's part of a block's attention tiles: its
// offsets in a staged slot (computed once, before the KV loop: ptxas
// does not hoist the lane and thread index reads out of a loop) and Q's
// fragments (LoadQ).
type Attn[T gpu.Elem, C MMA[T], R FragRegs] struct {
	q          [8][4]uint32
	qa, ka, va int // ldmatrix row of the lane in Q, K, V (see NewAttn)
	cp, r0, cc int // Stage: the thread's first shared element, row, chunk
	row, tig   int // the lane's rows row, row+8 of the block, its column pair
}

// NewAttn returns the calling lane's offsets (block of 128 threads).
// ldmatrix.x4: lane l addresses row l%8 of 8×8 matrix l/8; Q as A
// (matrix i: rows 8(i%2)…, columns 8(i/2)…), K as B (keys 8(i/2)…,
// dims 8(i%2)…), V as B transposed (keys 8(i%2)…, dims 8(i/2)…).
func NewAttn[T gpu.Elem, C MMA[T], R FragRegs](t gpu.Thread) Attn[T, C, R] {
	var r R
	hd, l, tid := 8*len(r), t.Lane(), t.ThreadIdx().X
	ld, mi, mj := hd+FlashPad, l>>3, l&7
	a := Attn[T, C, R]{
		qa: (t.Warp()*16+8*(mi&1)+mj)*ld + 8*(mi>>1),
		ka: (8*(mi>>1)+mj)*ld + 8*(mi&1),
		va: (8*(mi&1)+mj)*ld + 8*(mi>>1),
		r0: tid >> (3 + hd/128), cc: tid & (hd/8 - 1),
		row: t.Warp()*16 + l>>2, tig: l & 3,
	}
	a.cp = a.r0*ld + 8*a.cc
	return a
}

// Stage issues the cp.async copies of rows 64·j … 64·j+63 of s, from v,
// into slot i of sm; rows past the sequence are zero-filled without
// reading v. The caller commits and waits (gpu.CpAsyncCommit, Wait) and
// synchronizes the block before QK or PV reads the slot. Thread tid
// copies chunk tid%(hd/8) of rows tid/(hd/8), + step, … (16 bytes each,
// hd/16 of them), one base plus a constant per copy.
//
// With bounds checks, at head dim 64 v is checked once per call, not per
// copy: w is v cut after the sequence's last row at its head (s.end), so
// a chunk of a row in the sequence lies in w and one of a later row
// (stride ≥ hd) does not; `g < len(w)` is then both the row test and
// what proves w[g]. v[s.end-1], that row's last element, is checked
// first (a blank read: no load is left), so a v too short for s fails
// there, where a copy from it would have. At 128 the copies keep their
// row test and their own checks (stageRows): the one-check form moves
// ptxas's sm_90 allocation of a nobounds kernel from 172 registers to
// 220 (docs/performance.md).
func (a Attn[T, C, R]) Stage(t gpu.Thread, sm []T, i int, v In[T, C], s Seq[R], j int) {
	var r R
	hd := 8 * len(r)
	step := 128 / (hd / 8)
	dst := slot[R](i) + a.cp
	g := s.base + (j*FlashRows+a.r0)*s.stride + 8*a.cc
	if hd > 64 {
		a.stageRows(t, sm, dst, v, s, j, g)
		return
	}
	_ = v[max(s.end-1, 0)]
	w, p0 := v[:max(s.end, 0)], &v[0] // p0: the source of the zero fills
	//kern:unroll
	for it := range 8 {
		if it < hd/16 {
			if uint(g) < uint(len(w)) {
				gpu.CpAsync(t, &sm[dst+it*step*(hd+FlashPad)], &w[g], 16)
			} else {
				gpu.CpAsyncZFill(t, &sm[dst+it*step*(hd+FlashPad)], p0, 16, 0)
			}
			g += step * s.stride
		}
	}
}

// stageRows is Stage's copies under their row test, each from v[g]
// checked on its own.
func (a Attn[T, C, R]) stageRows(t gpu.Thread, sm []T, dst int, v In[T, C], s Seq[R], j, g int) {
	var r R
	hd := 8 * len(r)
	step := 128 / (hd / 8)
	rows := s.n - j*FlashRows
	//kern:unroll
	for it := range 8 {
		if it < hd/16 {
			if a.r0+it*step < rows {
				gpu.CpAsync(t, &sm[dst+it*step*(hd+FlashPad)], &v[g], 16)
			} else {
				gpu.CpAsyncZFill(t, &sm[dst+it*step*(hd+FlashPad)], &v[0], 16, 0)
			}
			g += step * s.stride
		}
	}
}

// LoadQ returns a with Q's A fragments from slot 0 of sm in registers
// at head dim 128 (loaded once); at 64 QK re-reads them per K tile, as
// the warp-level twin does (ptxas holds that kernel to 128 registers on
// sm_80, where 16 more would spill).
func (a Attn[T, C, R]) LoadQ(t gpu.Thread, sm []T) Attn[T, C, R] {
	var r R
	hd := 8 * len(r)
	//kern:unroll
	for kk := range 8 {
		if kk < hd/16 && hd > 64 {
			a.q[kk] = gpu.LdMatrixX4(t, &sm[a.qa+16*kk])
		}
	}
	return a
}

// QK returns S = Q·Kᵀ for 64 keys: the warp's 16 query rows (slot 0 of
// sm) against the 64 rows of K in slot k, hd/16 k-steps of 8 mma each.
func (a Attn[T, C, R]) QK(t gpu.Thread, sm []T, k int) Scores {
	var c C
	var s Scores
	var r R
	hd := 8 * len(r)
	ka := slot[R](k) + a.ka
	//kern:unroll
	for kk := range 8 {
		if kk < hd/16 {
			q := a.q[kk]
			if hd == 64 {
				q = gpu.LdMatrixX4(t, &sm[a.qa+16*kk])
			}
			//kern:unroll
			for np := range 4 {
				b := gpu.LdMatrixX4(t, &sm[ka+16*np*(hd+FlashPad)+16*kk])
				s.v[2*np] = c.mma(t, q, [2]uint32{b[0], b[1]}, s.v[2*np])
				s.v[2*np+1] = c.mma(t, q, [2]uint32{b[2], b[3]}, s.v[2*np+1])
			}
		}
	}
	return s
}

// PV returns o + P·V: p (64 keys) packed to T in registers as the A
// operand, the 64 rows of V in slot v of sm read transposed
// (ldmatrix.trans) as B.
func (a Attn[T, C, R]) PV(t gpu.Thread, o Frag[R], p Scores, sm []T, v int) Frag[R] {
	var c C
	hd := 8 * len(o.v)
	va := slot[R](v) + a.va
	//kern:unroll
	for kk := range 4 {
		// P's A fragment for keys 16kk…: f[r] from n-tile 2kk, f[2+r]
		// from 2kk+1.
		var f [4]uint32
		//kern:unroll
		for h := range 2 {
			//kern:unroll
			for r := range 2 {
				x := p.v[2*kk+h]
				f[r+2*h] = c.pack(x[2*r], x[2*r+1])
			}
		}
		//kern:unroll
		for dp := range 8 {
			if dp < hd/16 {
				b := gpu.LdMatrixX4Trans(t, &sm[va+16*kk*(hd+FlashPad)+16*dp])
				o.v[2*dp] = c.mma(t, f, [2]uint32{b[0], b[1]}, o.v[2*dp])
				o.v[2*dp+1] = c.mma(t, f, [2]uint32{b[2], b[3]}, o.v[2*dp+1])
			}
		}
	}
	return o
}

// Mask sets to -Inf the scores of keys k0+c (c the column) at or past
// lk and, when causal, past row i's diagonal i + diag (i = q0 + the row
// in the block): the keys a query may not see. Only the tiles that
// reach either limit do any work.
func (a Attn[T, C, R]) Mask(s Scores, q0, k0, lk, diag int, causal bool) Scores {
	if k0+FlashKeys <= lk && (!causal || k0+FlashKeys-1 <= q0+diag) {
		return s
	}
	var lim [2]int32
	//kern:unroll
	for r := range 2 {
		lr := lk
		if causal {
			lr = min(lk, q0+a.row+8*r+diag+1)
		}
		lim[r] = int32(lr - k0 - 2*a.tig)
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
