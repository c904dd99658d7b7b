// Package w4mm holds the W4A16 GEMM behind ops.MatmulInt4 for prefill
// (M > 16): 16-bit activations times int4 weights with group-128 float32
// scales on the tensor cores (mma.sync m16n8k16, f32 accumulation), the
// weights dequantized in registers straight into the mma B fragments.
// ops/internal/w4 holds the decode GEMV; this is a package of its own to
// keep each generated file far under a megabyte.
//
//	out[i,j] = Σ_g scales[j,g] · Σ_{k in group g} (nibble(j,k) - 8) · x[i,k]
//
// Shapes (row-major): x [M, K] In ∈ {float16, bfloat16}; packed [N, K/2]
// uint8, byte k of a row holding element 2k in its low nibble and 2k+1 in
// its high one, zero point 8 (ops.QuantizeInt4's format); scales
// [N, ceil(K/128)] float32; out [M, N] O ∈ {float32, In}. K a multiple
// of 32 (16-byte chunks of packed rows), any M and N.
//
// Block tile 64×128 (M×N), BK = 64, 4 warps side by side along N, each
// a 64×32 tile of C: MI×NI = 4×4 mma tiles of 16×8 per k16 step, so each
// dequantized B fragment feeds four MMAs. Four warps rather than eight
// because a warp holds two sets of accumulators (see Scales): about 210
// registers, which a 128-thread block may use (ptxas caps a 256-thread
// one at 128). Three cp.async stages, one barrier per k tile (the scheme
// of ops/internal/mm's v2):
//
//	x tile      [64 rows][64 halves]  row r, chunk c stored at c ^ (r&7)
//	packed tile [128 rows][32 bytes]  two chunks per row, as in memory
//
// A row of x is 8 chunks (one bank period of 128 bytes), so the XOR
// swizzle puts the 8 rows of one ldmatrix 8×8 matrix, and the 8 chunks a
// quarter warp copies, in 8 distinct bank groups. A packed row is 32
// bytes: each lane reads 8 bytes of one row (LDS.64), the 4 lanes of a
// group the same address (a broadcast), so a half warp touches 4 rows at
// the same offset, 4 distinct bank pairs. Global reads: each thread
// copies 4 chunks of x and 2 of packed per stage; two neighbouring
// threads copy one row's 32 packed bytes, one whole sector.
//
// Dequantization into fragments (gpu/mma.go's layout): lane (g, q) needs
// for n8 tile j and k16 step kk b[0] = W[n][16kk+2q .. +1] and b[1] =
// W[n][16kk+8+2q .. +1] with n = the tile's row g: the two nibbles of one
// packed byte each, bytes 8kk+q and 8kk+4+q of the tile row, which one
// LDS.64 per n8 tile and k16 step brings. A byte permute with a per-lane
// selector copies byte q of one of the two words into all four bytes, a
// LOP3 keeps the low nibble in the low lane and the high nibble (times 16)
// in the high lane, and one HFMA2 turns those 16-bit encodings into
// (n - 8)·2⁻⁹ (f16) or (n - 8)·2⁻⁶ (bf16), exactly (inCodec's doc): three
// instructions per B register, the power of two folded into the scales.
//
// Scales: a k tile lies inside one group (128 = 2 × BK), so the MMAs of a
// group accumulate into tmp, which is scaled in float32 and added into acc
// at the group's end: the products and sums are as exact as the bf16 GEMM
// of ops.Matmul, the scales applied once per group. A lane's 8 scales of
// a group (4 n8 tiles × 2 columns) are loaded at the group's first tile
// and used at its end, so their latency hides behind the MMAs.
//
// Edges: rows of x past M and rows of W past N are clamped to the last
// one (they only feed rows or columns of C that are not stored); chunks
// past K are zero-filled in x (nothing read) and in packed, so a partial
// last k tile multiplies zeros. The epilogue stores with a predicate per
// element. Versions: v1 only.
package w4mm

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen

