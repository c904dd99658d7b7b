package ops

// Tile versions of Softmax and RMSNorm (v3 of each), written with package
// gpu/tile: the row is one tile of K·256 elements (K registers per thread,
// K = 4 or 16, so rows of up to 1024 or 4096), loaded once, reduced in
// registers and stored; the hand-written v1/v2 stream the row from memory
// twice instead. Shapes, layouts and numerics are those of softmax.go and
// norm.go (float32 arithmetic whatever T, rounded once on the store);
// blocks are one per row, rowThreads(cols) threads, as v1. The kernels
// are in ops/internal/tilerow.
//
// They are kept beside the hand-written versions to compare (tests against
// the same float64 references; SASS per row in docs/performance.md). The
// library's Softmax and RMSNorm still use v2/v1, which take any cols.

import (
	"fmt"

	"github.com/gokern/kern"
	"github.com/gokern/kern/ops/internal/tilerow"
)

// ---------------------------------------------------------------------------
// Go API (package-internal: the versions are compared, not exported)

var (
	softmaxTile4K  = kset(tilerow.Softmax4)
	softmaxTile16K = kset(tilerow.Softmax16)
	rmsNormTile4K  = kset(tilerow.RMSNorm4)
	rmsNormTile16K = kset(tilerow.RMSNorm16)
)

// tileK is the per-thread register count (K) of the smallest tile of
// maxRowThreads threads that holds a row of cols, with its kernels; ok is
// false for rows longer than the largest tile.
func tileK(cols int, k4, k16 kset) (kset, bool) {
	switch {
	case cols <= 4*maxRowThreads:
		return k4, true
	case cols <= 16*maxRowThreads:
		return k16, true
	}
	return kset{}, false
}

// softmaxTiled launches softmax v3 (rows of at most 4096).
func softmaxTiled[T Float](q kern.Queue, out, x *kern.Buffer[T], rows, cols int) error {
	k, ok := tileK(cols, softmaxTile4K, softmaxTile16K)
	if !ok {
		return fmt.Errorf("softmax v3: cols %d exceeds the largest tile (%d)", cols, 16*maxRowThreads)
	}
	return softmax(k, "softmax v3", q, out, x, rows, cols)
}

// rmsNormTiled launches RMSNorm v3 (rows of at most 4096).
func rmsNormTiled[T Float](q kern.Queue, out, x, weight *kern.Buffer[T], rows, cols int, eps float32) error {
	k, ok := tileK(cols, rmsNormTile4K, rmsNormTile16K)
	if !ok {
		return fmt.Errorf("rmsnorm v3: cols %d exceeds the largest tile (%d)", cols, 16*maxRowThreads)
	}
	s := newShape("rmsnorm v3")
	n := rowsCols(s, rows, cols)
	buf(s, "x", x, n, "rows×cols")
	buf(s, "out", out, n, "rows×cols")
	buf(s, "weight", weight, cols, "cols")
	checkEps(s, eps)
	if s.err != nil || rows == 0 {
		return s.err
	}
	return s.launch(pick[T](k), q, blocks1(rows, rowThreads(cols)), bufArg(out), bufArg(x), bufArg(weight), intArg(cols), f32Arg(eps))
}
