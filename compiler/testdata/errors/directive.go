// Malformed directives.
package directive

import "github.com/gokern/kern/gpu"

//kern:kernel block=0
func ZeroBlock(t gpu.Thread) {} // ERROR@-1 BadDirective "block dimension \"0\""

//kern:kernel block=2048
func HugeBlock(t gpu.Thread) {} // ERROR@-1 BadDirective "block dimension \"2048\""

//kern:kernel block=64x32
func TooManyThreads(t gpu.Thread) {} // ERROR@-1 BadDirective "block=64x32 has 2048 threads"

//kern:kernel block=2x2x2x2
func FourDims(t gpu.Thread) {} // ERROR@-1 BadDirective "more than 3 dimensions"

//kern:kernel block=abc
func NotANumber(t gpu.Thread) {} // ERROR@-1 BadDirective "block dimension \"abc\""

//kern:kernel fast
func UnknownOption(t gpu.Thread) {} // ERROR@-1 BadDirective "unknown //kern:kernel option \"fast\""

//kern:kernel
func UnrollNonConstant(t gpu.Thread, n int, out []int) {
	s := 0
	//kern:unroll
	for i := 0; i < n; i++ { // ERROR BadUnroll "needs a loop of the form"
		s += i
	}
	//kern:unroll
	for i := range 100000 { // ERROR BadUnroll "needs a loop of the form"
		s += i
	}
	// ERROR@+1 BadUnroll "must be on the line just above a for loop"
	//kern:unroll
	s++
	out[0] = s
}
