package mm

// The tensor-core GEMM main path (v2): C = A·B on mma.sync m16n8k16 with a
// three-stage cp.async pipeline and ldmatrix from XOR-swizzled shared
// memory. matmul.go has the math, the API and the config table.
//
// Block tile and warps. A block computes a BM×BN tile of C with
// warpsM×warpsN warps; each warp owns a WM×WN = 64×32 sub-tile, which is
// MI×NI = 4×4 mma tiles of 16×8, so a k16 step is 16 MMAs fed by 4
// ldmatrix.x4 for A and 2 for B. The warp grid is a launch parameter, so
// the configs of matmulConfigs (128×128 with 2×4 warps, 64×64 with 1×2)
// share this one body. K advances BK = 32 per pipeline stage.
//
// Shared memory, per stage (f16/bf16 elements, 16-byte chunks of 8):
//
//	A tile  [BM rows][BK=32]  row r, chunk c stored at chunk c ^ ((r>>1)&3)
//	B tile, W[N,K] given ("nt"):  [BN rows][BK=32], same swizzle as A
//	B tile, B[K,N] given ("nn"):  [BK=32 rows][BN], chunk c at c ^ (r&7)
//
// A 64-byte row holds 4 chunks, so 8 consecutive rows of one chunk column
// (what one ldmatrix 8×8 matrix reads) would fall in 2 bank groups of 16
// bytes; XOR-ing the chunk with bits 1..2 of the row spreads them over all
// 8, and rows r, r^1 already differ in their 64-byte half. The nn tile's
// rows are 128 or 256 bytes (one bank period or two), so its chunk is XOR-ed
// with the row's low 3 bits. Every ldmatrix phase and every cp.async store
// phase (a quarter warp, 8 consecutive chunks) then touches 8 distinct bank
// groups: no conflicts.
//
// Pipeline (stages = 3, one barrier per k tile): tiles 0 and 1 are in
// flight before the loop; at k tile kt the block waits for tile kt
// (cp.async.wait_group 1 leaves only tile kt+1 pending), syncs, issues the
// copy of tile kt+2 into the stage tile kt-1 used (every warp finished
// reading it before the barrier), and multiplies stage kt%3. A group is
// committed every iteration, empty or not, so the wait count stays 1.
//
// Copies and edges: each thread owns 2 (128×128) or 4 (64×64) chunk
// slots per operand and stage, all in one chunk column; their source
// offsets are computed once, before the K loop (tcSlot), so a copy in the
// loop is an add, an address and an LDGSTS, unrolled, without branches. A
// row of A or W past M or N, and a column of B[K,N] past N, is clamped
// to the last one: it only feeds rows or columns of C that are never
// stored. Only K needs zeros: the k tiles wholly inside K take the plain
// copies (tcIssueFull), and the last, partial one, as well as the
// prologue, copies with cp.async's zero-fill (source size 0, nothing
// read) under branch-free masks (tcIssue, tcIssueB), so the main loop has
// no predicates. K and, for nn, N must be multiples of 8 so that a chunk
// is all in or all out (matmul.go sends other shapes to v1).
// The epilogue stores with a predicate per element pair.

import (
	"math/bits"

	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/epilogue"
)

// Tile shape constants (see the header).
const (
	tcBK     = 32 // K per stage
	WarpM    = 64 // warp tile rows
	WarpN    = 32 // warp tile columns
	tcWM     = WarpM
	tcWN     = WarpN
	tcMI     = tcWM / 16
	tcNI     = tcWN / 8
	tcStages = 3
	tcMaxBM  = 128 // largest config: shared memory is sized for it
	tcMaxBN  = 128
	tcStageA = tcMaxBM * tcBK // elements of one A stage
	tcStageB = tcMaxBN * tcBK
	Shared   = tcStages * (tcStageA + tcStageB) * 2 // dynamic shared bytes (16-bit elements): 48 KiB
)

