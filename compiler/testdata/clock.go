// gpu.Clock64 (lower_clock.go): two reads of %clock64 around a loop stay
// two reads, in order, on either side of the loop's loads and stores.
package clock

import "github.com/gokern/kern/gpu"

//kern:kernel block=128 nobounds
func Time(t gpu.Thread, x []float32, out []int64) {
	i := t.GlobalX()
	a := gpu.Clock64(t)
	v := x[i]
	for k := 0; k < 10; k++ {
		v = v*v + 1
	}
	x[i] = v
	b := gpu.Clock64(t)
	out[i] = b - a
}