import (
	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// Launch shape and limits, for ops.MatmulInt4.
const (
	BM      = 64  // rows of C per block
	BN      = 128 // columns of C per block
	Threads = 128
	Group   = 128 // elements per scale
	Chunk   = 32  // K must be a multiple
	Shared  = stages * (stageA*2 + stageB)
)

const (
	bk     = 64
	stages = 3
	warpsN = 4
	wm, wn = 64, 32
	aSlots = BM * bk / 8 / Threads // x chunks a thread copies per stage
	bSlots = BN * 2 / Threads      // packed chunks a thread copies per stage
	mi, ni = wm / 16, wn / 8
	stageA = BM * bk     // 16-bit elements of one x stage
	stageB = BN * bk / 2 // bytes of one packed stage
)

//kern:kernel block=256 nobounds
func w4mmF16F32(t gpu.Thread, out []float32, x []gpu.Half, packed []uint8, scales []float32, m, n, k int) {
	w4mm(f16in{}, f32c{}, t, gpu.DynShared[gpu.Half](t), gpu.DynShared[uint8](t), gpu.DynShared[uint32](t), out, x, packed, scales, m, n, k)
}

//kern:kernel block=256 nobounds
func w4mmF16F16(t gpu.Thread, out []gpu.Half, x []gpu.Half, packed []uint8, scales []float32, m, n, k int) {
	w4mm(f16in{}, f16c{}, t, gpu.DynShared[gpu.Half](t), gpu.DynShared[uint8](t), gpu.DynShared[uint32](t), out, x, packed, scales, m, n, k)
}

//kern:kernel block=256 nobounds
func w4mmBF16F32(t gpu.Thread, out []float32, x []gpu.BFloat16, packed []uint8, scales []float32, m, n, k int) {
	w4mm(bf16in{}, f32c{}, t, gpu.DynShared[gpu.BFloat16](t), gpu.DynShared[uint8](t), gpu.DynShared[uint32](t), out, x, packed, scales, m, n, k)
}

//kern:kernel block=256 nobounds
func w4mmBF16BF16(t gpu.Thread, out []gpu.BFloat16, x []gpu.BFloat16, packed []uint8, scales []float32, m, n, k int) {
	w4mm(bf16in{}, bf16c{}, t, gpu.DynShared[gpu.BFloat16](t), gpu.DynShared[uint8](t), gpu.DynShared[uint32](t), out, x, packed, scales, m, n, k)
}

// Kernels indexed [input: f16, bf16][output: f32, the input type].
var Kernels = [2][2]*kern.Kernel{
	{w4mmF16F32Kernel.Kernel(), w4mmF16F16Kernel.Kernel()},
	{w4mmBF16F32Kernel.Kernel(), w4mmBF16BF16Kernel.Kernel()},
}

func w4mm[A gpu.Elem, O any, CA inCodec, CO codec[O]](ca CA, co CO, t gpu.Thread, sa []A, sb []uint8, sw []uint32,
	out []O, x []A, packed []uint8, scales []float32, m, n, k int) {
	m0, n0 := t.BlockIdx().Y*BM, t.BlockIdx().X*BN
	wm0, wn0 := (t.Warp()/warpsN)*wm, (t.Warp()%warpsN)*wn
	tid, l := t.ThreadIdx().X, t.Lane()
	g, q := l>>2, l&3
	groups := (k + Group - 1) >> 7 // shifts: k ≥ 0, and a signed division is a call
	ktiles := int32((k + bk - 1) >> 6)
	k32, kb := int32(k), int32(k>>1) // elements of a row of x, bytes of a row of packed

	// This thread's copies, fixed for the K loop: x chunks (rows tid/8 +
	// 16i, chunk tid%8), packed chunks (rows tid/2 + 64i, chunk tid%2).
	ar, ac := tid>>3, tid&7
	aDst := int32(ar*bk + (ac^ar&7)*8)
	var aSrc [aSlots]int32
	//kern:unroll
	for i := range aSlots {
		aSrc[i] = int32(min(m0+ar+i*Threads/8, m-1)*k + ac*8)
	}
	br, bc := tid>>1, tid&1
	bDst := int32(stages*stageA*2 + br*32 + bc*16) // bytes: the packed stages follow x's
	var bSrc [bSlots]int32
	//kern:unroll
	for i := range bSlots {
		bSrc[i] = int32(min(n0+br+i*Threads/2, n-1))*kb + int32(bc*16)
	}

	// ldmatrix offsets of A (x) per k16 step: lane l addresses row l%8 of
	// matrix l/8; matrices 1, 3 are rows 8..15, 2, 3 the next k chunk.
	lr := (l>>3&1)<<3 | l&7
	var aOff [bk / 16]int32
	//kern:unroll
	for kk := range bk / 16 {
		aOff[kk] = int32((wm0+lr)*bk + ((2*kk+l>>4)^lr&7)*8)
	}
	// Packed words of this lane's W rows (n8 tile j, row g), in words of
	// the stage; and the byte permutes copying byte q of the first or the
	// second word of a k16 step into all four bytes (see inCodec).
	bOff := int32(stages*stageA/2 + (wn0+g)*8)
	sel0, sel1 := uint32(q*0x1111), uint32((q+4)*0x1111)

	aCol, bCol := int32(ac*8), int32(bc*32)
	full := k32 >> 6                       // k tiles wholly inside K (bk = 64)
	for s := int32(0); s < stages-1; s++ { // not unrolled: the edge copies are long
		if s < ktiles {
			w4mmIssue(t, sa, sb, x, packed, s, s, aDst, aSrc, bDst, bSrc, aCol, bCol, k32)
		}
		gpu.CpAsyncCommit(t)
	}
	// Scales: this lane's columns 2q, 2q+1 of each n8 tile, clamped to
	// the last column (32-bit offsets, like the copies').
	n1, groups32 := int32(n-1), int32(groups)
	col0 := int32(n0 + wn0 + 2*q)

	var acc, tmp [mi][ni][4]float32
	var sc [ni][2]float32
	rs, ws := int32(0), int32(stages-1) // stages read and written this iteration
	for kt := int32(0); kt < ktiles; kt++ {
		gpu.CpAsyncWait(t, stages-2)
		t.Sync()
		if nt := kt + stages - 1; nt < full {
			// The hot case: the whole tile lies inside K, nothing to mask.
			w4mmIssueFull(t, sa, sb, x, packed, nt, ws, aDst, aSrc, bDst, bSrc)
		} else if nt < ktiles {
			w4mmIssue(t, sa, sb, x, packed, nt, ws, aDst, aSrc, bDst, bSrc, aCol, bCol, k32)
		}
		gpu.CpAsyncCommit(t)
		if kt&1 == 1 || kt == ktiles-1 { // a group's last tile: its scales
			grp := kt >> 1
			//kern:unroll
			for j := range ni {
				c := col0 + int32(8*j)
				sc[j][0] = scales[min(c, n1)*groups32+grp] * ca.unit()
				sc[j][1] = scales[min(c+1, n1)*groups32+grp] * ca.unit()
			}
		}
		as := rs * stageA
		bs := bOff + rs*(stageB/4)
		//kern:unroll
		for kk := range bk / 16 {
			var fa [mi][4]uint32
			//kern:unroll
			for i := range mi {
				fa[i] = gpu.LdMatrixX4(t, &sa[as+aOff[kk]+int32(i*16*bk)])
			}
			//kern:unroll
			for j := range ni {
				w := gpu.Load2(sw, int(bs+int32(j*8*8+kk*2))) // bytes 8kk .. 8kk+7 of the row
				fb := [2]uint32{ca.dequant(gpu.Prmt(w[0], w[1], sel0)), ca.dequant(gpu.Prmt(w[0], w[1], sel1))}
				//kern:unroll
				for i := range mi {
					tmp[i][j] = ca.mma(t, fa[i], fb, tmp[i][j])
				}
			}
		}
		if kt&1 == 1 || kt == ktiles-1 { // a group's last tile: scale and add
			//kern:unroll
			for i := range mi {
				//kern:unroll
				for j := range ni {
					//kern:unroll
					for e := range 4 {
						acc[i][j][e] = gpu.FMA(tmp[i][j][e], sc[j][e&1], acc[i][j][e])
						tmp[i][j][e] = 0
					}
				}
			}
		}
		rs, ws = rs+1, ws+1
		if rs == stages {
			rs = 0
		}
		if ws == stages {
			ws = 0
		}
	}
	gpu.CpAsyncWait(t, 0)

	//kern:unroll
	for i := range mi {
		//kern:unroll
		for j := range ni {
			row := m0 + wm0 + 16*i + g
			col := n0 + wn0 + 8*j + 2*q
			w4mmStore(co, out, row, col, m, n, acc[i][j][0], acc[i][j][1])
			w4mmStore(co, out, row+8, col, m, n, acc[i][j][2], acc[i][j][3])
		}
	}
}

// w4mmIssue issues this thread's copies of k tile kt into stage st and
// leaves the commit to the caller: aSlots 16-byte chunks of x (rows
// Threads/8 apart, at aSrc, column aCol of the tile) and bSlots of packed
// (rows Threads/2 apart, at bSrc, byte bCol/2 of the tile). A chunk at or
// past K is zero-filled without a read (source size 0, masked address),
// so the copies have no branches.
func w4mmIssue[A gpu.Elem](t gpu.Thread, sa []A, sb []uint8, x []A, packed []uint8, kt, st, aDst int32, aSrc [aSlots]int32, bDst int32, bSrc [bSlots]int32, aCol, bCol, k int32) {
	kOff := kt * bk
	okA := (aCol + kOff - k) >> 31 // all ones while the chunk is inside K
	okB := (bCol + kOff - k) >> 31
	//kern:unroll
	for i := range aSlots {
		gpu.CpAsyncZFill(t, &sa[st*stageA+aDst+int32(i*Threads/8*bk)], &x[(aSrc[i]+kOff)&okA], 16, int(16&okA))
	}
	//kern:unroll
	for i := range bSlots {
		gpu.CpAsyncZFill(t, &sb[st*stageB+bDst+int32(i*Threads/2*32)], &packed[(bSrc[i]+kOff>>1)&okB], 16, int(16&okB))
	}
}

// w4mmIssueFull is w4mmIssue for a k tile wholly inside K: plain copies.
func w4mmIssueFull[A gpu.Elem](t gpu.Thread, sa []A, sb []uint8, x []A, packed []uint8, kt, st, aDst int32, aSrc [aSlots]int32, bDst int32, bSrc [bSlots]int32) {
	kOff := kt * bk
	//kern:unroll
	for i := range aSlots {
		gpu.CpAsync(t, &sa[st*stageA+aDst+int32(i*Threads/8*bk)], &x[uint32(aSrc[i]+kOff)], 16)
	}
	//kern:unroll
	for i := range bSlots {
		gpu.CpAsync(t, &sb[st*stageB+bDst+int32(i*Threads/2*32)], &packed[uint32(bSrc[i]+kOff>>1)], 16)
	}
}

// w4mmStore writes C[row][col], C[row][col+1] where they exist.
func w4mmStore[O any, CO codec[O]](co CO, out []O, row, col, m, n int, v0, v1 float32) {
	if row < m && col < n {
		out[row*n+col] = co.store(v0)
		if col+1 < n {
			out[row*n+col+1] = co.store(v1)
		}
	}
}

// inCodec is the activation type: its mma, and the dequantization of
// the packed byte replicated in every byte of t (one PRMT, see the
// header) into the B register (n₀ - 8, n₁ - 8)/unit, n₀ its low nibble
// and n₁ its high one.
//
// The mask keeps n₀ in bits 0..3 and n₁ in bits 20..23: as 16-bit floats
// the two lanes are the subnormal-or-first-binade encodings n₀ and 16·n₁
// (those encodings are integers times the smallest subnormal, linearly,
// across the subnormal/normal boundary), and one HFMA2 scales each lane
// by a power of two and subtracts 8, exactly: no SHF, no magic-number OR.
// PTX keeps subnormal f16 and bf16 operands of fma unless .ftz is given
// (PTX ISA §9.7.4.2), as the emulator and native mode do.
type inCodec interface {
	mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32
	dequant(t uint32) uint32
	unit() float32 // the B values' unit, folded into the scales
}

type f16in struct{}

func (f16in) mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return gpu.MMAF16(t, a, b, c)
}

