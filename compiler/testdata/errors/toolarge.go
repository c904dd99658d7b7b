// Helpers that each call the next twice grow exponentially when inlined;
// the compiler stops at a size limit instead of running out of memory.
package toolarge

import "github.com/gokern/kern/gpu"

func f0(x int) int  { return f1(x) + f1(x+1) }
func f1(x int) int  { return f2(x) + f2(x+1) }
func f2(x int) int  { return f3(x) + f3(x+1) }
func f3(x int) int  { return f4(x) + f4(x+1) }
func f4(x int) int  { return f5(x) + f5(x+1) }
func f5(x int) int  { return f6(x) + f6(x+1) }
func f6(x int) int  { return f7(x) + f7(x+1) }
func f7(x int) int  { return f8(x) + f8(x+1) }
func f8(x int) int  { return f9(x) + f9(x+1) }
func f9(x int) int  { return f10(x) + f10(x+1) }
func f10(x int) int { return f11(x) + f11(x+1) }
func f11(x int) int { return f12(x) + f12(x+1) }
func f12(x int) int { return f13(x) + f13(x+1) }
func f13(x int) int { return f14(x) + f14(x+1) }
func f14(x int) int { return f15(x) + f15(x+1) }
func f15(x int) int { return f16(x) + f16(x+1) }
func f16(x int) int { return f17(x) + f17(x+1) }
func f17(x int) int { return f18(x) + f18(x+1) }
func f18(x int) int { return f19(x) + f19(x+1) }
func f19(x int) int { return f20(x) + f20(x+1) }
func f20(x int) int { return f21(x) + f21(x+1) }
func f21(x int) int { return x + 1 }

//kern:kernel
func K(t gpu.Thread, out []int) { // ERROR KernelTooLarge "kernel K grows past 262144 registers"
	out[0] = f0(3)
}
