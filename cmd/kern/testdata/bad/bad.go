package bad

import "github.com/gokern/kern/gpu"

//kern:kernel
func Divergent(t gpu.Thread, x []float32) {
	if t.ThreadIdx().X < 16 {
		t.Sync()
	}
}

//kern:kernel
func Closure(t gpu.Thread, x []float32) {
	f := func() {}
	f()
}
