package i8

// Version v2 of the W8A8 GEMM: the pipelined tiles of ops/internal/mm's
// v2, in bytes. mma.sync m16n8k32 s8 reads 32 bytes of a row per k step,
// as m16n8k16 f16 does, and its fragments have the same shape in bytes
// (gpu/mma.go): A's a0..a3 are rows g and g+8 at bytes 4q..4q+3 and
// 16+4q.., W's b0, b1 row g at the same bytes. So an ldmatrix 8×8
// matrix of 16-bit elements is 8 rows × 16 bytes of int8, and ldmatrix.x4
// of rows 0..15, byte halves 0 and 1, gives the A fragment (lane L gets
// bytes 4(L%4).. of row L/4 in each matrix), x4 over two n8 tiles of W
// rows the B fragments of both.
//
// Block tile 128×128, 8 warps as 2×4, each a 64×32 tile of C (MI×NI =
// 4×4 mma tiles of 16×8, int32 accumulators: exact). BK = 64 bytes per
// stage, three cp.async stages (48 KiB of dynamic shared memory), one
// barrier per k tile, a committed group per iteration:
//
//	A tile [128 rows][64 bytes]  row r, chunk c stored at c ^ ((r>>1)&3)
//	W tile [128 rows][64 bytes]  the same
//
// A 64-byte row is 4 chunks of 16, so 8 consecutive rows of one chunk (an
// ldmatrix 8×8 matrix) would fall in 2 bank groups; XOR-ing the chunk
// with bits 1..2 of the row spreads them over all 8 (rows r, r^1 already
// differ in their 64-byte half), and each quarter warp's cp.async stores
// (two rows' 4 chunks) land in 8 distinct bank groups: no conflicts.
//
// Copies: each thread owns 2 chunk slots per operand and stage (rows
// tid/4 and tid/4+64, chunk tid%4), source offsets computed once before
// the K loop. Rows past M or N are clamped to the last row (they only
// feed unstored elements of C); chunks past K are zero-filled without a
// read (K a multiple of 16, so a chunk is all in or all out: ops sends
// other K to v1). The epilogue scales each int32 sum once in float32 and
// stores with a predicate per element.

