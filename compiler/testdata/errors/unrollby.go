// //kern:unroll N that cannot apply.
package errs

import "github.com/gokern/kern/gpu"

//kern:kernel
func UnrollByBad(t gpu.Thread, n int, out []int) {
	s := 0
	// ERROR@+1 BadUnroll "the factor must be an integer from 2 to 16"
	//kern:unroll 1
	for i := 0; i < n; i++ {
		s += i
	}
	// ERROR@+1 BadUnroll "the factor must be an integer from 2 to 16"
	//kern:unroll x
	for i := 0; i < n; i++ {
		s += i
	}
	// ERROR@+1 BadUnroll "takes at most one argument"
	//kern:unroll 2 4
	for i := 0; i < n; i++ {
		s += i
	}
	//kern:unroll 4
	for i := range n { // ERROR BadUnroll "needs a three-clause loop"
		s += i
	}
	//kern:unroll 4
	for i := 0; i < n; i *= 2 { // ERROR BadUnroll "cannot unroll this loop by N"
		s += i
	}
	//kern:unroll 4
	for i := 0; i < n; i++ { // ERROR BadUnroll "cannot unroll this loop by N"
		n--
	}
	out[0] = s
}
