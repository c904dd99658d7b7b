package main

import "github.com/gokern/kern/gpu"

//go:generate go run github.com/gokern/kern/cmd/kern gen

// C = A·B in float32: A is m×k, B is k×n, C is m×n, all row-major, any
// sizes. Two versions, each a grid of blocks over C's tiles that steps
// through K one tile at a time, staging a tile of A and one of B in shared
// memory so each element loaded from global memory is used by a whole row
// or column of threads:
//
//	v1 MatMul16  16×16 threads, one per element of a 16×16 tile of C. Per
//	             K step each thread loads one element of A and one of B and
//	             does 16 FMAs: 2 shared loads per FMA.
//	v2 MatMul32  32×8 threads for a 32×32 tile of C, each thread 4
//	             elements of a column (rows ty, ty+8, ty+16, ty+24) kept in
//	             registers. Per K step a thread loads 4+4 elements and does
//	             128 FMAs, reusing each B value from shared memory 4 times:
//	             1.25 shared loads per FMA.
//
// Edge tiles: loads outside A or B store 0 in the tile (adding 0·x changes
// nothing) and threads outside C store nothing, so the barriers are still
// reached by every thread.

const t16 = 16

// MatMul16 is v1.
//
// maxregs=31 holds it to the budget it needs: left alone, ptxas fills
// registers up to full occupancy (32 at 256 threads) with shared loads
// issued early; at 30 it emits the same loop (84 SASS on sm_80). Under the
// cap, a change that needs more registers shows as a spill, which kern's
// ptxas check reports, instead of as a quiet rise.
//
//kern:kernel block=16x16 maxregs=31
func MatMul16(t gpu.Thread, a, b, c []float32, m, n, k int) {
	as := gpu.Shared[float32](t, t16*t16)
	bs := gpu.Shared[float32](t, t16*t16)
	tx, ty := t.ThreadIdx().X, t.ThreadIdx().Y
	row, col := t.BlockIdx().Y*t16+ty, t.BlockIdx().X*t16+tx

	acc := float32(0)
	for k0 := 0; k0 < k; k0 += t16 {
		av, bv := float32(0), float32(0)
		if row < m && k0+tx < k {
			av = a[row*k+k0+tx]
		}
		if k0+ty < k && col < n {
			bv = b[(k0+ty)*n+col]
		}
		as[ty*t16+tx], bs[ty*t16+tx] = av, bv
		t.Sync() // the tiles are complete
		//kern:unroll
		for kk := range t16 {
			acc = gpu.FMA(as[ty*t16+kk], bs[kk*t16+tx], acc)
		}
		t.Sync() // everyone is done with the tiles before they are overwritten
	}
	if row < m && col < n {
		c[row*n+col] = acc
	}
}

const t32 = 32

// MatMul32 is v2 (idx32: launches with 32-bit sizes run MatMul32_i32).
//
//kern:kernel block=32x8 idx32
func MatMul32(t gpu.Thread, a, b, c []float32, m, n, k int) {
	as := gpu.Shared[float32](t, t32*t32)
	bs := gpu.Shared[float32](t, t32*t32)
	tx, ty := t.ThreadIdx().X, t.ThreadIdx().Y
	r0, col := t.BlockIdx().Y*t32, t.BlockIdx().X*t32+tx

	var acc [4]float32
	for k0 := 0; k0 < k; k0 += t32 {
		//kern:unroll
		for i := range 4 {
			r := ty + 8*i // this thread's tile row for the loads
			av, bv := float32(0), float32(0)
			if r0+r < m && k0+tx < k {
				av = a[(r0+r)*k+k0+tx]
			}
			if k0+r < k && col < n {
				bv = b[(k0+r)*n+col]
			}
			as[r*t32+tx], bs[r*t32+tx] = av, bv
		}
		t.Sync()
		//kern:unroll
		for kk := range t32 {
			bv := bs[kk*t32+tx] // 32 lanes, 32 consecutive words: no conflict
			//kern:unroll
			for i := range 4 {
				// The warp's lanes share ty, so they read the same word of
				// as: a broadcast.
				acc[i] = gpu.FMA(as[(ty+8*i)*t32+kk], bv, acc[i])
			}
		}
		t.Sync()
	}
	//kern:unroll
	for i := range 4 {
		if row := r0 + ty + 8*i; row < m && col < n {
			c[row*n+col] = acc[i]
		}
	}
}
