package mm

// The fallback GEMM (v1): any M, N, K and either B layout, on mma.sync
// m16n8k16 with fragments loaded element by element from global memory.
// matmul.go uses it when K (or, for B[K,N], N) is not a multiple of 8, so
// that v2's 16-byte cp.async chunks would straddle a row end or be
// misaligned. It is also the simplest correct tensor-core GEMM, the
// reference the fast path was checked against while it was written.
//
// One warp computes one 16×8 tile of C, four warps per block. Lane
// (g = lane/4, q = lane%4) loads exactly the elements of the fragment
// layout of gpu/mma.go; an element outside A or B reads as zero. B is
// addressed as b[kk·sbk + col·sbn], so (sbk, sbn) = (1, K) is W[N,K] and
// (N, 1) is B[K,N].

import (
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/epilogue"
)

//kern:kernel block=128 minblocks=1
func SimpleF16F32(t gpu.Thread, c []float32, a, b []gpu.Half, bias, res []float32, m, n, k, sbk, sbn, act int) {
	mmaSimple(f16in{}, epilogue.F32{}, t, c, a, b, bias, res, m, n, k, sbk, sbn, act)
}

//kern:kernel block=128 minblocks=1
func SimpleF16F16(t gpu.Thread, c []gpu.Half, a, b []gpu.Half, bias, res []gpu.Half, m, n, k, sbk, sbn, act int) {
	mmaSimple(f16in{}, epilogue.Half{}, t, c, a, b, bias, res, m, n, k, sbk, sbn, act)
}

//kern:kernel block=128 minblocks=1
func SimpleBF16F32(t gpu.Thread, c []float32, a, b []gpu.BFloat16, bias, res []float32, m, n, k, sbk, sbn, act int) {
	mmaSimple(bf16in{}, epilogue.F32{}, t, c, a, b, bias, res, m, n, k, sbk, sbn, act)
}

//kern:kernel block=128 minblocks=1
func SimpleBF16BF16(t gpu.Thread, c []gpu.BFloat16, a, b []gpu.BFloat16, bias, res []gpu.BFloat16, m, n, k, sbk, sbn, act int) {
	mmaSimple(bf16in{}, epilogue.BFloat16{}, t, c, a, b, bias, res, m, n, k, sbk, sbn, act)
}

// SimpleWarps is v1's warps per block.
const SimpleWarps = 4

func mmaSimple[A, O any, CA inCodec[A], CO epilogue.Out[O]](ca CA, co CO, t gpu.Thread, c []O, a, b []A, bias, res []O, m, n, k, sbk, sbn, act int) {
	tilesN := (n + 7) / 8
	w := t.BlockIdx().X*SimpleWarps + t.Warp()
	tm, tn := w/tilesN, w%tilesN
	if tm*16 < m { // warp-uniform: the whole warp reaches the mma or none
		g, q := t.Lane()/4, t.Lane()%4
		row, col := tm*16+g, tn*8+g
		var acc [4]float32
		for k0 := 0; k0 < k; k0 += 16 {
			kc := k0 + 2*q
			fa := [4]uint32{
				simpleA(ca, a, row, kc, m, k),
				simpleA(ca, a, row+8, kc, m, k),
				simpleA(ca, a, row, kc+8, m, k),
				simpleA(ca, a, row+8, kc+8, m, k),
			}
			fb := [2]uint32{
				simpleB(ca, b, kc, col, n, k, sbk, sbn),
				simpleB(ca, b, kc+8, col, n, k, sbk, sbn),
			}
			acc = ca.mma(t, fa, fb, acc)
		}
		row, col = tm*16+g, tn*8+2*q
		epilogue.Pair(co, c, bias, res, row, col, m, n, act, acc[0], acc[1])
		epilogue.Pair(co, c, bias, res, row+8, col, m, n, act, acc[2], acc[3])
	}
}

// simpleA packs A[row][kc], A[row][kc+1], zero outside A.
func simpleA[A any, CA inCodec[A]](ca CA, a []A, row, kc, m, k int) uint32 {
	lo, hi := uint32(0), uint32(0)
	if row < m && kc < k {
		lo = ca.bits(a[row*k+kc])
		if kc+1 < k {
			hi = ca.bits(a[row*k+kc+1])
		}
	}
	return lo | hi<<16
}

// simpleB packs B[kc][col], B[kc+1][col], zero outside B.
func simpleB[A any, CA inCodec[A]](ca CA, b []A, kc, col, n, k, sbk, sbn int) uint32 {
	lo, hi := uint32(0), uint32(0)
	if col < n && kc < k {
		lo = ca.bits(b[kc*sbk+col*sbn])
		if kc+1 < k {
			hi = ca.bits(b[(kc+1)*sbk+col*sbn])
		}
	}
	return lo | hi<<16
}