// The kernels, one per (input type, output type): c [m, n] output (or
// [m, n/2] for SwiGLU), a [m, k], b [n, k] (nn = 0) or [k, n] (nn = 1),
// bias [n] or empty, res like c or empty, act an Epi* activation, warpsN
// the warp grid's width (warpsM = warps/warpsN). The B layout is an
// argument rather than a kernel of its own because each kernel is about
// 180 KB of PTX; its branches are block-uniform and outside the MMAs.
// Shared memory is dynamic: Shared bytes at launch.

//kern:kernel block=256 nobounds
func TCF16F32(t gpu.Thread, c []float32, a, b []gpu.Half, bias, res []float32, m, n, k, nn, act, warpsN int) {
	tcMatmul(f16in{}, epilogue.F32{}, t, gpu.DynShared[gpu.Half](t), gpu.DynShared[float32](t), c, a, b, bias, res, m, n, k, nn, act, warpsN)
}

//kern:kernel block=256 nobounds
func TCF16F16(t gpu.Thread, c []gpu.Half, a, b []gpu.Half, bias, res []gpu.Half, m, n, k, nn, act, warpsN int) {
	tcMatmul(f16in{}, epilogue.Half{}, t, gpu.DynShared[gpu.Half](t), gpu.DynShared[float32](t), c, a, b, bias, res, m, n, k, nn, act, warpsN)
}

//kern:kernel block=256 nobounds
func TCBF16F32(t gpu.Thread, c []float32, a, b []gpu.BFloat16, bias, res []float32, m, n, k, nn, act, warpsN int) {
	tcMatmul(bf16in{}, epilogue.F32{}, t, gpu.DynShared[gpu.BFloat16](t), gpu.DynShared[float32](t), c, a, b, bias, res, m, n, k, nn, act, warpsN)
}

//kern:kernel block=256 nobounds
func TCBF16BF16(t gpu.Thread, c []gpu.BFloat16, a, b []gpu.BFloat16, bias, res []gpu.BFloat16, m, n, k, nn, act, warpsN int) {
	tcMatmul(bf16in{}, epilogue.BFloat16{}, t, gpu.DynShared[gpu.BFloat16](t), gpu.DynShared[float32](t), c, a, b, bias, res, m, n, k, nn, act, warpsN)
}

