// Adjacent loads and stores of one slice merged into ld.v2/v4 and
// st.v2/v4 where the address is provably aligned (compiler/vecmerge.go),
// and the cases that stay scalar.
package vecmerge

import "github.com/gokern/kern/gpu"

// Quad: the re-slices start at a multiple of 4 elements (16 bytes) and
// their constant indices are proven in range, so the four loads are one
// ld.v4 and the four stores one st.v4.
//
//kern:kernel block=128
func Quad(t gpu.Thread, x, y []float32) {
	i := 4 * t.GlobalX()
	if i+4 <= len(x) && i+4 <= len(y) {
		xs, ys := x[i:i+4], y[i:i+4]
		a, b, c, d := xs[0], xs[1], xs[2], xs[3]
		ys[0], ys[1], ys[2], ys[3] = d, c, b, a
	}
}

// Pair: 64-bit halves of a 128-bit pair; loads merge though their checks
// stay (a load has no effect before a failing check), the stores do not.
//
//kern:kernel block=128
func Pair(t gpu.Thread, x, y []float64) {
	i := 2 * t.GlobalX()
	a, b := x[i], x[i+1]
	y[i], y[i+1] = b, a
}

// Scalar: an index of unknown parity, a value used between the loads, and
// a load between two stores stay element by element.
//
//kern:kernel block=128
func Scalar(t gpu.Thread, x, y []float32, k int) {
	i := t.GlobalX() * k
	if i >= 0 && i+3 < len(x) && i+3 < len(y) {
		y[i], y[i+1] = x[i], x[i+1]
	}
	j := 2 * t.GlobalX()
	if j >= 0 && j+1 < len(x) && j+1 < len(y) {
		a := x[j]
		y[j] = a
		b := x[j+1] + a
		y[j+1] = b
	}
}

// Shared: gpu.Shared arrays are 16-byte aligned, so Load4 at 4·lane needs
// no alignment check and x[2l], x[2l+1] of one merge (ld.shared.v2).
//
//kern:kernel block=32
func Shared(t gpu.Thread, out []float32) {
	s := gpu.Shared[float32](t, 128)
	l := t.Lane()
	s[l] = float32(l)
	t.Sync()
	v := gpu.Load4(s, 4*l)
	a, b := s[2*l], s[2*l+1]
	out[l] = v[0] + v[3] + a*b
}
