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
