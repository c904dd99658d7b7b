// Vectorised loads and stores.
package vector

import "github.com/gokern/kern/gpu"

//kern:kernel
func Copy4(t gpu.Thread, x, y []float32) {
	i := 4 * t.GlobalX()
	if i+3 < len(x) && i+3 < len(y) {
		v := gpu.Load4(x, i)
		v[0] *= 2
		gpu.Store4(y, i, v)
	}
}

//kern:kernel
func Copy2(t gpu.Thread, x, y []float64, h []gpu.Half, hs []int16) {
	i := 2 * t.GlobalX()
	if i+1 < len(x) && i+1 < len(y) {
		gpu.Store2(y, i, gpu.Load2(x, i))
	}
	if 4*i+3 < len(h) && 4*i+3 < len(hs) {
		v := gpu.Load4(h, 4*i)
		w := gpu.Load2(hs, 4*i)
		gpu.Store2(hs, 4*i+2, w)
		gpu.Store4(h, 4*i, v)
	}
}
