// Package prefetchk holds the kernel of kern's gpu.PrefetchL2 test
// (prefetch_test.go at the module root), in a package of its own so that
// its generated files change with nothing else: the shape of a
// persistent kernel that prefetches the next phase's rows before the
// grid barrier it waits at.
package prefetchk

import "github.com/gokern/kern/gpu"

//go:generate go run github.com/gokern/kern/cmd/kern gen

// TwoPhase computes out[i] = 2·x[i] + w[(i+shift) mod len(w)] in two
// phases around a GridSync: before the barrier each thread prefetches the
// element of w it reads after it, one more at i+far, and the block's
// thread 0 the 48 elements from far (gpu.PrefetchL2Bulk), which the test
// puts in range, past either end, or near the int limits: a prefetch is a
// hint, so none of them may change the result or fault.
//
//kern:kernel block=64
func TwoPhase(t gpu.Thread, x, w, out []float32, shift, far int) {
	i := t.GlobalX()
	j := 0
	if len(w) > 0 {
		j = (i + shift) % len(w)
	}
	gpu.PrefetchL2(w, j)
	gpu.PrefetchL2(w, i+far)
	if t.ThreadIdx().X == 0 {
		gpu.PrefetchL2Bulk(w, far, 48)
	}
	if i < len(out) && i < len(x) {
		out[i] = 2 * x[i]
	}
	gpu.GridSync(t)
	if i < len(out) && j < len(w) {
		out[i] += w[j]
	}
}
