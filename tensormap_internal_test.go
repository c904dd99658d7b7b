package kern

import (
	"runtime"
	"testing"

	"github.com/gokern/kern/gpu"
)

// TestTensorMapCacheAndLifetime: a second map of the same view shares the
// cached device words, and a map keeps the buffer it describes from
// being collected (and freed by its cleanup) while the map is in use.
func TestTensorMapCacheAndLifetime(t *testing.T) {
	dev := OpenEmulator()
	defer dev.Close()
	spec := TensorMapSpec{Dims: [2]int{64, 64}, Box: [2]int{64, 64}, Swizzle: gpu.Swizzle128B}
	m := func() *TensorMap {
		buf, err := Alloc[gpu.Half](dev, 64*64)
		if err != nil {
			t.Fatal(err)
		}
		m, err := dev.TensorMap(buf, spec)
		if err != nil {
			t.Fatal(err)
		}
		again, err := dev.TensorMap(buf, spec)
		if err != nil || again.buf != m.buf {
			t.Errorf("the same view again: %v; the words were not shared", err)
		}
		return m
	}()
	for range 3 {
		runtime.GC()
	}
	src := m.src.(*Buffer[gpu.Half])
	if !*src.live {
		t.Error("the buffer a live map describes was collected and freed")
	}
	runtime.KeepAlive(m)
}