// tcMatmul is the body of every v2 kernel; see the file header.
func tcMatmul[A gpu.Elem, O any, CA inCodec[A], CO epilogue.Out[O]](ca CA, co CO, t gpu.Thread,
	sm []A, st []float32, c []O, a, b []A, bias, res []O, m, n, k, nn, act, warpsN int) {
	as, bs := sm[:tcStages*tcStageA], sm[tcStages*tcStageA:]
	warps := t.BlockDim().X / 32
	warpsM := warps / warpsN
	bm, bn := warpsM*tcWM, warpsN*tcWN
	m0, n0 := t.BlockIdx().Y*bm, t.BlockIdx().X*bn
	wm0, wn0 := (t.Warp()/warpsN)*tcWM, (t.Warp()%warpsN)*tcWN
	tid, nthr := t.ThreadIdx().X, t.BlockDim().X
	cprLog := bits.TrailingZeros32(uint32(bn / 8)) // nn tile: chunks per row = 1 << cprLog
	ktiles := int32((k + tcBK - 1) / tcBK)

	// Each lane's ldmatrix offsets within a stage, per k16 step kk and
	// (for B) n16 pair p, computed once: the main loop only adds
	// constants. Lane l addresses row l%8 of matrix l/8 of each x4.
	l := t.Lane()
	lr := (l>>3&1)<<3 | l&7 // A, nn B: matrices 1, 3 are rows 8..15
	lc := l >> 4            // A, nn B: matrices 2, 3 are the next k (A) or n (B) chunk
	var aOff [2]int
	var bOff [2][2]int
	//kern:unroll
	for kk := range 2 {
		aOff[kk] = (wm0+lr)*tcBK + swz4(lr, 2*kk+lc)*8 // swz4 needs only r's bits 1..2
		//kern:unroll
		for p := range 2 {
			if nn == 0 {
				// W rows: matrices 2, 3 are the second n8 tile, 1, 3 the second k chunk.
				lb := (l>>4)<<3 | l&7
				bOff[kk][p] = (wn0+p*16+lb)*tcBK + swz4(lb, 2*kk+(l>>3&1))*8
			} else {
				bOff[kk][p] = (kk*16+lr)*bn + swz8(l, wn0>>3+2*p+lc)*8
			}
		}
	}

	// Each thread's copies of a stage, fixed for the whole K loop (see
	// tcSlot): cpt slots per operand at rows r, r+step, … of the tile, all
	// in one chunk column, so they share the swizzle and their shared
	// offsets differ by a constant.
	cpt := int32(bm * 4 / nthr) // = bn·4/nthr for both configs (a test in ops checks)
	aR, aCh, aStep := tid>>2, tid&3, nthr>>2
	aDst := int32(aR*tcBK + swz4(aR, aCh)*8)
	bR, bCh, bStep, bLd := aR, aCh, aStep, tcBK
	bDst := aDst
	if nn != 0 {
		bR, bCh, bStep, bLd = tid>>cprLog, tid&(1<<cprLog-1), nthr>>cprLog, bn
		bDst = int32(bR*bn + swz8(bR, bCh)*8)
	}
	var aSrc, bSrc, bRow [tcSlots]int32
	//kern:unroll
	for s := range tcSlots {
		aSrc[s] = tcSlot(m0+aR+s*aStep, m, k, aCh*8)
		if nn == 0 {
			bSrc[s] = tcSlot(n0+bR+s*bStep, n, k, bCh*8)
		} else {
			// B[K,N]: the rows are k (checked per tile), the column is
			// clamped like tcSlot's rows.
			bRow[s] = int32(bR + s*bStep)
			bSrc[s] = bRow[s]*int32(n) + int32(min(n0+bCh*8, n-8))
		}
	}
	aDstep, bDstep := int32(aStep*tcBK), int32(bStep*bLd)
	k32, n32, aCol := int32(k), int32(n), int32(aCh*8)
	full := k32 / tcBK // k tiles wholly inside K
	bKs := int32(1)    // B elements per k: 1 in W[N,K], n in B[K,N]
	if nn != 0 {
		bKs = n32
	}

	for s := int32(0); s < tcStages-1; s++ { // not unrolled: the edge copies are long
		if s < ktiles {
			kOff := s * tcBK
			ok := (aCol + kOff - k32) >> 31 // all ones while the chunk's k < K
			tcIssue(t, as[s*tcStageA:], a, aDst, aDstep, aSrc, kOff, ok, cpt)
			tcIssueB(t, nn, bs[s*tcStageB:], b, bDst, bDstep, bSrc, bRow, kOff, ok, k32, n32, cpt)
		}
		gpu.CpAsyncCommit(t)
	}

	trans := nn != 0
	var acc [tcMI][tcNI][4]float32
	rs, ws := int32(0), int32(tcStages-1) // stages read and written this iteration
	for kt := int32(0); kt < ktiles; kt++ {
		gpu.CpAsyncWait(t, tcStages-2)
		t.Sync()
		if nt := kt + tcStages - 1; nt < full {
			// The hot case: the whole tile lies inside K, nothing to mask.
			kOff := nt * tcBK
			tcIssueFull(t, as[ws*tcStageA:], a, aDst, aDstep, aSrc, kOff, cpt)
			tcIssueFull(t, bs[ws*tcStageB:], b, bDst, bDstep, bSrc, kOff*bKs, cpt)
		} else if nt < ktiles {
			kOff := nt * tcBK
			ok := (aCol + kOff - k32) >> 31
			tcIssue(t, as[ws*tcStageA:], a, aDst, aDstep, aSrc, kOff, ok, cpt)
			tcIssueB(t, nn, bs[ws*tcStageB:], b, bDst, bDstep, bSrc, bRow, kOff, ok, k32, n32, cpt)
		}
		gpu.CpAsyncCommit(t)
		sa, sb := as[rs*tcStageA:], bs[rs*tcStageB:]
		//kern:unroll
		for kk := range tcBK / 16 {
			var fa [tcMI][4]uint32
			//kern:unroll
			for i := range tcMI {
				fa[i] = gpu.LdMatrixX4(t, &sa[aOff[kk]+i*16*tcBK])
			}
			var fb [tcNI][2]uint32
			//kern:unroll
			for p := range tcNI / 2 {
				f := fragB(t, trans, sb, bOff[kk][p])
				fb[2*p] = [2]uint32{f[0], f[1]}
				fb[2*p+1] = [2]uint32{f[2], f[3]}
			}
			//kern:unroll
			for i := range tcMI {
				//kern:unroll
				for j := range tcNI {
					acc[i][j] = ca.mma(t, fa[i], fb[j], acc[i][j])
				}
			}
		}
		rs, ws = rs+1, ws+1
		if rs == tcStages {
			rs = 0
		}
		if ws == tcStages {
			ws = 0
		}
	}
	gpu.CpAsyncWait(t, 0)

	t.Sync() // every warp is done with the stages: reuse them as st
	tcEpilogue(co, t, st[t.Warp()*tcEpiWarp:], acc, c, bias, res, m0+wm0, n0+wn0, m, n, act)
}

