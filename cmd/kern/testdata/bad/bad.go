package bad

import "github.com/gokern/kern/gpu"

//kern:kernel
func Bad(t gpu.Thread, x []float32) {
	if t.ThreadIdx().X < 16 {
		t.Sync()
	}
	f := func() {}
	f()
}