// dequant: lanes n₀·2⁻²⁴ and 16·n₁·2⁻²⁴, times 2¹⁵ and 2¹¹, minus 2⁻⁶:
// (n - 8)·2⁻⁹, exact (normal or zero).
func (f16in) dequant(t uint32) uint32 {
	return uint32(gpu.FMA2(gpu.Half2(t&0x00f0000f), 0x68007800, 0xa400a400))
}

func (f16in) unit() float32 { return 0x1p9 }

type bf16in struct{}

func (bf16in) mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return gpu.MMABF16(t, a, b, c)
}

// dequant: lanes n₀·2⁻¹³³ and 16·n₁·2⁻¹³³ (the high lane's top bit is
// the exponent's lowest: still that integer times 2⁻¹³³), times 2¹²⁷ and
// 2¹²³, minus 2⁻³: (n - 8)·2⁻⁶, exact.
func (bf16in) dequant(t uint32) uint32 {
	return uint32(gpu.FMA2(gpu.BFloat162(t&0x00f0000f), 0x7d007f00, 0xbe00be00))
}

func (bf16in) unit() float32 { return 0x1p6 }

// Output codecs, as ops' (dtype.go).
type codec[T any] interface{ store(float32) T }

type f32c struct{}

func (f32c) store(v float32) float32 { return v }

type f16c struct{}

func (f16c) store(v float32) gpu.Half { return gpu.ToHalf(v) }

type bf16c struct{}

func (bf16c) store(v float32) gpu.BFloat16 { return gpu.ToBFloat16(v) }
