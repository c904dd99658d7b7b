package tile

import "github.com/gokern/kern/gpu"

// Element-wise operations on row tiles, and their forms with a broadcast
// scalar (…S). Each is one instruction per register, unrolled.

// Add returns r + s.
func (r Row[R]) Add(s Row[R]) Row[R] {
	//kern:unroll
	for j := range len(r.v) {
		r.v[j] += s.v[j]
	}
	return r
}

// Sub returns r - s.
func (r Row[R]) Sub(s Row[R]) Row[R] {
	//kern:unroll
	for j := range len(r.v) {
		r.v[j] -= s.v[j]
	}
	return r
}

// Mul returns r · s.
func (r Row[R]) Mul(s Row[R]) Row[R] {
	//kern:unroll
	for j := range len(r.v) {
		r.v[j] *= s.v[j]
	}
	return r
}

// Div returns r / s.
func (r Row[R]) Div(s Row[R]) Row[R] {
	//kern:unroll
	for j := range len(r.v) {
		r.v[j] /= s.v[j]
	}
	return r
}

// Maximum returns the element-wise maximum of r and s (gpu.Max).
func (r Row[R]) Maximum(s Row[R]) Row[R] {
	//kern:unroll
	for j := range len(r.v) {
		r.v[j] = gpu.Max(r.v[j], s.v[j])
	}
	return r
}

// AddS returns r + c.
func (r Row[R]) AddS(c float32) Row[R] {
	//kern:unroll
	for j := range len(r.v) {
		r.v[j] += c
	}
	return r
}

// SubS returns r - c.
func (r Row[R]) SubS(c float32) Row[R] {
	//kern:unroll
	for j := range len(r.v) {
		r.v[j] -= c
	}
	return r
}

// MulS returns r · c.
func (r Row[R]) MulS(c float32) Row[R] {
	//kern:unroll
	for j := range len(r.v) {
		r.v[j] *= c
	}
	return r
}

// DivS returns r / c.
func (r Row[R]) DivS(c float32) Row[R] {
	//kern:unroll
	for j := range len(r.v) {
		r.v[j] /= c
	}
	return r
}

// Exp returns e^r element-wise (gpu.Exp's error bound).
func (r Row[R]) Exp() Row[R] {
	//kern:unroll
	for j := range len(r.v) {
		r.v[j] = gpu.Exp(r.v[j])
	}
	return r
}

// ReduceSum returns the sum of the tile's elements to every thread of the
// block (a block reduction: every thread must call it, under uniform
// control flow).
func (r Row[R]) ReduceSum(t gpu.Thread) float32 {
	s := float32(0)
	//kern:unroll
	for j := range len(r.v) {
		s += r.v[j]
	}
	return gpu.BlockSum(t, s)
}

// SumSquares returns the sum of the squares of the tile's elements, fused
// (one FMA per register), to every thread of the block.
func (r Row[R]) SumSquares(t gpu.Thread) float32 {
	s := float32(0)
	//kern:unroll
	for j := range len(r.v) {
		s = gpu.FMA(r.v[j], r.v[j], s)
	}
	return gpu.BlockSum(t, s)
}

// ReduceMax returns the largest element of the tile to every thread of the
// block (a block reduction, as ReduceSum).
func (r Row[R]) ReduceMax(t gpu.Thread) float32 {
	m := NegInf()
	//kern:unroll
	for j := range len(r.v) {
		m = gpu.Max(m, r.v[j])
	}
	return gpu.BlockMax(t, m)
}