// The epilogue stages a warp's accumulators through shared memory (the
// pipeline's, free after the main loop) in two rounds of 32×32 float32,
// row stride tcEpiLd, so that the bias, activation and residual code runs
// in one loop rather than once per fragment register, and so that the
// stores to C are whole rows of 32 consecutive elements.
const (
	tcEpiLd   = 40 // words per staged row: 64-bit fragment stores of a half warp hit 32 distinct banks
	tcEpiWarp = 32 * tcEpiLd
)

// tcEpilogue writes the warp tile at (wr, wc) of C from acc.
func tcEpilogue[O any, CO epilogue.Out[O]](co CO, t gpu.Thread, st []float32, acc [tcMI][tcNI][4]float32, c, bias, res []O, wr, wc, m, n, act int) {
	l := t.Lane()
	g, q := l>>2, l&3
	//kern:unroll
	for half := range 2 {
		//kern:unroll
		for i := range tcMI / 2 {
			//kern:unroll
			for j := range tcNI {
				x := acc[half*tcMI/2+i][j]
				r, col := i*16+g, j*8+2*q
				gpu.Store2(st, r*tcEpiLd+col, [2]float32{x[0], x[1]})
				gpu.Store2(st, (r+8)*tcEpiLd+col, [2]float32{x[2], x[3]})
			}
		}
		t.SyncWarp()
		row0 := wr + half*32
		if act == epilogue.SwiGLU {
			// lane l%16 finishes pair l%16 of row r + l/16
			for r := 0; r < 32; r += 2 {
				p := gpu.Load2(st, (r+l>>4)*tcEpiLd+2*(l&15))
				epilogue.Pair(co, c, bias, res, row0+r+l>>4, wc+2*(l&15), m, n, act, p[0], p[1])
			}
		} else {
			for r := range 32 {
				epilogue.One(co, c, bias, res, row0+r, wc+l, m, n, act, st[r*tcEpiLd+l])
			}
		}
		t.SyncWarp()
	}
}

// swz4 is the stored chunk of chunk ch of row r in a 4-chunk (64-byte) row.
func swz4(r, ch int) int { return ch ^ (r >> 1 & 3) }

// tcSlots is the most copies a thread makes of one operand per stage:
// 4 in the 64×64 config (64 threads for 256 chunks), 2 in the 128×128.
const tcSlots = 4

// tcSlot is the element offset of a copy slot's chunk at k = 0: row
// (of A or W) times ld plus col. A row at or past rowLim is clamped to
// the last row: what it loads lands only in rows of C that are not
// stored, and reading a valid row instead of zero-filling takes the row
// predicate out of the K loop. Only the K edge needs the zero-fill.
//
// The arithmetic is int32 (ops.Matmul keeps every matrix under 2³¹
// elements): Go's int would make each add a 64-bit pair.
func tcSlot(row, rowLim, ld, col int) int32 {
	return int32(min(row, rowLim-1)*ld + col)
}

