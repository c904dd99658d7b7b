package testkernels

import "github.com/gokern/kern/gpu"

// Cooperative kernels (gpu.GridSync), for cooperative_test.go.

// GridNormalize writes out[i] = x[i] / Σx in one launch: each block sums
// its grid-stride share into partial[block], every block waits for all
// partials, then sums them in the same order and scales its share.
//
//kern:kernel block=128
func GridNormalize(t gpu.Thread, x, out, partial []float32) {
	b, nb := t.BlockIdx().X, t.GridDim().X
	stride := nb * t.BlockDim().X
	s := float32(0)
	for i := t.GlobalX(); i < len(x); i += stride {
		s += x[i]
	}
	s = gpu.BlockSum(t, s)
	if t.ThreadIdx().X == 0 {
		partial[b] = s
	}
	gpu.GridSync(t)
	total := float32(0)
	for j := 0; j < nb; j++ {
		total += partial[j]
	}
	for i := t.GlobalX(); i < len(x); i += stride {
		out[i] = x[i] / total
	}
}

// GridRotate runs rounds of: every thread writes its slot of buf, the grid
// syncs, every thread reads the slot one block further on and adds it to
// acc, the grid syncs (so no slot is rewritten before every read of it).
// acc[i] = Σ_r (r·n + (i+bd·(r+1)) mod n) with n = len(buf) = len(acc) =
// the grid's threads and bd the block size.
//
//kern:kernel block=64
func GridRotate(t gpu.Thread, buf, acc []int32, rounds int) {
	gridRotate(t, buf, acc, rounds)
}

// GridRotatePDL is GridRotate launched with programmatic dependent launch
// as well (a persistent kernel that waits for the kernel before it).
//
//kern:kernel block=64 pdl
func GridRotatePDL(t gpu.Thread, buf, acc []int32, rounds int) {
	gridRotate(t, buf, acc, rounds)
}

func gridRotate(t gpu.Thread, buf, acc []int32, rounds int) {
	i := t.GlobalX()
	n := len(buf)
	for r := 0; r < rounds; r++ {
		buf[i] = int32(r*n + i)
		gpu.GridSync(t)
		acc[i] += buf[(i+t.BlockDim().X*(r+1))%n]
		gpu.GridSync(t)
	}
}

// GridFault reads x[bad] in block 1's thread 3 before a GridSync: the
// check fails there, and every other block, waiting at the grid barrier,
// must see the failure and end rather than wait forever.
//
//kern:kernel block=32
func GridFault(t gpu.Thread, x, out []float32, bad int) {
	v := float32(0)
	if t.BlockIdx().X == 1 && t.ThreadIdx().X == 3 {
		v = x[bad]
	}
	gpu.GridSync(t)
	out[t.GlobalX()] = v + 1
}

// GridDiverge is a mistake: block 2 returns before the GridSync the other
// blocks wait at, which can never complete. Native mode and the emulator
// report it; a GPU would hang.
//
//kern:kernel block=32
func GridDiverge(t gpu.Thread, out []float32) {
	if t.BlockIdx().X == 2 {
		return
	}
	gpu.GridSync(t)
	out[t.GlobalX()] = 1
}
