// Short-circuit conditions lowered as one predicate (condmerge.go), and
// checks under a guard and-ed with it before the branch (liftcheck.go).
package condmerge

import "github.com/gokern/kern/gpu"

// EdgeLoad: an edge tile's load under row < m && col < k, as MatMul32's:
// one and.pred and one branch.
//
//kern:kernel block=32
func EdgeLoad(t gpu.Thread, a, out []float32, m, k int) {
	row, col := t.BlockIdx().X, t.ThreadIdx().X
	v := float32(0)
	if row < m && col < k {
		v = a[row*k+col]
	}
	out[t.GlobalX()] = v
}

// Chain: three tests, two of them merged into the first.
//
//kern:kernel block=32
func Chain(t gpu.Thread, a, out []float32, m, k int) {
	row, col := t.BlockIdx().X, t.ThreadIdx().X
	v := float32(0)
	if row < m && col < k && row+col >= 1 {
		v = a[row*k+col]
	}
	out[t.GlobalX()] = v
}

// Kept: tests that stay branches. The second test of each reads memory,
// divides, or is reached with a different value for v, so it may not run
// (or the join may not be entered with the same v) when the first fails.
//
//kern:kernel block=32
func Kept(t gpu.Thread, a, out []float32, m, d int) {
	i := t.ThreadIdx().X
	v := float32(0)
	if i < m && a[i] > 0 {
		v = 1
	}
	if d != 0 && m/d > 2 {
		v += 2
	}
	w := float32(0)
	if i < m {
		w = 1
		if i+1 < m {
			w = 3
		}
	}
	out[t.GlobalX()] = v + w
}
