package w4

// Version v2 of the W4A16 GEMV: the same product on the tensor cores.
// mma.sync m16n8k16 computes outᵀ = W·xᵀ a 16×8 tile at a time: A is 16
// rows of W (the nibbles, dequantized in registers), B is xᵀ (up to 8 rows
// of x as its 8 columns), D is out[m][n] transposed, float32. With M ≤ 8
// most of B is padding, but the tensor core does the multiply-adds that
// v1 spends two instructions per weight on, so what is left per weight is
// the dequantization (a PRMT, a LOP3 and an HFMA2 per pair) and the sums
// are float32 for both input types.
//
// Block: 4 warps on the same 16 rows of W, split over K: warp w takes the
// groups (k128) w, w+4, w+8, …, and the four partial sums meet in shared
// memory at the end. Each warp pipelines its own groups through 3
// cp.async stages (one warp barrier per group, not a block barrier):
//
//	stage: W [16 rows][64 bytes] (one group of packed nibbles)
//	       x [xr rows][256 bytes] (one group of xr ≤ 8 rows of x)
//
// The mma k order is free (a permutation of k applied to A and B alike
// leaves the sum unchanged), so lane (g, q) takes, in each group, the
// 32 elements 32q..32q+31 of its rows: W bytes 16q..16q+15 of rows g
// and g+8 (two LDS.128) and x elements 32q.. of row g (four LDS.128).
// Its k16 step s uses elements 32q+4s .. 32q+4s+3 as the mma's columns
// 2q, 2q+1, 2q+8, 2q+9: the x words are the B registers as loaded, and
// the W bytes 16q+2s, 16q+2s+1 of rows g and g+8 are the four A
// registers, each a byte's two nibbles (see the dequantization in
// ops/internal/w4mm). Global reads: a row's group of packed weights is
// 64 bytes, copied by 4 lanes as 16-byte chunks; a group of a row of x
// 256 bytes, 16 chunks: whole sectors.
//
// Bank conflicts: a W read's quarter warp is rows g, g+1 (64 bytes apart)
// at 4 chunks, 8 distinct bank groups. x rows are 256 bytes, a multiple
// of the bank period, so lane (g, q) reading part p (16 bytes) of its 64
// would collide; the copies store part p of chunk group q of row r at
// part (p + q/2 + 2(r%2)) % 4, which puts the 8 lanes of a quarter warp
// in 8 distinct bank groups, and the readers use the same formula.
//
// Scales: a group is one scale per row, so a warp's k16 steps of a group
// accumulate in tmp, and at its end acc += tmp · scale. The block's
// scales (16 rows × ceil(K/128), contiguous in memory) are loaded once,
// coalesced, into shared memory with an odd row stride (no conflicts).
// M > 8 runs the whole pipeline once per 8 rows of x.

