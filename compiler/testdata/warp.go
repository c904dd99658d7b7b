// Warp collectives: shuffles of every word type, reductions, votes and
// the warp barrier.
package warp

import "github.com/gokern/kern/gpu"

// Shuffles moves every word type; every lane takes part, including those
// past the end of the slices.
//
//kern:kernel block=32
func Shuffles(t gpu.Thread, i32 []int32, u32 []uint32, f32 []float32, n []int, f64 []float64) {
	i := t.GlobalX()
	ok := i < len(i32) && i < len(u32) && i < len(f32) && i < len(n) && i < len(f64)
	var a int32
	var b uint32
	var c float32
	var d int
	var e float64
	if ok {
		a, b, c, d, e = i32[i], u32[i], f32[i], n[i], f64[i]
	}
	a = gpu.ShflXor(t, a, 1)
	b = gpu.ShflDown(t, b, 2)
	c = gpu.ShflUp(t, c, 4)
	d = gpu.ShflIdx(t, d, 0)
	e = gpu.ShflXor(t, e, 16)
	lane := t.Lane()
	c += gpu.ShflIdx(t, c, (lane+1)%32)
	if ok {
		i32[i], u32[i], f32[i], n[i], f64[i] = a, b, c, d, e
	}
}

//kern:kernel
func Reductions(t gpu.Thread, f []float32, d []float64, n []int32, u []uint64) {
	i := t.GlobalX()
	var fv float32
	var dv float64
	var nv int32
	var uv uint64
	if i < len(f) && i < len(d) && i < len(n) && i < len(u) {
		fv, dv, nv, uv = f[i], d[i], n[i], u[i]
	}
	// Every lane reaches the reductions, including those past the end.
	s := gpu.WarpSum(t, fv)
	m := gpu.WarpMax(t, dv)
	lo := gpu.WarpMin(t, nv)
	us := gpu.WarpSum(t, uv)
	if t.Lane() == 0 && i < len(f) && i < len(d) && i < len(n) && i < len(u) {
		f[i], d[i], n[i], u[i] = s, m, lo, us
	}
}

//kern:kernel
func Votes(t gpu.Thread, x []float32, ballots []uint32, flags []bool) {
	i := t.GlobalX()
	pos := i < len(x) && x[i] > 0
	mask := gpu.Ballot(t, pos)
	any := gpu.Any(t, pos)
	all := gpu.All(t, pos)
	t.SyncWarp()
	if w := i / 32; t.Lane() == 0 && w < len(ballots) && 2*w+1 < len(flags) {
		ballots[w] = mask
		flags[2*w] = any
		flags[2*w+1] = all
	}
}

// WarpUniformBranch shuffles under a branch every lane of a warp takes
// the same way (the warp index is warp-uniform).
//
//kern:kernel block=128
func WarpUniformBranch(t gpu.Thread, x []float32) {
	i := t.GlobalX()
	if t.Warp() == 0 {
		var v float32
		if i < len(x) {
			v = x[i]
		}
		v = gpu.WarpSum(t, v)
		if i < len(x) {
			x[i] = v
		}
	}
}
