// Which slice parameters a kernel writes (Kernel.Params[i].Writes, used by
// the launcher's aliasing checks), however the write reaches them; the
// others are loaded through the read-only path.
package writes

import "github.com/gokern/kern/gpu"

func set(s []float32, i int, v float32) {
	if i < len(s) {
		s[i] = v
	}
}

//kern:kernel
func ThroughHelper(t gpu.Thread, x, out []float32) {
	i := t.GlobalX()
	if i < len(x) {
		set(out, i, x[i])
	}
}

//kern:kernel
func ThroughReslice(t gpu.Thread, x, out []float32) {
	i := t.GlobalX()
	if i < len(x) && len(out) > 1 {
		tail := out[1:]
		if i < len(tail) {
			tail[i] = x[i]
		}
	}
}

//kern:kernel
func ThroughPointer(t gpu.Thread, x, out []float32) {
	i := t.GlobalX()
	if i < len(x) && i < len(out) {
		p := &out[i]
		*p = x[i]
	}
}

// LenOnly reads only the length of n.
//
//kern:kernel
func LenOnly(t gpu.Thread, n []int32, out []int32) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = int32(len(n))
	}
}

// EitherOf writes one of two buffers chosen at run time: both count as
// written.
//
//kern:kernel
func EitherOf(t gpu.Thread, a, b []float32, first bool) {
	s := a
	if !first {
		s = b
	}
	if i := t.GlobalX(); i < len(s) {
		s[i] = 1
	}
}

// InPlace reads and writes the same buffer: its loads are coherent.
//
//kern:kernel
func InPlace(t gpu.Thread, x []float32) {
	if i := t.GlobalX(); i < len(x) {
		x[i] = x[i] * 2
	}
}