// tcIssue issues one thread's cp.async copies of an A or W tile: slot i
// (i < cpt) copies the chunk at src[i]+kOff into s[dst + i·dstep], or
// zero-fills it (nothing read) where ok is 0 rather than all ones. The
// straight-line masks keep the copies free of branches.
func tcIssue[A gpu.Elem](t gpu.Thread, s, g []A, dst, dstep int32, src [tcSlots]int32, kOff, ok, cpt int32) {
	size := int(16 & ok)
	//kern:unroll
	for i := range tcSlots {
		if i < 2 || cpt > 2 {
			gpu.CpAsyncZFill(t, &s[dst+int32(i)*dstep], &g[(src[i]+kOff)&ok], 16, size)
		}
	}
}

// tcIssueFull issues one thread's copies of a tile that lies wholly
// inside K (an A, W or B[K,N] tile; a row past M or N is clamped by
// tcSlot, and for B[K,N] every k row is in range): slot i copies the
// chunk at src[i]+off into s[dst + i·dstep].
func tcIssueFull[A gpu.Elem](t gpu.Thread, s, g []A, dst, dstep int32, src [tcSlots]int32, off, cpt int32) {
	//kern:unroll
	for i := range tcSlots {
		if i < 2 || cpt > 2 {
			gpu.CpAsync(t, &s[dst+int32(i)*dstep], &g[uint32(src[i]+off)], 16)
		}
	}
}

// tcIssueB issues one thread's copies of the B tile at k offset kOff:
// as A's for W[N,K] (nn = 0); for B[K,N] (nn = 1) the tile's rows are k,
// so slot i reads row kOff+row[i] of B, zero-filled past K.
func tcIssueB[A gpu.Elem](t gpu.Thread, nn int, s, b []A, dst, dstep int32, src, row [tcSlots]int32, kOff, ok, k, n, cpt int32) {
	if nn == 0 {
		tcIssue(t, s, b, dst, dstep, src, kOff, ok, cpt)
		return
	}
	rem := k - kOff
	//kern:unroll
	for i := range tcSlots {
		if i < 2 || cpt > 2 {
			in := (row[i] - rem) >> 31 // all ones while the row is < K
			gpu.CpAsyncZFill(t, &s[dst+int32(i)*dstep], &b[(src[i]+kOff*n)&in], 16, int(16&in))
		}
	}
}

// fragB returns the fragments of two n8 tiles of the stage from a lane's
// offset (computed in tcMatmul): b[0], b[1] of the first tile, then of the
// second.
//
// !trans (nn = 0), B given as W[N,K] row-major: the tile is bn rows of 32, stored as
// A's, and a non-transposed ldmatrix.x4 reads the fragments (W's rows are
// B's columns, the layout mma wants for B). Matrix l/8 is rows n0w +
// 8·(l/16) (which n8 tile), k chunk 2kk + l/8%2 (which half of k16).
//
// trans (nn = 1), B given as B[K,N] row-major: the tile is 32 rows of bn, and
// ldmatrix.x4.trans turns its k-major 8×8 matrices into fragments. Matrix
// l/8 is k rows 16kk + 8·(l/8%2), n chunk n0w/8 + l/16.
func fragB[A gpu.Elem](t gpu.Thread, trans bool, sb []A, off int) [4]uint32 {
	if !trans {
		return gpu.LdMatrixX4(t, &sb[off])
	}
	return gpu.LdMatrixX4Trans(t, &sb[off])
}

// swz8 is the stored chunk of chunk ch of row r in a row of ≥ 8 chunks.
func swz8(r, ch int) int { return ch ^ (r & 7) }

// inCodec is an mma input type: f16in (gpu.Half) or bf16in (BFloat16).
type inCodec[A any] interface {
	mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32
	bits(x A) uint32
	load(x A) float32
}

type f16in struct{}

func (f16in) mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return gpu.MMAF16(t, a, b, c)
}
func (f16in) bits(x gpu.Half) uint32  { return uint32(x) }
func (f16in) load(x gpu.Half) float32 { return x.Float32() }

type bf16in struct{}

func (bf16in) mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return gpu.MMABF16(t, a, b, c)
}
func (bf16in) bits(x gpu.BFloat16) uint32  { return uint32(x) }
func (bf16in) load(x gpu.BFloat16) float32 { return x.Float32() }
