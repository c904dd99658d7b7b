// A kernel's 32-bit entry (//kern:kernel ... idx32, index32.go): Gather
// is compiled twice, as Gather and Gather_i32. In the second, rows, cols,
// len(x) and len(out) are bounded to int32 by the launch, so q / cols and
// q % cols are 32-bit, r*cols + c is one mul.wide.s32 and an add (the
// product may pass 2^31), r < rows one 32-bit compare and a checked
// element's address a mul.wide.u32; w = i*7, which may pass 2^31, stays
// 64-bit.
package index32

import "github.com/gokern/kern/gpu"

//kern:kernel block=128 idx32
func Gather(t gpu.Thread, x, out []float32, rows, cols int) {
	i := t.GlobalX()
	if i >= len(out) {
		return
	}
	q := i / 2
	r, c := q/cols, q%cols
	if r < rows && c < cols {
		out[i] = x[r*cols+c]
	}
	if w := i * 7; w < len(x) {
		out[i] += x[w]
	}
}
