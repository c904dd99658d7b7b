package gpu_test

import (
	"testing"
	"unsafe"

	"github.com/gokern/kern/gpu"
)

// TestTMANative loads a 64×64 16-bit box with 128-byte swizzle partly outside a 150×100 tensor, as
// emu's test does, and checks every element and the zero fill.
func TestTMANative(t *testing.T) {
	const cols, rows, pitch = 150, 100, 152
	src := make([]uint16, rows*pitch)
	tensorSink = src // on the heap: a stack copy could move under the map's address
	for r := range rows {
		for c := range cols {
			src[r*pitch+c] = uint16(1 + r*cols + c)
		}
	}
	words, err := gpu.EncodeTensorMap(gpu.TensorMap2D{Base: uintptr(unsafe.Pointer(&src[0])), ElemBytes: 2,
		Dims: [2]int{cols, rows}, RowBytes: 2 * pitch, Box: [2]int{64, 64}, Swizzle: gpu.Swizzle128B})
	if err != nil {
		t.Fatal(err)
	}
	tmap := words[:]
	for _, at := range [][2]int{{0, 0}, {100, 50}, {-8, 40}} {
		out := make([]uint16, 64*64)
		err := gpu.RunNative(d3(1, 1, 1), d3(128, 1, 1), 0, func(th gpu.Thread) {
			bar := gpu.Shared[uint64](th, 1)
			tile := gpu.Shared[uint16](th, 64*64)
			i := th.ThreadIdx().X
			if i == 0 {
				gpu.MbarrierInit(th, &bar[0], 1)
			}
			th.Sync()
			if i == 0 {
				gpu.MbarrierArriveExpectTx(th, &bar[0], 64*64*2)
				gpu.TMALoad2D(th, &tile[0], &tmap[0], at[0], at[1], &bar[0])
			}
			for !gpu.MbarrierTryWait(th, &bar[0], 0) {
			}
			for j := i; j < 64*64; j += 128 {
				out[j] = tile[gpu.SwizzleAddr(2*j, 128)/2]
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		for r := range 64 {
			for c := range 64 {
				gx, gy := at[0]+c, at[1]+r
				want := uint16(0)
				if gx >= 0 && gy >= 0 && gx < cols && gy < rows {
					want = uint16(1 + gy*cols + gx)
				}
				if out[r*64+c] != want {
					t.Fatalf("box at %v: (%d, %d) = %d, want %d", at, r, c, out[r*64+c], want)
				}
			}
		}
	}
}

var tensorSink []uint16

// TestEncodeTensorMapRefuses checks the shapes the hardware refuses.
func TestEncodeTensorMapRefuses(t *testing.T) {
	ok := gpu.TensorMap2D{Base: 1024, ElemBytes: 2, Dims: [2]int{128, 64}, RowBytes: 256, Box: [2]int{64, 64}, Swizzle: gpu.Swizzle128B}
	if _, err := gpu.EncodeTensorMap(ok); err != nil {
		t.Fatalf("valid map refused: %v", err)
	}
	for name, m := range map[string]gpu.TensorMap2D{
		"unaligned base":    func() gpu.TensorMap2D { m := ok; m.Base = 1030; return m }(),
		"odd element":       func() gpu.TensorMap2D { m := ok; m.ElemBytes = 3; return m }(),
		"stride":            func() gpu.TensorMap2D { m := ok; m.RowBytes = 250; return m }(),
		"box too big":       func() gpu.TensorMap2D { m := ok; m.Box[1] = 257; return m }(),
		"box row > swizzle": func() gpu.TensorMap2D { m := ok; m.Box[0] = 128; return m }(),
		"box row not 16B":   func() gpu.TensorMap2D { m := ok; m.Box[0] = 4; m.Swizzle = gpu.SwizzleNone; return m }(),
	} {
		if _, err := gpu.EncodeTensorMap(m); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
