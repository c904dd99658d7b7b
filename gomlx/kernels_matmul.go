package gomlx

// Batched matmul, v2: shared-memory tiles. out [B, M, N] = a [B, M, K] ·
// b [B, K, N], all row-major. A 16×16 block computes a 16×16 tile of out
// (block (x, y, z) = columns x·16…, rows y·16…, batch z): per step of 16
// along K, each thread loads one element of a's tile and one of b's into
// shared memory (widened to float32; out-of-range elements load as 0, so
// edges need no special case), the block syncs, and each thread adds 16
// products to its output's float32 accumulator. Each element of a and b
// is read from global memory M/16 or N/16 times instead of M or N times
// (v1, matmul in kernels_float.go, one thread per output, which stays for
// small or integer products). ops_dot.go picks v2 when M and N are both
// at least tileDim and the batch fits the grid's z (65535).

import "github.com/gokern/kern/gpu"

// tileDim is the tile's side: 16×16 = 256 threads, two 1 KiB tiles.
const tileDim = 16

func matmulTile[T any, C codec[T]](c C, t gpu.Thread, out, a, b []T, m, k, n int) {
	as := gpu.Shared[float32](t, tileDim*tileDim)
	bs := gpu.Shared[float32](t, tileDim*tileDim)
	tx, ty := t.ThreadIdx().X, t.ThreadIdx().Y
	row := t.BlockIdx().Y*tileDim + ty
	col := t.BlockIdx().X*tileDim + tx
	bi := t.BlockIdx().Z
	var acc float32
	for p0 := 0; p0 < k; p0 += tileDim {
		var av, bv float32
		if row < m && p0+tx < k {
			av = c.load(a[(bi*m+row)*k+p0+tx])
		}
		if p0+ty < k && col < n {
			bv = c.load(b[(bi*k+p0+ty)*n+col])
		}
		as[ty*tileDim+tx] = av
		bs[ty*tileDim+tx] = bv
		t.Sync()
		for q := 0; q < tileDim; q++ {
			acc += as[ty*tileDim+q] * bs[q*tileDim+tx]
		}
		t.Sync()
	}
	if row < m && col < n {
		out[(bi*m+row)*n+col] = c.store(acc)
	}
}

//kern:kernel block=16x16
func matmulTileF32(t gpu.Thread, out, a, b []float32, m, k, n int) {
	matmulTile(f32c{}, t, out, a, b, m, k, n)
}

//kern:kernel block=16x16
func matmulTileF16(t gpu.Thread, out, a, b []gpu.Half, m, k, n int) {
	matmulTile(f16c{}, t, out, a, b, m, k, n)
}

//kern:kernel block=16x16
func matmulTileBF16(t gpu.Thread, out, a, b []gpu.BFloat16, m, k, n int) {
	matmulTile(bf16c{}, t, out, a, b, m, k, n)
}

//kern:kernel block=16x16
func matmulTileF64(t gpu.Thread, out, a, b []float64, m, k, n int) {
	as := gpu.Shared[float64](t, tileDim*tileDim)
	bs := gpu.Shared[float64](t, tileDim*tileDim)
	tx, ty := t.ThreadIdx().X, t.ThreadIdx().Y
	row := t.BlockIdx().Y*tileDim + ty
	col := t.BlockIdx().X*tileDim + tx
	bi := t.BlockIdx().Z
	var acc float64
	for p0 := 0; p0 < k; p0 += tileDim {
		var av, bv float64
		if row < m && p0+tx < k {
			av = a[(bi*m+row)*k+p0+tx]
		}
		if p0+ty < k && col < n {
			bv = b[(bi*k+p0+ty)*n+col]
		}
		as[ty*tileDim+tx] = av
		bs[ty*tileDim+tx] = bv
		t.Sync()
		for q := 0; q < tileDim; q++ {
			acc += as[ty*tileDim+q] * bs[q*tileDim+tx]
		}
		t.Sync()
	}
	if row < m && col < n {
		out[(bi*m+row)*n+col] = acc
	}
}
