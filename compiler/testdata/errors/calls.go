// Calls to functions kernels cannot call.
package calls

import (
	"math"
	"math/bits"

	"github.com/gokern/kern/gpu"
)

//kern:kernel
func Unsupported(t gpu.Thread, out []float64, u []uint64) {
	s, c := math.Sincos(out[0])      // ERROR UnsupportedCall "math.Sincos is not supported"
	out[1] = math.Gamma(s + c)       // ERROR UnsupportedCall "math.Gamma is not supported"
	hi, lo := bits.Mul64(u[0], u[1]) // ERROR UnsupportedCall "bits.Mul64 is not supported"
	u[2] = hi + lo
}
