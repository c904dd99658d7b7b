package compiler

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/gokern/kern/emu"
)

// Warp() and LinearIdx() under a 1-D and a 2-D block= directive read only
// the dimensions the directive leaves above 1, and give the same values as
// the generic formula for every block shape launch accepts: the
// directive's own and smaller ones (ntid.x below the directive's x makes
// the 2-D linear index depend on ntid.x).
func TestLinearIndexByDirective(t *testing.T) {
	for _, tc := range []struct {
		block  string
		absent []string
		shapes [][3]int
	}{
		{"64", []string{"%tid.y", "%tid.z", "%ntid"}, [][3]int{{64, 1, 1}, {40, 1, 1}}},
		{"16x4", []string{"%tid.z", "%ntid.y"}, [][3]int{{16, 4, 1}, {8, 3, 1}, {5, 1, 1}}},
	} {
		p, err := CompileSource(Config{}, "k.go", []byte(`package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=`+tc.block+`
func K(t gpu.Thread, out []int32) {
	i := t.BlockIdx().X*256 + t.LinearIdx()
	out[2*i] = int32(t.Warp())
	out[2*i+1] = int32(t.LinearIdx())
}
`))
		if err != nil {
			t.Fatal(err)
		}
		// The failure handler reads %tid.x (and %tid.y under 16x4);
		// nothing reads what the directive makes 0 or 1.
		for _, sr := range tc.absent {
			if strings.Contains(p.PTX, sr) {
				t.Errorf("block=%s: the PTX reads %s", tc.block, sr)
			}
		}
		m, err := emu.Load([]byte(p.PTX))
		if err != nil {
			t.Fatal(err)
		}
		for _, sh := range tc.shapes {
			dev := emu.NewDevice(emu.Options{})
			const blocks = 2
			n := blocks * 256 * 2
			out, _ := dev.Alloc(4 * n)
			params := make([]byte, 16)
			binary.LittleEndian.PutUint64(params[0:], out)
			binary.LittleEndian.PutUint64(params[8:], uint64(n))
			if err := dev.Launch(m, "K", emu.LaunchConfig{Grid: [3]int{blocks, 1, 1}, Block: sh, Params: params}); err != nil {
				t.Fatalf("block=%s launched %v: %v", tc.block, sh, err)
			}
			raw := make([]byte, 4*n)
			if err := dev.Read(out, raw); err != nil {
				t.Fatal(err)
			}
			for b := range blocks {
				for y := range sh[1] {
					for x := range sh[0] {
						lin := y*sh[0] + x
						i := b*256 + lin
						w := int32(binary.LittleEndian.Uint32(raw[8*i:]))
						l := int32(binary.LittleEndian.Uint32(raw[8*i+4:]))
						if w != int32(lin/32) || l != int32(lin) {
							t.Errorf("block=%s launched %v, block %d thread (%d,%d): Warp %d LinearIdx %d, want %d %d", tc.block, sh, b, x, y, w, l, lin/32, lin)
						}
					}
				}
			}
		}
	}
}