import (
	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// Launch shape and limits of v2, for ops.MatmulInt4.
const (
	TCRows    = 16  // rows of W per block
	TCThreads = 128 // 4 warps
	TCMaxM    = 16  // M it is meant for (any M works, 8 rows per pass)
)

const (
	tcWarps  = TCThreads / 32
	tcStages = 3
	tcWBytes = TCRows * 64 // packed bytes of a group of 16 rows
	tcXRows  = 8           // rows of x per pass
)

// TCShared is the dynamic shared memory of a launch: the stages (sized
// for the rows of x of a pass) and the scales. TCMaxGroups bounds it.
func TCShared(m, k int) int {
	return tcWarps*tcStages*tcStage(min(m, tcXRows)) + 4*TCRows*tcScaleLd(k)
}

// TCMaxGroups is the most groups (K/128) v2 takes: the scales must fit
// beside the stages in 48 KiB.
const TCMaxGroups = (48*1024-tcWarps*tcStages*(tcWBytes+tcXRows*256))/(4*TCRows) - 1

func tcStage(xr int) int { return tcWBytes + xr*256 }

// tcScaleLd is the row stride of the staged scales: the group count made
// odd, so that 8 rows read at one group hit 8 banks.
func tcScaleLd(k int) int { return (k+Group-1)>>7 | 1 }

//kern:kernel block=128 nobounds
func w4tcF16F32(t gpu.Thread, out []float32, x []gpu.Half, packed []uint8, scales []float32, m, n, k int) {
	w4tc(f16g{}, f32c{}, t, gpu.DynShared[gpu.Half](t), gpu.DynShared[uint8](t), gpu.DynShared[uint32](t), gpu.DynShared[float32](t), out, x, packed, scales, m, n, k)
}

//kern:kernel block=128 nobounds
func w4tcF16F16(t gpu.Thread, out []gpu.Half, x []gpu.Half, packed []uint8, scales []float32, m, n, k int) {
	w4tc(f16g{}, f16c{}, t, gpu.DynShared[gpu.Half](t), gpu.DynShared[uint8](t), gpu.DynShared[uint32](t), gpu.DynShared[float32](t), out, x, packed, scales, m, n, k)
}

//kern:kernel block=128 nobounds
func w4tcBF16F32(t gpu.Thread, out []float32, x []gpu.BFloat16, packed []uint8, scales []float32, m, n, k int) {
	w4tc(bf16g{}, f32c{}, t, gpu.DynShared[gpu.BFloat16](t), gpu.DynShared[uint8](t), gpu.DynShared[uint32](t), gpu.DynShared[float32](t), out, x, packed, scales, m, n, k)
}

//kern:kernel block=128 nobounds
func w4tcBF16BF16(t gpu.Thread, out []gpu.BFloat16, x []gpu.BFloat16, packed []uint8, scales []float32, m, n, k int) {
	w4tc(bf16g{}, bf16c{}, t, gpu.DynShared[gpu.BFloat16](t), gpu.DynShared[uint8](t), gpu.DynShared[uint32](t), gpu.DynShared[float32](t), out, x, packed, scales, m, n, k)
}

// TCKernels are v2's kernels, indexed as Kernels.
var TCKernels = [2][2]*kern.Kernel{
	{w4tcF16F32Kernel.Kernel(), w4tcF16F16Kernel.Kernel()},
	{w4tcBF16F32Kernel.Kernel(), w4tcBF16BF16Kernel.Kernel()},
}

func w4tc[A gpu.Elem, O any, CA tcCodec, CO codec[O]](ca CA, co CO, t gpu.Thread, sx []A, sb []uint8, sw []uint32, sf []float32,
	out []O, x []A, packed []uint8, scales []float32, m, n, k int) {
	n0 := t.BlockIdx().X * TCRows
	l, wp := t.Lane(), t.Warp()
	g, q := l>>2, l&3
	groups := (k + Group - 1) >> 7 // shifts: k ≥ 0
	sld := groups | 1
	k32, kb := int32(k), int32(k>>1)

	// The block's scales, rows n0.. (those past N read as 0), after the
	// stages of every warp.
	xr0 := min(m, tcXRows)
	stage := int32(tcStage(xr0))
	sfBase := tcWarps * tcStages * int(stage) / 4 // in words
	rows := min(TCRows, n-n0)
	for r := wp; r < TCRows; r += tcWarps { // a warp per row, lanes along it
		for c := l; c < groups; c += 32 {
			v := float32(0)
			if r < rows {
				v = scales[(n0+r)*groups+c] * ca.unit()
			}
			sf[sfBase+r*sld+c] = v
		}
	}
	t.Sync()

	// This lane's copy slots, as offsets at group 0: W rows l/4 and
	// l/4+8, chunk l%4 of the group; x chunk l%16 of rows l/16, l/16+2, …
	// below xr (nx of them), each stored at its swizzled place.
	wch := l & 3
	wSrc := [2]int32{int32(min(n0+l>>2, n-1))*kb + int32(wch*16), int32(min(n0+l>>2+8, n-1))*kb + int32(wch*16)}
	wDst := int32((l>>2)*64 + wch*16)
	wK := int32(wch * 32) // the W chunk's first element in a group
	xc := l & 15
	xK := int32(xc * 8)                    // the x chunk's first element in a group
	myStages := int32(wp*tcStages) * stage // this warp's stages, bytes

	for mb := 0; mb < m; mb += tcXRows {
		xr := min(m-mb, tcXRows)
		nx := int32((xr - l>>4 + 1) >> 1)
		var xSrc, xDst [tcXRows / 2]int32
		//kern:unroll
		for i := range tcXRows / 2 {
			r := l>>4 + 2*i
			xSrc[i] = int32(min(mb+r, m-1)*k) + xK
			xDst[i] = int32(tcWBytes + r*256 + 64*(xc>>2) + 16*((xc&3+xc>>3+2*(r&1))&3))
		}
		// The group steps of this warp: groups wp, wp+4, …
		steps := int32((groups - wp + tcWarps - 1) / tcWarps)
		//kern:unroll
		for s := range tcStages - 1 {
			if int32(s) < steps {
				w4tcIssue(t, sx, sb, x, packed, myStages+int32(s)*stage, int32(wp+s*tcWarps), wSrc, wDst, wK, xSrc, xDst, xK, nx, k32)
			} else {
				gpu.CpAsyncCommit(t)
			}
		}
		// ldmatrix-free reads: W words of rows g, g+8 and x row g (clamped
		// to the rows of this pass, which only feeds unstored columns).
		xg := min(g, xr-1)
		var xOff [4]int32 // in words, like every read offset below
		//kern:unroll
		for p := range 4 {
			xOff[p] = int32(tcWBytes/4 + xg*64 + 16*q + 4*((p+q>>1+2*(xg&1))&3))
		}
		waOff, wbOff := int32(g*16+4*q), int32((g+8)*16+4*q)
		var acc [4]float32
		rs, ws := int32(0), int32(tcStages-1) // stages read and refilled
		for st := int32(0); st < steps; st++ {
			gpu.CpAsyncWait(t, tcStages-2)
			// One warp barrier: the chunks other lanes copied have landed,
			// and every lane is done reading the stage refilled next (the
			// previous step's).
			t.SyncWarp()
			if nt := st + tcStages - 1; nt < steps {
				w4tcIssue(t, sx, sb, x, packed, myStages+ws*stage, int32(wp)+nt*tcWarps, wSrc, wDst, wK, xSrc, xDst, xK, nx, k32)
			} else {
				gpu.CpAsyncCommit(t) // an empty group keeps the wait count
			}
			base := (myStages + rs*stage) >> 2 // in words
			wa := gpu.Load4(sw, int(base+waOff))
			wb := gpu.Load4(sw, int(base+wbOff))
			var tmp [4]float32
			//kern:unroll
			for p := range 4 {
				xs := gpu.Load4(sw, int(base+xOff[p]))
				//kern:unroll
				for h := range 2 {
					sel0, sel1 := uint32((2*h)*0x1111), uint32((2*h+1)*0x1111)
					a := [4]uint32{
						ca.frag(gpu.Prmt(wa[p], 0, sel0)), ca.frag(gpu.Prmt(wb[p], 0, sel0)),
						ca.frag(gpu.Prmt(wa[p], 0, sel1)), ca.frag(gpu.Prmt(wb[p], 0, sel1)),
					}
					tmp = ca.mma(t, a, [2]uint32{xs[2*h], xs[2*h+1]}, tmp)
				}
			}
			grp := wp + int(st)*tcWarps
			s0, s1 := sf[sfBase+g*sld+grp], sf[sfBase+(g+8)*sld+grp]
			acc = [4]float32{gpu.FMA(tmp[0], s0, acc[0]), gpu.FMA(tmp[1], s0, acc[1]), gpu.FMA(tmp[2], s1, acc[2]), gpu.FMA(tmp[3], s1, acc[3])}
			rs, ws = rs+1, ws+1
			if rs == tcStages {
				rs = 0
			}
			if ws == tcStages {
				ws = 0
			}
		}
		gpu.CpAsyncWait(t, 0)

		// The four warps' sums meet in the first warp's stage memory, then
		// warp 0 stores: lane (g, q) holds out[mb+2q][n0+g], out[mb+2q+1][n0+g]
		// and the same for row n0+g+8.
		t.Sync() // every warp is done with its stages
		//kern:unroll
		for e := range 4 {
			sf[(wp*4+e)*32+l] = acc[e]
		}
		t.Sync()
		if wp == 0 {
			//kern:unroll
			for e := range 4 {
				v := sf[e*32+l]
				//kern:unroll
				for w := 1; w < tcWarps; w++ {
					v += sf[(w*4+e)*32+l]
				}
				row, col := mb+2*q+e&1, n0+g+8*(e>>1)
				if row < m && col < n {
					out[row*n+col] = co.store(v)
				}
			}
		}
		t.Sync() // the sums are read before the next pass's copies land
	}
}

// w4tcIssue copies group grp into the stage at byte dst and commits: the
// lane's two W chunks and its nx chunks of x (offsets at group 0 in wSrc,
// xSrc, places in the stage in wDst, xDst; wK, xK the chunks' first
// element in a group), each zero-filled without a read past K (K is a
// multiple of 32, so a chunk is all in or all out).
func w4tcIssue[A gpu.Elem](t gpu.Thread, sx []A, sb []uint8, x []A, packed []uint8, dst, grp int32, wSrc [2]int32, wDst, wK int32, xSrc, xDst [tcXRows / 2]int32, xK, nx, k int32) {
	if g0 := grp * Group; g0+Group <= k { // the hot case: the whole group lies inside K
		w4tcIssueFull(t, sx, sb, x, packed, dst, grp, wSrc, wDst, xSrc, xDst, nx)
		return
	}
	g0 := grp * Group
	okW := (g0 + wK - k) >> 31 // all ones while inside K
	gpu.CpAsyncZFill(t, &sb[dst+wDst], &packed[(wSrc[0]+grp*64)&okW], 16, int(16&okW))
	gpu.CpAsyncZFill(t, &sb[dst+wDst+8*64], &packed[(wSrc[1]+grp*64)&okW], 16, int(16&okW))
	okX := (g0 + xK - k) >> 31
	//kern:unroll
	for i := range tcXRows / 2 {
		if int32(i) < nx {
			gpu.CpAsyncZFill(t, &sx[(dst+xDst[i])>>1], &x[(xSrc[i]+g0)&okX], 16, int(16&okX))
		}
	}
	gpu.CpAsyncCommit(t)
}

// w4tcIssueFull is w4tcIssue for a group wholly inside K: plain copies,
// 32-bit offsets zero-extended (they are non-negative).
func w4tcIssueFull[A gpu.Elem](t gpu.Thread, sx []A, sb []uint8, x []A, packed []uint8, dst, grp int32, wSrc [2]int32, wDst int32, xSrc, xDst [tcXRows / 2]int32, nx int32) {
	g0 := grp * Group
	gpu.CpAsync(t, &sb[dst+wDst], &packed[uint32(wSrc[0]+grp*64)], 16)
	gpu.CpAsync(t, &sb[dst+wDst+8*64], &packed[uint32(wSrc[1]+grp*64)], 16)
	//kern:unroll
	for i := range tcXRows / 2 {
		if int32(i) < nx {
			gpu.CpAsync(t, &sx[uint32(dst+xDst[i])>>1], &x[uint32(xSrc[i]+g0)], 16)
		}
	}
	gpu.CpAsyncCommit(t)
}

// tcCodec is v2's view of the activation type: its mma, the
// dequantization of a packed byte replicated in every byte of t into an A
// register (n₀ - 8, n₁ - 8)/unit, and that unit (folded into the scales).
// The same bit trick as ops/internal/w4mm's inCodec.
type tcCodec interface {
	mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32
	frag(t uint32) uint32
	unit() float32
}

func (f16g) mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return gpu.MMAF16(t, a, b, c)
}

// frag: the lanes n₀·2⁻²⁴ and 16·n₁·2⁻²⁴ (subnormal encodings), times 2¹⁵
// and 2¹¹, minus 2⁻⁶: (n - 8)·2⁻⁹, exact.
func (f16g) frag(t uint32) uint32 {
	return uint32(gpu.FMA2(gpu.Half2(t&0x00f0000f), 0x68007800, 0xa400a400))
}

func (f16g) unit() float32 { return 0x1p9 }

func (bf16g) mma(t gpu.Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return gpu.MMABF16(t, a, b, c)
}

// frag: n₀·2⁻¹³³ and 16·n₁·2⁻¹³³, times 2¹²⁷ and 2¹²³, minus 2⁻³:
// (n - 8)·2⁻⁶, exact.
func (bf16g) frag(t uint32) uint32 {
	return uint32(gpu.FMA2(gpu.BFloat162(t&0x00f0000f), 0x7d007f00, 0xbe00be00))
}

func (bf16g) unit() float32 { return 0x1p6 }
