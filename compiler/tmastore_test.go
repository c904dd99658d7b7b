package compiler

// TMA stores end to end on the emulator: a block TMA-loads a 64×32 box of
// a 100×70 uint16 tensor (128-byte swizzle), doubles it with ordinary
// shared stores, fences the async proxy, TMA-stores the box back to the
// same coordinates of a second tensor and waits for the read. Boxes at
// the origin, at the far corner (partly outside: those elements are not
// written) and at a negative x. The planted bug overwrites the box
// between the store and its wait_group.read; the emulator stores what is
// there when the read happens, so the output is wrong. (sm_90a: only
// there does the compiler align shared arrays of 1 KiB or more to the
// 1024 bytes a 128-byte swizzled box needs.)

import (
	"encoding/binary"
	"testing"

	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/internal/ptxas"
)

const tmaStoreKernel = `//kern:arch sm_90a
package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=128
func Double(t gpu.Thread, inmap, outmap []uint64, x, y, clobber int) {
	bar := gpu.Shared[uint64](t, 1)
	s := gpu.Shared[uint16](t, 64*32)
	i := t.ThreadIdx().X
	if i == 0 {
		gpu.MbarrierInit(t, &bar[0], 1)
		gpu.FenceProxyAsync(t)
	}
	t.Sync()
	if i == 0 && len(inmap) >= 16 {
		gpu.MbarrierArriveExpectTx(t, &bar[0], 64*32*2)
		gpu.TMALoad2D(t, &s[0], &inmap[0], x, y, &bar[0])
	}
	for !gpu.MbarrierTryWait(t, &bar[0], 0) {
	}
	for j := i; j < 64*32; j += 128 {
		s[j] *= 2
	}
	gpu.FenceProxyAsync(t)
	t.Sync()
	if i == 0 && len(outmap) >= 16 {
		gpu.TMAStore2D(t, &outmap[0], x, y, &s[0])
		gpu.BulkCommitGroup(t)
		if clobber != 0 {
			for j := 0; j < 64*32; j++ {
				s[j] = 7
			}
		}
		gpu.BulkWaitGroupRead(t, 0)
		gpu.BulkWaitGroup(t, 0)
	}
}
`

func TestTMAStoreOnTheEmulator(t *testing.T) {
	const cols, rows, pitch = 100, 70, 104
	p, err := CompileSource(Config{}, "k.go", []byte(tmaStoreKernel))
	if err != nil {
		t.Fatal(err)
	}
	ptxas.Check(t, "tmastore", []byte(p.PTX), "sm_90a")
	mod, err := emu.Load([]byte(p.PTX))
	if err != nil {
		t.Fatal(err)
	}
	dev := emu.NewDevice(emu.Options{})
	upload := func(raw []byte) uint64 {
		a, err := dev.Alloc(len(raw))
		if err == nil {
			err = dev.Write(a, raw)
		}
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	in := make([]byte, 2*rows*pitch)
	for r := range rows {
		for c := range cols {
			binary.LittleEndian.PutUint16(in[2*(r*pitch+c):], uint16(1+r*cols+c))
		}
	}
	const sentinel = 0xbeef
	tmap := func(base uint64) uint64 {
		w, err := gpu.EncodeTensorMap(gpu.TensorMap2D{Base: uintptr(base), ElemBytes: 2, Dims: [2]int{cols, rows},
			RowBytes: 2 * pitch, Box: [2]int{64, 32}, Swizzle: gpu.Swizzle128B})
		if err != nil {
			t.Fatal(err)
		}
		raw := make([]byte, 8*len(w))
		for i, x := range w {
			binary.LittleEndian.PutUint64(raw[8*i:], x)
		}
		return upload(raw)
	}
	inmap := tmap(upload(in))
	for _, c := range []struct {
		x, y    int
		clobber uint64
	}{{0, 0, 0}, {64, 48, 0}, {-8, 20, 0}, {0, 0, 1}} {
		out := make([]byte, 2*rows*pitch)
		for i := 0; i < len(out); i += 2 {
			binary.LittleEndian.PutUint16(out[i:], sentinel)
		}
		outp := upload(out)
		var params []byte
		for _, v := range []uint64{inmap, 16, tmap(outp), 16, uint64(int64(c.x)), uint64(c.y), c.clobber} {
			params = binary.LittleEndian.AppendUint64(params, v)
		}
		if err := dev.Launch(mod, "Double", emu.LaunchConfig{Grid: [3]int{1, 1, 1}, Block: [3]int{128, 1, 1}, Params: params}); err != nil {
			t.Fatal(err)
		}
		if err := dev.Read(outp, out); err != nil {
			t.Fatal(err)
		}
		wrong := 0
		for r := range rows {
			for col := range cols {
				want := uint16(sentinel)
				if col >= c.x && col < c.x+64 && r >= c.y && r < c.y+32 {
					want = uint16(2 * (1 + r*cols + col))
				}
				if got := binary.LittleEndian.Uint16(out[2*(r*pitch+col):]); got != want {
					if c.clobber == 0 {
						t.Fatalf("box at (%d, %d): out[%d][%d] = %d, want %d", c.x, c.y, r, col, got, want)
					}
					wrong++
				}
			}
		}
		if c.clobber != 0 && wrong == 0 {
			t.Errorf("a box overwritten before wait_group.read was stored as it was at issue")
		}
	}
}
