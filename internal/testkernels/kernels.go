// Package testkernels holds the kernels package kern's own tests launch:
// small, each exercising one part of the host API on every device.
package testkernels

import "github.com/gokern/kern/gpu"

//go:generate go run github.com/gokern/kern/cmd/kern gen

// Axpy computes y[i] = a*x[i] + y[i].
//
//kern:kernel block=128
func Axpy(t gpu.Thread, a float32, x, y []float32) {
	i := t.GlobalX()
	if i < len(y) {
		y[i] = a*x[i] + y[i]
	}
}

// Gather reads x at positions idx: an index past the end is a device
// bounds error.
//
//kern:kernel block=64
func Gather(t gpu.Thread, x []float32, idx []int32, out []float32) {
	i := t.GlobalX()
	if i < len(out) {
		out[i] = x[idx[i]]
	}
}

// GatherUnchecked is Gather compiled without bounds checks.
//
//kern:kernel block=64 nobounds
func GatherUnchecked(t gpu.Thread, x []float32, idx []int32, out []float32) {
	i := t.GlobalX()
	if i < len(out) {
		out[i] = x[idx[i]]
	}
}

// Scalars writes each scalar parameter, converted, to out.
//
//kern:kernel
func Scalars(t gpu.Thread, b bool, i8 int8, u16 uint16, i32 int32, u64 uint64, f64 float64, h gpu.Half, bf gpu.BFloat16, out []float64) {
	if t.GlobalX() != 0 {
		return
	}
	if b {
		out[0] = 1
	}
	out[1] = float64(i8)
	out[2] = float64(u16)
	out[3] = float64(i32)
	out[4] = float64(u64)
	out[5] = f64
	out[6] = float64(h.Float32())
	out[7] = float64(bf.Float32())
}

// BlockSums writes each block's sum of x, staged through dynamic shared
// memory, to sums[blockIdx].
//
//kern:kernel block=256
func BlockSums(t gpu.Thread, x []float32, sums []float32) {
	buf := gpu.DynShared[float32](t)
	i := t.GlobalX()
	v := float32(0)
	if i < len(x) {
		v = x[i]
	}
	buf[t.ThreadIdx().X] = v
	t.Sync()
	s := gpu.BlockSum(t, buf[t.ThreadIdx().X])
	if t.ThreadIdx().X == 0 {
		sums[t.BlockIdx().X] = s
	}
}

// Checked panics when x holds a negative value.
//
//kern:kernel
func Checked(t gpu.Thread, x []float32) {
	i := t.GlobalX()
	if i < len(x) && x[i] < 0 {
		panic("negative input")
	}
}

// Divide writes x[i] / d[i]: a zero divisor panics, as in Go.
//
//kern:kernel
func Divide(t gpu.Thread, x, d, out []int32) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = x[i] / d[i]
	}
}

// Windows sums each group of four inputs through a slice-to-array
// conversion and writes the sum and the reversed group through an array
// pointer into the slice.
//
//kern:kernel
func Windows(t gpu.Thread, x, sums, rev []float32) {
	i := t.GlobalX()
	if 4*i+3 >= len(x) {
		return
	}
	w := [4]float32(x[4*i:])
	sums[i] = w[0] + w[1] + w[2] + w[3]
	p := (*[4]float32)(rev[4*i:])
	for k := range 4 {
		p[k] = w[3-k]
	}
}

// WarpSums reduces each warp with an unrolled halving shuffle loop and
// reverses a register array with an unrolled counting-down loop.
//
//kern:kernel block=64
func WarpSums(t gpu.Thread, x, sums []float32, out []int32) {
	v := x[t.GlobalX()]
	//kern:unroll
	for off := 16; off > 0; off /= 2 {
		v += gpu.ShflDown(t, v, off)
	}
	if t.Lane() == 0 {
		sums[t.GlobalX()/32] = v
	}
	var a [8]int32
	//kern:unroll
	for i := 7; i >= 0; i-- {
		a[i] = int32(i * t.Lane())
	}
	s := int32(0)
	//kern:unroll
	for k := 1; k < 256; k <<= 1 {
		s += a[bitsIndex(k)]
	}
	out[t.GlobalX()] = s
}

// bitsIndex is the index of k's highest set bit, for k < 256.
func bitsIndex(k int) int {
	n := 0
	for k > 1 {
		k >>= 1
		n++
	}
	return n
}

// Votes writes each thread's warp ballot, any and all of pred.
//
//kern:kernel
func Votes(t gpu.Thread, pred []bool, ballot []uint32, any, all []bool) {
	i := t.GlobalX()
	p := i < len(pred) && pred[i]
	b, a, l := gpu.Ballot(t, p), gpu.Any(t, p), gpu.All(t, p)
	if i < len(ballot) {
		ballot[i], any[i], all[i] = b, a, l
	}
}

// FaultAt makes the one thread of block where[0:3], thread where[3:6]
// fail as where[6] says: 0 writes x[where[7]] (out of range when where[7]
// >= len(x)), 1 panics, 2 divides by where[7] (a zero divisor panics), 3
// slices x[where[7]:], 4 x[:where[7]]. The others do nothing, so the
// fault's block and thread are known in 3-D.
//
//kern:kernel
func FaultAt(t gpu.Thread, where []int32, x []int32) {
	b, th := t.BlockIdx(), t.ThreadIdx()
	if b.X != int(where[0]) || b.Y != int(where[1]) || b.Z != int(where[2]) {
		return
	}
	if th.X != int(where[3]) || th.Y != int(where[4]) || th.Z != int(where[5]) {
		return
	}
	mode, arg := where[6], where[7]
	if mode == 0 {
		i := int(arg)
		x[i] = 1
	} else if mode == 1 {
		panic("fault requested")
	} else if mode == 2 {
		q := 7 / arg
		x[0] = q
	} else if mode == 3 {
		s := x[arg:]
		s[0] = 2
	} else {
		s := x[:arg]
		s[0] = 3
	}
}

// Spin counts to limit[0] unless stop[0] is set first: with a large
// limit, a kernel that runs far longer than any test should wait (the
// limit ends it in native mode, where Go cannot stop a goroutine).
//
//kern:kernel block=32
func Spin(t gpu.Thread, stop, limit []int32, out []int32) {
	n := int32(0)
	for stop[0] == 0 && n < limit[0] {
		n++
	}
	out[t.GlobalX()] = n
}

// Vec4At copies x[off+4i .. off+4i+3] to out[4i ..] with gpu.Load4 and
// gpu.Store4: an off that is not a multiple of 4 makes the load
// misaligned, which every device reports as a panic at the call.
//
//kern:kernel block=64
func Vec4At(t gpu.Thread, x, out []float32, off int) {
	i := 4 * t.GlobalX()
	if i+3 < len(out) {
		gpu.Store4(out, i, gpu.Load4(x, off+i))
	}
}
