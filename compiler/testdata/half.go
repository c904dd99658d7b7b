// Half and BFloat16: conversions and packing.
package half

import "github.com/gokern/kern/gpu"

//kern:kernel
func Convert(t gpu.Thread, h []gpu.Half, b []gpu.BFloat16, f []float32) {
	i := t.GlobalX()
	if i >= len(h) || i >= len(b) || i >= len(f) {
		return
	}
	x := h[i].Float32() + b[i].Float32()
	f[i] = x
	h[i] = gpu.ToHalf(x * 2)
	b[i] = gpu.ToBFloat16(x * 3)
}

//kern:kernel
func Pack(t gpu.Thread, h []gpu.Half, b []gpu.BFloat16, packed []uint32) {
	i := t.GlobalX()
	if 2*i+1 >= len(h) || 2*i+1 >= len(b) || 2*i+1 >= len(packed) || i < 0 {
		return
	}
	packed[2*i] = gpu.PackHalf2(h[2*i], h[2*i+1])
	packed[2*i+1] = gpu.PackBFloat162(b[2*i], b[2*i+1])
}

//kern:kernel
func Scalars(t gpu.Thread, h gpu.Half, b gpu.BFloat16, out []float32) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = h.Float32() * b.Float32()
	}
}
