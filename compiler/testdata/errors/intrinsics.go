// Intrinsic arguments that must be constant, in range, or in a given
// state space.
package intrinsics

import "github.com/gokern/kern/gpu"

//kern:kernel block=32
func BadArgs(t gpu.Thread, x []float32, d []float64, n int) {
	s := gpu.Shared[float32](t, 128)
	gpu.CpAsync(t, &s[0], &x[0], 12)         // ERROR BadIntrinsicArg "constant size of 4, 8 or 16 bytes"
	gpu.CpAsync(t, &s[0], &x[0], n)          // ERROR BadIntrinsicArg "constant size of 4, 8 or 16 bytes"
	gpu.CpAsync(t, &x[0], &x[4], 16)         // ERROR BadIntrinsicArg "dst of gpu.CpAsync must point into shared memory"
	gpu.CpAsync(t, &s[0], &s[4], 16)         // ERROR BadIntrinsicArg "src of gpu.CpAsync must point into a slice parameter"
	gpu.CpAsyncWait(t, n)                    // ERROR BadIntrinsicArg "constant group count 0..7"
	gpu.CpAsyncWait(t, 8)                    // ERROR BadIntrinsicArg "constant group count 0..7"
	x[1] = float32(gpu.LdMatrixX1(t, &x[0])) // ERROR BadIntrinsicArg "row pointer of gpu.LdMatrixX1 must point into shared memory"
	v := gpu.Load4(d, 0)                     // ERROR BadIntrinsicArg "moves 256 bits"
	d[0] = v[0]
}

//kern:kernel
func AtomicOnLocal(t gpu.Thread, out []int32) {
	var c [2]int32
	gpu.AtomicAdd(&c[0], 1) // ERROR UnsupportedConstruct "needs an element of a slice or shared array"
	out[0] = c[0]
}
