package compiler

import (
	"encoding/binary"
	"testing"

	"github.com/gokern/kern/emu"
)

// gpu.BlockSum and gpu.BlockMax under 1-D, 2-D and 3-D blocks, with and
// without a block= directive, and with ntid.x below 32 (warps then span
// rows of the block): blockReduce takes a thread's lane as its linear
// index & 31 and its warp as the index >> 5, which is right only if warps
// are runs of 32 linear indices, however the block is shaped. Each thread
// contributes a value from its linear index; the block's sum and max are
// checked against the host's.
func TestBlockReduceShapes(t *testing.T) {
	for _, tc := range []struct {
		directive string
		shapes    [][3]int
	}{
		{"//kern:kernel block=256", [][3]int{{256, 1, 1}, {64, 1, 1}, {96, 1, 1}}},
		{"//kern:kernel block=16x8", [][3]int{{16, 8, 1}, {8, 8, 1}, {16, 4, 1}}},
		{"//kern:kernel", [][3]int{{8, 4, 4}, {4, 2, 8}, {32, 2, 2}, {128, 1, 1}}},
	} {
		p, err := CompileSource(Config{}, "k.go", []byte(`package k

import "github.com/gokern/kern/gpu"

`+tc.directive+`
func K(t gpu.Thread, out []int32) {
	v := int32((t.LinearIdx()*37+t.BlockIdx().X*11)%101) - 50
	s := gpu.BlockSum(t, v)
	m := gpu.BlockMax(t, v)
	if t.LinearIdx() == 0 {
		out[2*t.BlockIdx().X] = s
		out[2*t.BlockIdx().X+1] = m
	}
}
`))
		if err != nil {
			t.Fatalf("%s: %v", tc.directive, err)
		}
		m, err := emu.Load([]byte(p.PTX))
		if err != nil {
			t.Fatal(err)
		}
		for _, sh := range tc.shapes {
			const blocks = 3
			dev := emu.NewDevice(emu.Options{})
			n := 2 * blocks
			out, _ := dev.Alloc(4 * n)
			params := make([]byte, 16)
			binary.LittleEndian.PutUint64(params[0:], out)
			binary.LittleEndian.PutUint64(params[8:], uint64(n))
			if err := dev.Launch(m, "K", emu.LaunchConfig{Grid: [3]int{blocks, 1, 1}, Block: sh, Params: params}); err != nil {
				t.Fatalf("%s launched %v: %v", tc.directive, sh, err)
			}
			raw := make([]byte, 4*n)
			if err := dev.Read(out, raw); err != nil {
				t.Fatal(err)
			}
			for b := range blocks {
				sum, mx := int32(0), int32(-1<<31)
				for lin := range sh[0] * sh[1] * sh[2] {
					v := int32((lin*37+b*11)%101) - 50
					sum += v
					mx = max(mx, v)
				}
				gs := int32(binary.LittleEndian.Uint32(raw[8*b:]))
				gm := int32(binary.LittleEndian.Uint32(raw[8*b+4:]))
				if gs != sum || gm != mx {
					t.Errorf("%q launched %v, block %d: sum %d max %d, want %d %d", tc.directive, sh, b, gs, gm, sum, mx)
				}
			}
		}
	}
}
