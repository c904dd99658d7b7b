// Control flow: if/else, loops of every form, break, continue, early
// return, switch and short-circuit && and ||.
package control

import "github.com/gokern/kern/gpu"

//kern:kernel
func IfElse(t gpu.Thread, x, out []float32) {
	i := t.GlobalX()
	if i >= len(out) || i >= len(x) {
		return
	}
	v := x[i]
	if v < 0 {
		v = -v
	} else if v > 10 {
		v = 10
	} else {
		v *= 2
	}
	out[i] = v
}

//kern:kernel
func ForLoops(t gpu.Thread, x []float32, n int, out []float32) {
	i := t.GlobalX()
	if i >= len(out) {
		return
	}
	var s float32
	for j := 0; j < n; j++ { // three-clause
		s += x[j]
	}
	k := 1
	for k < n { // condition only
		k *= 2
	}
	for j := range n { // range over int
		s += float32(j)
	}
	for j, v := range x { // range over slice
		s += v * float32(j)
	}
	for _, v := range x {
		s -= v
	}
	for range 4 {
		s *= 0.5
	}
	out[i] = s + float32(k)
}

//kern:kernel
func BreakContinue(t gpu.Thread, x []int32, out []int32) {
	i := t.GlobalX()
	if i >= len(out) {
		return
	}
	var s int32
	for j := 0; j < len(x); j++ {
		if x[j] < 0 {
			continue
		}
		if x[j] == 99 {
			break
		}
		s += x[j]
	}
	for {
		s--
		if s < 100 {
			break
		}
	}
outer:
	for a := 0; a < 4; a++ {
		for b := 0; b < 4; b++ {
			if int32(a*b) == s {
				break outer
			}
			if b > a {
				continue outer
			}
			s++
		}
	}
	out[i] = s
}

//kern:kernel
func EarlyReturn(t gpu.Thread, x, out []float32) {
	i := t.GlobalX()
	if i >= len(x) {
		return
	}
	if x[i] == 0 {
		return
	}
	if i < len(out) {
		out[i] = 1 / x[i]
	}
}

//kern:kernel
func Switch(t gpu.Thread, op []int32, out []int32) {
	i := t.GlobalX()
	if i >= len(op) || i >= len(out) {
		return
	}
	var r int32
	switch op[i] {
	case 0:
		r = 10
	case 1, 2:
		r = 20
	case 3:
		r = 30
		fallthrough
	case 4:
		r += 40
	default:
		r = -1
	}
	switch {
	case r > 50:
		r -= 50
	case r < 0:
		r = 0
	}
	out[i] = r
}

//kern:kernel
func ShortCircuit(t gpu.Thread, x []int32, out []bool) {
	i := t.GlobalX()
	// x[i] is evaluated only when i < len(x): no bounds check fires on the
	// false side of &&.
	ok := i < len(x) && x[i] > 0 || i == 0
	bad := i >= len(out) || !ok
	if !bad {
		out[i] = ok && (i%2 == 0 || i%3 == 0)
	}
}
