// Package tilemm is the tile-level twin of ops/internal/mm's tensor-core
// GEMM: C = silu(A·Wᵀ + bias), written with package gpu/tile (2-D tiles,
// Stage, Dot, Acc.Mat) instead of fragments, lanes and swizzle offsets.
// It is kept to compare the two levels (docs/tiles.md shows them side by
// side; docs/performance.md their SASS per k step), not behind ops.Matmul.
// It is a package of its own so that its PTX stays out of ops' file.
//
// A block computes a 128 × 64 tile of C with 4 warps (block=128: the Acc
// tile is 32·W × 64): tile.DotK runs the K loop, a double-buffered
// cp.async ring of 128 rows of A and 64 rows of W per BK = 32 in swizzled
// shared memory, multiplied on the tensor cores. Any M, N, K: edges are
// masked (zero-filled) by DotK and by StoreMat; K or rows not a multiple
// of 8 take DotK's element copies. minblocks=4 holds ptxas to 128
// registers without spills (for sm_80 it takes 156 otherwise), the
// twin's count and cmd/kern's register baseline for these kernels.
package tilemm

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen

import (
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/gpu/tile"
)

// BM and BN are a block's tile of C.
const (
	BM = 128
	BN = 64
)

// matmul is C[m,n] = silu(A[m,k]·W[n,k]ᵀ + bias[n]) for one block's tile.
func matmul[T gpu.Elem, C tile.MMA[T]](t gpu.Thread, c []float32, a, w []T, bias []float32, m, n, k int) {
	ti, tj := tile.TileOf(t)
	av, wv := tile.Input[C](a).Matrix(m, k), tile.Input[C](w).Matrix(n, k)
	sa := gpu.Shared[T](t, tile.Stages*BM*tile.BK) // one gpu.Shared per line: native mode
	sb := gpu.Shared[T](t, tile.Stages*BN*tile.BK) // tells the arrays apart by call site
	acc := tile.DotK(t, tile.Acc{}, sa, sb, av, wv, ti, tj)
	b := tile.BroadcastRow[tile.AccRegs, tile.AccRow](t, tile.Input[tile.F32](bias), tj, 0)
	tile.StoreMat(t, tile.Tiles[tile.F32, tile.AccRegs, tile.AccRow](t, c, m, n), acc.Mat(t).Add(b).SiLU())
}

//kern:kernel block=128 minblocks=4
func MatmulF16(t gpu.Thread, c []float32, a, w []gpu.Half, bias []float32, m, n, k int) {
	matmul[gpu.Half, tile.F16](t, c, a, w, bias, m, n, k)
}

//kern:kernel block=128 minblocks=4
func MatmulBF16(t gpu.Thread, c []float32, a, w []gpu.BFloat16, bias []float32, m, n, k int) {
	matmul[gpu.BFloat16, tile.BF16](t, c, a, w, bias, m, n, k)
}
