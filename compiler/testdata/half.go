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

//kern:kernel
func Packed(t gpu.Thread, h []gpu.Half2, b []gpu.BFloat162, w []uint32) {
	i := t.GlobalX()
	if i >= len(h) || i >= len(b) || i >= len(w) {
		return
	}
	h[i] = gpu.FMA2(h[i], gpu.Mul2(h[i], h[i]), gpu.Sub2(gpu.Add2(h[i], h[i]), h[i]))
	b[i] = gpu.FMA2(b[i], gpu.Mul2(b[i], b[i]), gpu.Sub2(gpu.Add2(b[i], b[i]), b[i]))
	w[i] = gpu.Prmt(w[i], w[i]>>4, 0x5140)
}
