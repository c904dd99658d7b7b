package compiler

import (
	"strings"
	"testing"
)

// Nested //kern:unroll loops inside gpu/tile (a 2-D tile's rows and
// columns) unroll both levels, so the tile lives in registers: the count
// of range-over-int loops nested in a library function's loop is taken
// with that library's types. (Before, the outer loop was matched with the
// inner one, stayed a loop, and the tile went to .local memory.)
func TestTileNestedUnroll(t *testing.T) {
	const src = `package k

import (
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/gpu/tile"
)

type (
	R = [4][2]float32
	K = [2]float32
)

//kern:kernel block=64
func Mat(t gpu.Thread, y, x []float32, rows, cols int) {
	ti, tj := tile.TileOf(t)
	m := tile.LoadMat[R, K](t, tile.Input[tile.F32](x).Matrix(rows, cols), ti, tj, 0)
	tile.StoreMat(t, tile.Tiles[tile.F32, R, K](t, y, rows, cols), m.Add(m).MulS(2).RowSums(t))
}
`
	p, err := CompileSource(Config{}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(p.PTX, ".local"); n != 0 {
		t.Errorf("the 2-D tile uses .local memory (%d mentions); want registers only", n)
	}
	if n := strings.Count(p.PTX, "shfl.sync.bfly"); n != 4*5 {
		t.Errorf("%d shuffles; want 4 rows × 5 butterfly steps (RowSums unrolled)", n)
	}
}

// kern check -v prints each tile kernel's layouts (tilelayout.go): the
// 2-D tile's shape from its type arguments and the kernel's block.
func TestTileLayouts(t *testing.T) {
	const src = `package k

import (
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/gpu/tile"
)

//kern:kernel block=128
func Mat(t gpu.Thread, y, x []float32, rows, cols int) {
	ti, tj := tile.TileOf(t)
	m := tile.LoadMat[[4][2]float32, [2]float32](t, tile.Input[tile.F32](x).Matrix(rows, cols), ti, tj, 0)
	tile.StoreMat(t, tile.Tiles[tile.F32, [4][2]float32, [2]float32](t, y, rows, cols), m)
}

//kern:kernel block=256
func Plain(t gpu.Thread, y []float32) {}
`
	p, err := CompileSource(Config{}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, k := range p.Kernels {
		got[k.Name] = k.TileLayouts
	}
	if l := got["Mat"]; len(l) != 1 || !strings.Contains(l[0], "2-D tile [[4][2]float32, [2]float32]: 4·W × 64 elements (W = 4 warps)") {
		t.Errorf("Mat's layouts = %q; want one 2-D tile of 4·W × 64 with W = 4", l)
	}
	if l := got["Plain"]; len(l) != 0 {
		t.Errorf("Plain's layouts = %q; want none", l)
	}
}
