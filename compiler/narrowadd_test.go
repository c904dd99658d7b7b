package compiler

// Tests of narrowAdd (narrowadd.go): a row sum used only by a comparison
// and a multiplication by a run-time stride is a 32-bit add, zero-extended,
// and computes what Go does on the emulator for any m and k.

import (
	"encoding/binary"
	"testing"

	"github.com/gokern/kern/emu"
)

const narrowAddSrc = `package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=4x8
func K(t gpu.Thread, out []int, m, k int) {
	row := t.BlockIdx().Y*8 + t.ThreadIdx().Y // narrowed: < 2^16·8, compared and multiplied
	s := -1
	if row < m {
		s = row * k
	}
	out[t.BlockIdx().Y*32+t.ThreadIdx().Y*4+t.ThreadIdx().X] = s // this sum indexes: 64-bit
}
`

func TestNarrowAdd(t *testing.T) {
	p, err := CompileSource(Config{}, "k.go", []byte(narrowAddSrc))
	if err != nil {
		t.Fatal(err)
	}
	body := entryBody(t, p, "K")
	if got := countLines(body, `^add\.u32 `); got != 1 {
		t.Errorf("%d 32-bit adds, want 1 (the row):\n%s", got, body)
	}
	if got := countLines(body, `^cvt\.u64\.u32 `); got < 1 {
		t.Errorf("the row is not zero-extended:\n%s", body)
	}
	dev := emu.NewDevice(emu.Options{})
	mod, err := emu.Load([]byte(p.PTX))
	if err != nil {
		t.Fatal(err)
	}
	const grid = 4
	for _, m := range []int64{-1, 0, 13, 1 << 40} {
		for _, k := range []int64{-3, 7, 1<<33 + 1, -1 << 62} {
			out, _ := dev.Alloc(8 * 32 * grid)
			params := make([]byte, 32)
			binary.LittleEndian.PutUint64(params[0:], out)
			binary.LittleEndian.PutUint64(params[8:], 32*grid)
			binary.LittleEndian.PutUint64(params[16:], uint64(m))
			binary.LittleEndian.PutUint64(params[24:], uint64(k))
			if err := dev.Launch(mod, "K", emu.LaunchConfig{Grid: [3]int{1, grid, 1}, Block: [3]int{4, 8, 1}, Params: params}); err != nil {
				t.Fatal(err)
			}
			raw := make([]byte, 8*32*grid)
			if err := dev.Read(out, raw); err != nil {
				t.Fatal(err)
			}
			for by := range int64(grid) {
				for ty := range int64(8) {
					row, want := by*8+ty, int64(-1)
					if row < m {
						want = row * k
					}
					for tx := range int64(4) {
						i := by*32 + ty*4 + tx
						if got := int64(binary.LittleEndian.Uint64(raw[8*i:])); got != want {
							t.Errorf("m %d k %d block %d thread (%d, %d): %d, want %d", m, k, by, tx, ty, got, want)
						}
					}
				}
			}
		}
	}
}
