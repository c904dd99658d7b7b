// Go constructs outside the kernel language, each rejected at its
// position with a coded diagnostic.
package unsupported

import "github.com/gokern/kern/gpu"

//kern:kernel
func Closure(t gpu.Thread, out []int) {
	f := func(x int) int { return x + 1 } // ERROR UnsupportedClosure "func literals"
	out[0] = f(1)
}

//kern:kernel
func Map(t gpu.Thread, out []int) {
	m := map[int]int{1: 2} // ERROR UnsupportedMap "maps are not supported"
	out[0] = m[1]
}

//kern:kernel
func Goroutine(t gpu.Thread, out []int) {
	go helper(out) // ERROR UnsupportedGoroutine "go statements"
}

func helper(out []int) { out[0] = 1 }

//kern:kernel
func Channels(t gpu.Thread, out []int) {
	var c chan int // ERROR UnsupportedChannel "channels are not supported"
	c <- 1         // ERROR UnsupportedChannel "channel sends"
	out[0] = <-c   // ERROR UnsupportedChannel "channel receives"
	select {       // ERROR UnsupportedChannel "select is not supported"
	default:
	}
}

//kern:kernel
func Defer(t gpu.Thread, out []int) {
	defer helper(out) // ERROR UnsupportedDefer "defer is not supported"
}

//kern:kernel
func Strings(t gpu.Thread, out []uint8) {
	s := "hello" // ERROR UnsupportedString "strings are not supported"
	out[0] = s[0]
}

//kern:kernel
func Allocation(t gpu.Thread, out []float32) {
	a := make([]float32, 4) // ERROR HeapAllocation "make allocates"
	p := new(float32)       // ERROR HeapAllocation "new allocates"
	a = append(a, *p)       // ERROR HeapAllocation "append allocates"
	b := []float32{1, 2, 3} // ERROR HeapAllocation "slice literals allocate"
	out[0] = a[0] + b[0]
}

type shape interface{ area() float32 }

type square struct{ side float32 }

func (s square) area() float32 { return s.side * s.side }

//kern:kernel
func Interface(t gpu.Thread, out []float32) {
	var s shape = square{2} // ERROR UnsupportedInterface "interface values"
	out[0] = s.area()
}

//kern:kernel
func TypeSwitch(t gpu.Thread, out []float32) {
	var x any         // ERROR UnsupportedInterface "interface values"
	switch x.(type) { // ERROR UnsupportedInterface "type switches"
	case int:
		out[0] = 1
	}
}

//kern:kernel
func Complex(t gpu.Thread, out []float64) {
	c := complex(1, 2) // ERROR UnsupportedType "complex numbers"
	out[0] = real(c)   // ERROR UnsupportedType "complex numbers"
}

//kern:kernel
func Goto(t gpu.Thread, out []int) {
	i := 0
loop:
	i++
	if i < 10 {
		goto loop // ERROR UnsupportedConstruct "goto is not supported"
	}
	out[0] = i
}

//kern:kernel
func Builtins(t gpu.Thread, out []int) {
	println(1)     // ERROR UnsupportedCall "println is not supported"
	copy(out, out) // ERROR UnsupportedCall "copy is not supported"
	clear(out)     // ERROR UnsupportedCall "clear is not supported"
}

//kern:kernel
func FuncValue(t gpu.Thread, out []int) {
	var f func([]int) = helper // ERROR UnsupportedClosure "func values"
	f(out)
}

//kern:kernel
func HugeLocal(t gpu.Thread, out []float32) {
	var m [65536][65536]float32 // ERROR UnsupportedType `local variables of type \[65536\]\[65536\]float32`
	out[0] = m[1][2]
}

func area(s shape) float32 { return s.area() } // ERROR UnsupportedInterface "interface values"

//kern:kernel
func InterfaceArg(t gpu.Thread, out []float32) {
	out[0] = area(square{2}) // ERROR UnsupportedInterface "interface values"
}

//kern:kernel
func MethodCall(t gpu.Thread, out []float32) {
	out[0] = shape(square{3}).area() // ERROR UnsupportedInterface "interface values" ERROR UnsupportedInterface "interface method calls"
}

func apply(f func(float32) float32, x float32) float32 { return f(x) } // ERROR UnsupportedClosure "func values"

func neg(x float32) float32 { return -x }

//kern:kernel
func FuncArg(t gpu.Thread, out []float32) {
	out[0] = apply(neg, 2)
}
