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

//kern:kernel block=64 block=128
func TwiceBlock(t gpu.Thread) {} // ERROR@-1 BadDirective "option block is given twice"

//kern:kernel nobounds nobounds
func TwiceNobounds(t gpu.Thread) {} // ERROR@-1 BadDirective "option nobounds is given twice"

//kern:kernal
func Misspelt(t gpu.Thread) {} // ERROR@-1 BadDirective "unknown directive //kern:kernal: did you mean //kern:kernel\\?"

//kern:fast
func Unknown(t gpu.Thread) {} // ERROR@-1 BadDirective "unknown directive //kern:fast \\(kern knows"

// kern:kernel
func Spaced(t gpu.Thread) {} // ERROR@-1 BadDirective "is a comment, not a directive: write //kern:kernel"

//kern:kernel

func Detached(t gpu.Thread) {} // ERROR@-2 BadDirective "not attached to a func"

//kern:kernel
var notAFunc int // ERROR@-1 BadDirective "on a var declaration"

//kern:kernel
func InBody(t gpu.Thread, out []int) {
	//kern:kernel
	out[0] = 1 // ERROR@-1 BadDirective "not attached to a func"
}

//kern:kernel minblocks=2
func MinBlocksNoBlock(t gpu.Thread) {} // ERROR@-1 BadDirective "minblocks=2 needs block="

//kern:kernel block=64 minblocks=0
func MinBlocksZero(t gpu.Thread) {} // ERROR@-1 BadDirective "minblocks=0 is not an integer in 1..32"

//kern:kernel block=64 maxregs=8
func MaxRegsTooFew(t gpu.Thread) {} // ERROR@-1 BadDirective "maxregs=8 is not an integer in 16..255"

//kern:kernel maxregs=256
func MaxRegsTooMany(t gpu.Thread) {} // ERROR@-1 BadDirective "maxregs=256 is not an integer in 16..255"

//kern:kernel maxregs=32 maxregs=40
func MaxRegsTwice(t gpu.Thread) {} // ERROR@-1 BadDirective "option maxregs is given twice"

//kern:kernel
func NoUnrollAstray(t gpu.Thread, x []float32) {
	//kern:nounroll
	x[0] = 1 // ERROR@-1 BadUnroll "//kern:nounroll must be on the line just above a three-clause for loop"
}
