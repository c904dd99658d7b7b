// Shared memory sizes must be constant and fit in 48 KiB.
package shared

import "github.com/gokern/kern/gpu"

//kern:kernel
func NonConstant(t gpu.Thread, n int, out []float32) {
	s := gpu.Shared[float32](t, n) // ERROR NonConstantShared "needs a constant length"
	out[0] = s[0]
}

//kern:kernel
func TooLarge(t gpu.Thread, out []float32) { // ERROR SharedTooLarge "49156 bytes of static shared memory"
	a := gpu.Shared[float32](t, 8192)
	b := gpu.Shared[float64](t, 2048)
	c := gpu.Shared[float32](t, 1)
	out[0] = a[0] + float32(b[0]) + c[0]
}

//kern:kernel
func Negative(t gpu.Thread, out []float32) {
	s := gpu.Shared[float32](t, -1) // ERROR NonConstantShared "negative"
	out[0] = s[0]
}

//kern:kernel
func Overflow(t gpu.Thread, out []float64) {
	s := gpu.Shared[float64](t, 1<<61) // ERROR SharedTooLarge "more than the 49152 bytes"
	out[0] = s[0]
}
