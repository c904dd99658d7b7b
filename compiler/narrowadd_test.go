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
	row := t.BlockIdx().Y*8 + t.ThreadIdx().Y // narrowed: < 2^16·8, compared, and k times it indexes out
	if row < m {
		out[row*k+t.ThreadIdx().X] = 7
	}
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
	const grid, n = 4, 32 * 5
	for _, m := range []int64{-1, 0, 13, 1 << 40} {
		for _, k := range []int64{4, 5} {
			out, _ := dev.Alloc(8 * n)
			params := make([]byte, 32)
			binary.LittleEndian.PutUint64(params[0:], out)
			binary.LittleEndian.PutUint64(params[8:], n)
			binary.LittleEndian.PutUint64(params[16:], uint64(m))
			binary.LittleEndian.PutUint64(params[24:], uint64(k))
			if err := dev.Launch(mod, "K", emu.LaunchConfig{Grid: [3]int{1, grid, 1}, Block: [3]int{4, 8, 1}, Params: params}); err != nil {
				t.Fatal(err)
			}
			raw := make([]byte, 8*n)
			if err := dev.Read(out, raw); err != nil {
				t.Fatal(err)
			}
			want := make([]int64, n)
			for row := range int64(grid * 8) {
				for tx := range int64(4) {
					if row < m {
						want[row*k+tx] = 7
					}
				}
			}
			for i, w := range want {
				if got := int64(binary.LittleEndian.Uint64(raw[8*i:])); got != w {
					t.Errorf("m %d k %d: out[%d] = %d, want %d", m, k, i, got, w)
				}
			}
		}
	}
}
