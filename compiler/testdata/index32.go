// A kernel's 32-bit entry (//kern:kernel ... idx32, index32.go): Gather
// is compiled twice, as Gather and Gather_i32. In the second, rows, cols,
// len(x) and len(out) are bounded to int32 by the launch, so q / cols and
// q % cols are 32-bit, r < rows one 32-bit compare and an element's address
// a mul.wide.u32; x[r*cols+c] has no check, proven by launch facts (cols ≥ 1,
// len(x) ≥ (rows−1)·cols + cols: launchfact.go) the launch tests before it
// picks Gather_i32; w = i*7, which may pass 2^31, stays 64-bit.
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
