// Helpers are inlined, so recursion (direct or mutual) is rejected at the
// recursive call.
package recursion

import "github.com/gokern/kern/gpu"

func fact(n int) int {
	if n <= 1 {
		return 1
	}
	return n * fact(n-1) // ERROR UnsupportedRecursion "recursive call to fact"
}

func even(n int) bool {
	if n == 0 {
		return true
	}
	return odd(n - 1)
}

func odd(n int) bool {
	if n == 0 {
		return false
	}
	return even(n - 1) // ERROR UnsupportedRecursion "recursive call to even"
}

//kern:kernel
func Direct(t gpu.Thread, out []int) {
	out[0] = fact(5)
}

//kern:kernel
func Mutual(t gpu.Thread, out []bool) {
	out[0] = even(7)
}