import (
	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// Launch shape of v2, for ops.MatmulInt8.
const (
	TCBM      = 128
	TCBN      = 128
	TCThreads = 256
	TCShared  = tcStages * 2 * tcStage // dynamic shared bytes: 48 KiB
	TCKAlign  = 16                     // K must be a multiple
)

const (
	tcBK     = 64 // bytes of K per stage
	tcStages = 3
	tcWarpsN = 4
	tcWM     = 64
	tcWN     = 32
	tcMI     = tcWM / 16
	tcNI     = tcWN / 8
	tcStage  = TCBM * tcBK // bytes of one operand's stage
)

//kern:kernel block=256 nobounds
func i8TCF32(t gpu.Thread, c []float32, a []int8, as []float32, w []int8, ws []float32, m, n, k int) {
	i8tc(f32c{}, t, gpu.DynShared[int8](t), c, a, as, w, ws, m, n, k)
}

//kern:kernel block=256 nobounds
func i8TCF16(t gpu.Thread, c []gpu.Half, a []int8, as []float32, w []int8, ws []float32, m, n, k int) {
	i8tc(f16c{}, t, gpu.DynShared[int8](t), c, a, as, w, ws, m, n, k)
}

//kern:kernel block=256 nobounds
func i8TCBF16(t gpu.Thread, c []gpu.BFloat16, a []int8, as []float32, w []int8, ws []float32, m, n, k int) {
	i8tc(bf16c{}, t, gpu.DynShared[int8](t), c, a, as, w, ws, m, n, k)
}

// TCKernels are v2's kernels, indexed by output type as Kernels.
var TCKernels = [3]*kern.Kernel{i8TCF32Kernel.Kernel(), i8TCF16Kernel.Kernel(), i8TCBF16Kernel.Kernel()}

func i8tc[O any, CO codec[O]](co CO, t gpu.Thread, sm []int8, c []O, a []int8, as []float32, w []int8, ws []float32, m, n, k int) {
	sa, sb := sm[:tcStages*tcStage], sm[tcStages*tcStage:]
	m0, n0 := t.BlockIdx().Y*TCBM, t.BlockIdx().X*TCBN
	wm0, wn0 := (t.Warp()/tcWarpsN)*tcWM, (t.Warp()%tcWarpsN)*tcWN
	tid, l := t.ThreadIdx().X, t.Lane()
	ktiles := int32((k + tcBK - 1) >> 6) // shifts: k ≥ 0
	k32 := int32(k)
	full := k32 >> 6 // k tiles wholly inside K

	// ldmatrix offsets per k32 step kk: A as mm's (matrices 1, 3 rows
	// 8..15, 2, 3 the second 16 bytes); W: matrices 2, 3 the second n8
	// tile, 1, 3 the second 16 bytes.
	lr := (l>>3&1)<<3 | l&7
	lb := (l>>4)<<3 | l&7
	var aOff, bOff [tcBK / 32]int32
	//kern:unroll
	for kk := range tcBK / 32 {
		aOff[kk] = int32((wm0+lr)*tcBK + tcSwz(lr, 2*kk+l>>4)*16)
		bOff[kk] = int32((wn0+lb)*tcBK + tcSwz(lb, 2*kk+(l>>3&1))*16)
	}

	// This thread's copy slots: rows r and r+64 of both tiles, chunk ch.
	r, ch := tid>>2, tid&3
	dst := int32(r*tcBK + tcSwz(r, ch)*16)
	aSrc := [2]int32{int32(min(m0+r, m-1)*k + ch*16), int32(min(m0+r+64, m-1)*k + ch*16)}
	bSrc := [2]int32{int32(min(n0+r, n-1)*k + ch*16), int32(min(n0+r+64, n-1)*k + ch*16)}
	col := int32(ch * 16)

	for s := int32(0); s < tcStages-1; s++ {
		if s < ktiles {
			i8tcIssue(t, sa, a, s, s, dst, aSrc, col, k32)
			i8tcIssue(t, sb, w, s, s, dst, bSrc, col, k32)
		}
		gpu.CpAsyncCommit(t)
	}

	var acc [tcMI][tcNI][4]int32
	rs, wst := int32(0), int32(tcStages-1)
	for kt := int32(0); kt < ktiles; kt++ {
		gpu.CpAsyncWait(t, tcStages-2)
		t.Sync()
		if nt := kt + tcStages - 1; nt < full {
			i8tcIssueFull(t, sa, a, nt, wst, dst, aSrc)
			i8tcIssueFull(t, sb, w, nt, wst, dst, bSrc)
		} else if nt < ktiles {
			i8tcIssue(t, sa, a, nt, wst, dst, aSrc, col, k32)
			i8tcIssue(t, sb, w, nt, wst, dst, bSrc, col, k32)
		}
		gpu.CpAsyncCommit(t)
		base := rs * tcStage
		//kern:unroll
		for kk := range tcBK / 32 {
			var fa [tcMI][4]uint32
			//kern:unroll
			for i := range tcMI {
				fa[i] = gpu.LdMatrixX4(t, &sa[base+aOff[kk]+int32(i*16*tcBK)])
			}
			var fb [tcNI][2]uint32
			//kern:unroll
			for p := range tcNI / 2 {
				f := gpu.LdMatrixX4(t, &sb[base+bOff[kk]+int32(p*16*tcBK)])
				fb[2*p] = [2]uint32{f[0], f[1]}
				fb[2*p+1] = [2]uint32{f[2], f[3]}
			}
			//kern:unroll
			for i := range tcMI {
				//kern:unroll
				for j := range tcNI {
					acc[i][j] = gpu.MMAS8(t, fa[i], fb[j], acc[i][j])
				}
			}
		}
		rs, wst = rs+1, wst+1
		if rs == tcStages {
			rs = 0
		}
		if wst == tcStages {
			wst = 0
		}
	}
	gpu.CpAsyncWait(t, 0)

	g, q := l>>2, l&3
	//kern:unroll
	for i := range tcMI {
		//kern:unroll
		for j := range tcNI {
			row, cl := m0+wm0+16*i+g, n0+wn0+8*j+2*q
			i8Store(co, c, as, ws, row, cl, m, n, acc[i][j][0], acc[i][j][1])
			i8Store(co, c, as, ws, row+8, cl, m, n, acc[i][j][2], acc[i][j][3])
		}
	}
}

// tcSwz is the stored chunk of chunk ch of row r in a 4-chunk row.
func tcSwz(r, ch int) int { return ch ^ (r >> 1 & 3) }

// i8tcIssue issues one thread's copies of k tile kt of an operand (A or
// W) into stage st: slot i copies the chunk at src[i]+kt·64 into
// s[st·stage + dst + i·64 rows], zero-filled without a read where the
// chunk (at byte col of the tile) lies past K.
func i8tcIssue(t gpu.Thread, s, g []int8, kt, st, dst int32, src [2]int32, col, k int32) {
	kOff := kt * tcBK
	ok := (col + kOff - k) >> 31 // all ones while the chunk is inside K
	//kern:unroll
	for i := range 2 {
		gpu.CpAsyncZFill(t, &s[st*tcStage+dst+int32(i*64*tcBK)], &g[(src[i]+kOff)&ok], 16, int(16&ok))
	}
}

// i8tcIssueFull is i8tcIssue for a k tile wholly inside K: plain copies.
func i8tcIssueFull(t gpu.Thread, s, g []int8, kt, st, dst int32, src [2]int32) {
	kOff := kt * tcBK
	//kern:unroll
	for i := range 2 {
		gpu.CpAsync(t, &s[st*tcStage+dst+int32(i*64*tcBK)], &g[uint32(src[i]+kOff)], 16)
	}
}
