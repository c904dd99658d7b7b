package mmhw

// The epilogue of ops.Matmul on Hopper for the 256-column tile: the
// staging of ops/internal/mmh's epilogue.go, walking four 64-column
// rounds, and ops/internal/epilogue (every matmul's) for bias,
// activation, residual and the rounding; TestEpilogueMatchesMMH checks
// every declaration but epilogue itself (which walks a 256-column
// accumulator here) against mmh's.

import (
	"github.com/gokern/kern/gpu"
	epi "github.com/gokern/kern/ops/internal/epilogue"
)

// The output codecs: ops/internal/epilogue's, with the four-output store
// of the epilogue's fast path (quadCodec).
type f32c struct{ epi.F32 }

type f16c struct{ epi.Half }

type bf16c struct{ epi.BFloat16 }

// A quadCodec also stores four outputs in one 64- or 128-bit store: the
// epilogue's fast path (see epilogue). Its rounding is Store's.
type quadCodec[T any] interface {
	epi.Out[T]
	store4(c []T, i int, v [4]float32)
}

func (f32c) store4(c []float32, i int, v [4]float32) { gpu.Store4(c, i, v) }

func (f16c) store4(c []gpu.Half, i int, v [4]float32) {
	gpu.Store4(c, i, [4]gpu.Half{gpu.ToHalf(v[0]), gpu.ToHalf(v[1]), gpu.ToHalf(v[2]), gpu.ToHalf(v[3])})
}

func (bf16c) store4(c []gpu.BFloat16, i int, v [4]float32) {
	gpu.Store4(c, i, [4]gpu.BFloat16{gpu.ToBFloat16(v[0]), gpu.ToBFloat16(v[1]), gpu.ToBFloat16(v[2]), gpu.ToBFloat16(v[3])})
}

// The epilogue stages each consumer warp's 16×256 accumulator rows
// through shared memory in four rounds of 16×64 float32, so that the bias,
// activation and residual code is one loop (not 64 unrolled copies: the
// PTX would be 400 KB a kernel) and the stores to C are runs of 32
// consecutive elements. Each warp has its own 4 KiB staging area after
// the pipeline stages (the producer may already be loading the next
// tile into those). Word (r, c) of the area is at r·64 + (c ^ 8(r&3)):
// the fragment stores of a half warp (rows g..g+3, 8 words each) then
// fall in 32 distinct banks, and a row's 32-word reads stay
// conflict-free.
const (
	epiLd         = 64
	epiWarpFloats = 16 * epiLd
)

// epiSwz is the stored column of column col in row r of a staging area.
func epiSwz(r, col int) int { return r*epiLd + col ^ (r&3)<<3 }

// epilogue stores a consumer warpgroup's 64×256 accumulator tile at rows
// r0.., columns n0.. of C (see gemm.go's layout); st is the warp's
// staging area. Round h (of four) stages acc[32h .. 32h+31], columns
// 64h .. 64h+63: the accumulator is indexed by constants only, so each
// round's staging is its own unrolled copy, and the loop that finishes
// and stores the round is one.
//
// The fast path: with plain output (no bias, activation or residual) and
// n a multiple of 4 (so that four outputs from an element index that is
// a multiple of 4 are one aligned store), a round wholly inside C is
// copied with one 128-bit shared load and one 4-output store per lane
// and pair of rows, no predicates: half a warp per row, lane l at row
// 2i + l/16, columns 4(l%16) .. +3 (consecutive under the swizzle, which
// XORs multiples of 8). That is 8 loads and 8 stores a round where the
// general path below runs 32 predicated element stores and their
// bias/activation/residual branches per lane; the same values, rounded
// the same way (quadCodec).
func epilogue[O any, CO quadCodec[O]](co CO, t gpu.Thread, st []float32, acc [128]float32, c, bias, res []O, r0, n0, m, n, act int) {
	l := t.Lane()
	g, q := l>>2, l&3
	row0 := r0 + 16*(t.Warp()%4)
	plain := act == epi.None && len(bias) == 0 && len(res) == 0 && n%4 == 0
	qr, qc := l>>4, 4*(l&15)
	for h := 0; h < BN/64; h++ { // not unrolled: one copy of the loop below
		//kern:unroll
		for hh := range BN / 64 {
			if hh == h {
				//kern:unroll
				for j := range 8 {
					epiStage(st, g, 8*j+2*q, acc[32*hh+4*j], acc[32*hh+4*j+1], acc[32*hh+4*j+2], acc[32*hh+4*j+3])
				}
			}
		}
		t.SyncWarp()
		col0 := n0 + 64*h
		if plain && row0+16 <= m && col0+64 <= n {
			//kern:unroll
			for i := range 8 {
				r := 2*i + qr
				co.store4(c, (row0+r)*n+col0+qc, gpu.Load4(st, epiSwz(r, qc)))
			}
		} else if act == epi.SwiGLU {
			// lane l finishes the pair at columns 2l, 2l+1 of each row
			for r := range 16 {
				p := gpu.Load2(st, epiSwz(r, 2*l))
				epi.Pair(co, c, bias, res, row0+r, col0+2*l, m, n, act, p[0], p[1])
			}
		} else {
			for r := range 16 {
				epi.One(co, c, bias, res, row0+r, col0+l, m, n, act, st[epiSwz(r, l)])
				epi.One(co, c, bias, res, row0+r, col0+32+l, m, n, act, st[epiSwz(r, 32+l)])
			}
		}
		t.SyncWarp()
	}
}

// epiStage writes one fragment's two pairs, rows g and g+8 at column col
// (even, so the pair stays adjacent under the swizzle).
func epiStage(st []float32, g, col int, v0, v1, v2, v3 float32) {
	gpu.Store2(st, epiSwz(g, col), [2]float32{v0, v1})
	gpu.Store2(st, epiSwz(g+8, col), [2]float32{v2, v3})
}
