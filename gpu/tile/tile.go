package tile

import "math"

// Regs is the per-thread register array of a row tile: K float32
// registers, K a power of two. A row tile of a block of B threads holds
// K·B elements.
type Regs interface {
	[1]float32 | [2]float32 | [4]float32 | [8]float32 | [16]float32 | [32]float32
}

// Row is a 1-D tile of a row, spread over the block's threads: register
// j of thread i holds element j·B+i (B = the block's threads).
type Row[R Regs] struct{ v R }

// NegInf returns -Inf, the fill for masked elements of a tile reduced
// with ReduceMax.
func NegInf() float32 { return math.Float32frombits(0xff800000) }

// Full returns a row tile with every element v (a broadcast scalar).
func Full[R Regs](v float32) Row[R] {
	var r Row[R]
	//kern:unroll
	for j := range len(r.v) {
		r.v[j] = v
	}
	return r
}
