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

//kern:kernel block=128
func Attn(t gpu.Thread, out, q []gpu.Half, lse []float32, cu []int32) {
	p := tile.Heads[tile.F16, [8][4]float32](t, out, lse, cu, 1)
	sm := gpu.DynShared[gpu.Half](t)
	a := tile.NewAttn[gpu.Half, tile.F16, [8][4]float32](t)
	a.Stage(t, sm, 0, tile.Input[tile.F16](q), p.Seq(), 0)
	s := a.QK(t, sm, 0)
	p.Store(t, a.PV(t, tile.Frag[[8][4]float32]{}, s, sm, 0))
}
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
	// Attn's methods (and PartHeads.Store, a method of no layout of its
	// own) are not taken for the functions Stage and Store.
	if l := strings.Join(got["Attn"], "\n"); strings.Count(l, "\n") != 3 || !strings.Contains(l, "tile.Attn.Stage: a 64-row tile") ||
		!strings.Contains(l, "tile.Attn.QK: S = Q·Kᵀ") || !strings.Contains(l, "tile.Attn.PV") || !strings.Contains(l, "tile.Heads: block (x, y, z)") {
		t.Errorf("Attn's layouts = %q; want Heads, Attn.Stage, QK and PV", got["Attn"])
	}
	if l := got["Plain"]; len(l) != 0 {
		t.Errorf("Plain's layouts = %q; want none", l)
	}
}
