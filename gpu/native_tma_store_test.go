package gpu_test

import (
	"testing"
	"unsafe"

	"github.com/gokern/kern/gpu"
)

// TestTMAStoreNative stores a 64×32 16-bit box with 128-byte swizzle into
// a 100×70 tensor at the origin, partly outside (those elements are left
// alone) and at a negative x, as the emulator's test does.
func TestTMAStoreNative(t *testing.T) {
	const cols, rows, pitch, sentinel = 100, 70, 104, 0xbeef
	for _, at := range [][2]int{{0, 0}, {64, 48}, {-8, 20}} {
		dst := make([]uint16, rows*pitch)
		tensorSink = dst // on the heap: the map holds its address
		for i := range dst {
			dst[i] = sentinel
		}
		words, err := gpu.EncodeTensorMap(gpu.TensorMap2D{Base: uintptr(unsafe.Pointer(&dst[0])), ElemBytes: 2,
			Dims: [2]int{cols, rows}, RowBytes: 2 * pitch, Box: [2]int{64, 32}, Swizzle: gpu.Swizzle128B})
		if err != nil {
			t.Fatal(err)
		}
		tmap := words[:]
		err = gpu.RunNative(d3(1, 1, 1), d3(128, 1, 1), 0, func(th gpu.Thread) {
			tile := gpu.Shared[uint16](th, 64*32)
			i := th.ThreadIdx().X
			// Box element (r, c) at its swizzled place, the value the
			// tensor element it lands on should get.
			for j := i; j < 64*32; j += 128 {
				tile[gpu.SwizzleAddr(2*j, 128)/2] = uint16(1 + (at[1]+j/64)*cols + at[0] + j%64)
			}
			gpu.FenceProxyAsync(th)
			th.Sync()
			if i == 0 {
				gpu.TMAStore2D(th, &tmap[0], at[0], at[1], &tile[0])
				gpu.BulkCommitGroup(th)
				gpu.BulkWaitGroupRead(th, 0)
				gpu.BulkWaitGroup(th, 0)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		for r := range rows {
			for c := range cols {
				want := uint16(sentinel)
				if c >= at[0] && c < at[0]+64 && r >= at[1] && r < at[1]+32 {
					want = uint16(1 + r*cols + c)
				}
				if got := dst[r*pitch+c]; got != want {
					t.Fatalf("box at %v: (%d, %d) = %#x, want %#x", at, r, c, got, want)
				}
			}
		}
	}
}
