package tile

import "github.com/gokern/kern/gpu"

// Element-wise operations on 2-D tiles, with another tile or a broadcast
// scalar (…S), and reductions along an axis. A reduction keeps the tile's
// shape (as Triton's keep_dims): every element becomes the reduction of
// its row (RowSums, RowMaxes) or column (ColSums, ColMaxes), so its
// result combines with the tile element-wise, which is the broadcast.
// Every loop is over registers and unrolled.

// binop is an element-wise operation, a type so that mapMat and
// colReduce are instantiated per operation (kernels have no func values).
type binop interface {
	~struct{}
	f(a, b float32) float32
}

type (
	addOp  struct{}
	subOp  struct{}
	mulOp  struct{}
	divOp  struct{}
	maxOp  struct{}
	expOp  struct{} // e^a, b ignored
	siluOp struct{} // a·sigmoid(a), b ignored
)

func (addOp) f(a, b float32) float32 { return a + b }
func (subOp) f(a, b float32) float32 { return a - b }
func (mulOp) f(a, b float32) float32 { return a * b }
func (divOp) f(a, b float32) float32 { return a / b }
func (maxOp) f(a, b float32) float32 { return gpu.Max(a, b) }
func (expOp) f(a, _ float32) float32 { return gpu.Exp(a) }

// a/(1+e^-a), as ops' SiLU computes it.
func (siluOp) f(a, _ float32) float32 { return a / (1 + gpu.Exp(-a)) }

// mapMat returns op applied to each pair of elements of m and s.
func mapMat[O binop, R Regs2[K], K Regs](m, s Mat[R, K]) Mat[R, K] {
	var op O
	//kern:unroll
	for i := range len(m.v) {
		//kern:unroll
		for j := range len(m.v[0]) {
			m.v[i][j] = op.f(m.v[i][j], s.v[i][j])
		}
	}
	return m
}

// Add returns m + s.
func (m Mat[R, K]) Add(s Mat[R, K]) Mat[R, K] { return mapMat[addOp](m, s) }

// Sub returns m - s.
func (m Mat[R, K]) Sub(s Mat[R, K]) Mat[R, K] { return mapMat[subOp](m, s) }

// Mul returns m · s.
func (m Mat[R, K]) Mul(s Mat[R, K]) Mat[R, K] { return mapMat[mulOp](m, s) }

// Div returns m / s.
func (m Mat[R, K]) Div(s Mat[R, K]) Mat[R, K] { return mapMat[divOp](m, s) }

// Maximum returns the element-wise maximum of m and s (gpu.Max).
func (m Mat[R, K]) Maximum(s Mat[R, K]) Mat[R, K] { return mapMat[maxOp](m, s) }

// AddS returns m + c.
func (m Mat[R, K]) AddS(c float32) Mat[R, K] { return m.Add(FullMat[R, K](c)) }

// SubS returns m - c.
func (m Mat[R, K]) SubS(c float32) Mat[R, K] { return m.Sub(FullMat[R, K](c)) }

// MulS returns m · c.
func (m Mat[R, K]) MulS(c float32) Mat[R, K] { return m.Mul(FullMat[R, K](c)) }

// DivS returns m / c.
func (m Mat[R, K]) DivS(c float32) Mat[R, K] { return m.Div(FullMat[R, K](c)) }

// Exp returns e^m element-wise (gpu.Exp's error bound).
func (m Mat[R, K]) Exp() Mat[R, K] { return mapMat[expOp](m, m) }

// SiLU returns m·sigmoid(m) element-wise (m/(1+e^-m)).
func (m Mat[R, K]) SiLU() Mat[R, K] { return mapMat[siluOp](m, m) }

// RowSums returns the tile with every element the sum of its row. A row
// is one warp's: registers, then a shuffle butterfly (every lane of the
// block calls it, under uniform control flow).
func (m Mat[R, K]) RowSums(t gpu.Thread) Mat[R, K] {
	//kern:unroll
	for i := range len(m.v) {
		s := float32(0)
		//kern:unroll
		for j := range len(m.v[i]) {
			s += m.v[i][j]
		}
		s = gpu.WarpSum(t, s)
		//kern:unroll
		for j := range len(m.v[i]) {
			m.v[i][j] = s
		}
	}
	return m
}

// RowMaxes returns the tile with every element the maximum of its row
// (as RowSums).
func (m Mat[R, K]) RowMaxes(t gpu.Thread) Mat[R, K] {
	//kern:unroll
	for i := range len(m.v) {
		s := NegInf()
		//kern:unroll
		for j := range len(m.v[i]) {
			s = gpu.Max(s, m.v[i][j])
		}
		s = gpu.WarpMax(t, s)
		//kern:unroll
		for j := range len(m.v[i]) {
			m.v[i][j] = s
		}
	}
	return m
}

// ColSums returns the tile with every element the sum of its column (a
// block reduction through shared memory: every thread calls it, under
// uniform control flow).
func (m Mat[R, K]) ColSums(t gpu.Thread) Mat[R, K] {
	return colReduce[addOp](t, m)
}

// ColMaxes returns the tile with every element the maximum of its column
// (as ColSums).
func (m Mat[R, K]) ColMaxes(t gpu.Thread) Mat[R, K] { return colReduce[maxOp](t, m) }

// colReduce reduces each column of m with op: in registers over the warp's
// rows, then over the warps through a shared array of one float32 per
// thread (warp w, lane l at [32w + l]), read back by every warp, for
// each register column j in turn. The barrier before each write keeps
// the previous column's (or the previous call's) readers safe.
func colReduce[O binop, R Regs2[K], K Regs](t gpu.Thread, m Mat[R, K]) Mat[R, K] {
	var op O
	sm := gpu.Shared[float32](t, 1024) // one per thread of the largest block
	w, l, warps := t.Warp(), t.Lane(), t.BlockDim().X/gpu.WarpSize
	//kern:unroll
	for j := range len(m.v[0]) {
		s := m.v[0][j]
		//kern:unroll
		for i := 1; i < len(m.v); i++ {
			s = op.f(s, m.v[i][j])
		}
		t.Sync()
		sm[w*gpu.WarpSize+l] = s
		t.Sync()
		s = sm[l]
		for k := 1; k < warps; k++ {
			s = op.f(s, sm[k*gpu.WarpSize+l])
		}
		//kern:unroll
		for i := range len(m.v) {
			m.v[i][j] = s
		}
	}
	return m
}
