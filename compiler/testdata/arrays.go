// Local arrays and structs: constant-index arrays stay in registers,
// dynamically indexed ones live in .local memory, arrays are values.
package arrays

import "github.com/gokern/kern/gpu"

// RegisterArray only uses constant indices (the unrolled loop makes them
// constant), so acc stays in registers: no .local, no stack frame.
//
//kern:kernel
func RegisterArray(t gpu.Thread, x, out []float32) {
	i := t.GlobalX()
	if i >= len(out) {
		return
	}
	var acc [4]float32
	acc[0] = 1
	acc[1] = 2
	acc[2] = acc[0] + acc[1]
	acc[3] = acc[2] * 2
	if i < len(x) {
		acc[1] += x[i]
	}
	out[i] = acc[0] + acc[1] + acc[2] + acc[3]
}

// DynamicIndex indexes local arrays with thread-dependent indices: the
// arrays are in .local memory and bounds-checked.
//
//kern:kernel
func DynamicIndex(t gpu.Thread, idx []int, out []float32) {
	i := t.GlobalX()
	if i >= len(out) || i >= len(idx) {
		return
	}
	var table [16]float32
	for j := range table {
		table[j] = float32(j * j)
	}
	var hist [64]int32
	for j := 0; j < len(idx); j++ {
		hist[idx[j]&63]++
	}
	out[i] = table[idx[i]] + float32(hist[i&63])
}

// ArrayValue passes, copies and returns arrays by value: the copy is
// independent of the original.
//
//kern:kernel
func ArrayValue(t gpu.Thread, out []int32) {
	i := t.GlobalX()
	if i+2 >= len(out) || i < 0 {
		return
	}
	a := [3]int32{1, 2, 3}
	b := a
	b[0] = 10
	c := scale3(b, 2)
	out[i] = a[0] + c[0]
	out[i+1] = c[1]
	out[i+2] = c[2]
}

func scale3(v [3]int32, k int32) [3]int32 {
	v[0] *= k
	v[1] *= k
	v[2] *= k
	return v
}

type particle struct {
	pos, vel [2]float32
	alive    bool
}

// StructLocal keeps a struct local with an array field.
//
//kern:kernel
func StructLocal(t gpu.Thread, px, py, vx, vy []float32, dt float32) {
	i := t.GlobalX()
	if i >= len(px) || i >= len(py) || i >= len(vx) || i >= len(vy) {
		return
	}
	p := particle{pos: [2]float32{px[i], py[i]}, vel: [2]float32{vx[i], vy[i]}, alive: true}
	p = step(p, dt)
	if p.alive {
		px[i], py[i] = p.pos[0], p.pos[1]
	}
}

func step(p particle, dt float32) particle {
	p.pos[0] += p.vel[0] * dt
	p.pos[1] += p.vel[1] * dt
	if p.pos[1] < 0 {
		p.alive = false
	}
	return p
}

// ArrayIndexValue indexes an array value (not a variable) with a variable
// index.
//
//kern:kernel
func ArrayIndexValue(t gpu.Thread, k []int, out []float32) {
	i := t.GlobalX()
	if i < len(out) && i < len(k) {
		w := [4]float32{0.1, 0.2, 0.3, 0.4}
		out[i] = weights(w, k[i])
	}
}

func weights(w [4]float32, j int) float32 { return w[j] }

// LocalSlice slices a local array and indexes the slice.
//
//kern:kernel
func LocalSlice(t gpu.Thread, out []float32) {
	i := t.GlobalX()
	if i >= len(out) {
		return
	}
	var buf [8]float32
	s := buf[2:6]
	for j := range s {
		s[j] = float32(j)
	}
	out[i] = buf[3] + s[len(s)-1]
}
