// gpu.PrefetchL2: prefetch.global.L2 predicated on 0 ≤ i < len(s) unless
// the range analysis proves it, before a grid barrier as a persistent
// kernel uses it; constant indexes decided at compile time; nobounds
// keeps the predicate (a prefetch is never a fault); PrefetchL2Bulk.
package prefetch

import "github.com/gokern/kern/gpu"

// NextPhase prefetches the rows of w the next phase reads, one 128-byte
// line (32 floats) per thread, then waits at the grid barrier.
//
//kern:kernel block=128
func NextPhase(t gpu.Thread, x, w, out []float32, next int) {
	i := t.GlobalX()
	gpu.PrefetchL2(w, next+32*i)
	if i < len(x) && i < len(out) {
		out[i] = x[i]
	}
	gpu.GridSync(t)
	if i < len(out) && i < len(w) {
		out[i] += w[i]
	}
}

// Proven: the guard, and a range the block shape bounds.
//
//kern:kernel block=128
func Proven(t gpu.Thread, w []gpu.Half, out []float32) {
	i := t.GlobalX()
	if i < len(w) {
		gpu.PrefetchL2(w, i)
	}
	if uint(i) < uint(len(out)) {
		gpu.PrefetchL2(out, i)
	}
	tile := w[:256]
	gpu.PrefetchL2(tile, t.ThreadIdx().X)
}

// Consts: index 3 of a slice that may be empty is predicated, index -1
// and a too-large index of a fixed-length re-slice prefetch nothing.
//
//kern:kernel
func Consts(t gpu.Thread, w []float64, k int32) {
	gpu.PrefetchL2(w, 3)
	gpu.PrefetchL2(w, -1)
	gpu.PrefetchL2(w[:8], 8)
	gpu.PrefetchL2(w[:8], 7)
	gpu.PrefetchL2(w, int(k))
}

//kern:kernel nobounds
func NoBounds(t gpu.Thread, w []uint8, off int) {
	gpu.PrefetchL2(w, off+t.GlobalX())
}

// Rows prefetches row r of a rows×cols matrix: on sm_80 a loop of
// prefetch.global.L2 over its 128-byte lines, on sm_90 one
// cp.async.bulk.prefetch.L2.global over its 16-byte granules.
//
//kern:kernel
func Rows(t gpu.Thread, w []gpu.BFloat16, r, cols int) {
	gpu.PrefetchL2Bulk(w, r*cols, cols)
}
