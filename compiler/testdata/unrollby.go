// //kern:unroll N on loops whose trip count is known only at run time
// (compiler/unroll_partial.go): N copies of the body without the loop
// test, behind one guard, then the loop as written for the rest.
package unrollby

import "github.com/gokern/kern/gpu"

// Sum: a strided reduction unrolled by 4.
//
//kern:kernel block=128
func Sum(t gpu.Thread, x, out []float32, n int) {
	var acc float32
	//kern:unroll 4
	for i := t.GlobalX(); i < n; i += 128 {
		if i < len(x) {
			acc += x[i]
		}
	}
	out[t.GlobalX()] = acc
}

// MMA: a k loop with tensor-core fragments, an int32 counter and a break.
//
//kern:kernel block=32
func MMA(t gpu.Thread, a, b []gpu.Half, c []float32, k int32) {
	var acc [4]float32
	g, tg := int32(t.Lane()/4), int32(t.Lane()%4)
	//kern:unroll 2
	for k0 := int32(0); k0 < k; k0 += 16 {
		if k0 >= 4096 {
			break
		}
		i := g*k + k0 + 2*tg
		fa := [4]uint32{gpu.PackHalf2(a[i], a[i+1]), 0, gpu.PackHalf2(a[i+8], a[i+9]), 0}
		fb := [2]uint32{gpu.PackHalf2(b[i], b[i+1]), gpu.PackHalf2(b[i+8], b[i+9])}
		acc = gpu.MMAF16(t, fa, fb, acc)
	}
	c[t.Lane()] = acc[0] + acc[1] + acc[2] + acc[3]
}
