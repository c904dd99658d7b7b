package compiler

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// hoistColdSrc is qwen3 matmulWarp's shape: a hoisted loop whose slices
// are indexed at r*n+j with r a quotient, through a codec helper that
// calls a helper in turn. The loop is pure (hoist_pure.go pureHelper),
// and its cold block reads the index off the pointers (hoist_sr.go
// coldIndex), also on the pure entry's early path (advanceColdPointers).
const hoistColdSrc = `package k

import "github.com/gokern/kern/gpu"

type codec struct{ bias int32 }

func (c codec) load(x int32) int32 { return twice(x) + c.bias }

func twice(x int32) int32 { return x<<1 ^ 3 }

//kern:kernel block=8
func K(t gpu.Thread, in, out []int32, n int) {
	w := t.BlockIdx().X*t.BlockDim().X + t.ThreadIdx().X
	r, c := w/3, w%3
	acc := int32(0)
	cd := codec{bias: 5}
	for j := c; j < n; j += 4 {
		acc += in[c*n+j+2] * cd.load(in[r*n+j])
	}
	if w < len(out) {
		out[w] = acc
	}
}
`

// The same loop with a helper that divides: a division may fault, so
// the loop is not pure.
const hoistColdDivSrc = `package k

import "github.com/gokern/kern/gpu"

func div(x int32, d int) int32 { return x / int32(d) }

//kern:kernel block=8
func K(t gpu.Thread, in, out []int32, n int) {
	w := t.BlockIdx().X*t.BlockDim().X + t.ThreadIdx().X
	r, c := w/3, w%3
	acc := int32(0)
	for j := c; j < n; j += 4 {
		acc += div(in[r*n+j], n)
	}
	if w < len(out) {
		out[w] = acc
	}
}
`

// coldShift is coldIndex's (p − &x[0]) >> 2.
var coldShift = regexp.MustCompile(`sub\.s64 (%rd\d+), %rd\d+, %rd\d+;\n\tshr\.s64 %rd\d+, (%rd\d+), 2;`)

func TestHoistedColdIndexFromPointer(t *testing.T) {
	opt, err := CompileSource(Config{}, "k.go", []byte(hoistColdSrc))
	if err != nil {
		t.Fatal(err)
	}
	if opt.Kernels[0].Checks.Hoisted == 0 || !strings.Contains(opt.PTX, "hoisted_early") {
		t.Fatalf("the loop calling a pure helper is not a pure hoisted loop:\n%s", opt.PTX)
	}
	if !coldShift.MatchString(opt.PTX) {
		t.Fatalf("the cold block does not read the index off the pointer:\n%s", opt.PTX)
	}
	ref, err := CompileSource(Config{KeepChecks: true}, "k.go", []byte(hoistColdSrc))
	if err != nil {
		t.Fatal(err)
	}
	compareHoistCold(t, opt, ref)

	div, err := CompileSource(Config{}, "k.go", []byte(hoistColdDivSrc))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(div.PTX, "hoisted_early") {
		t.Fatalf("a loop calling a dividing helper was made pure:\n%s", div.PTX)
	}
	divRef, err := CompileSource(Config{KeepChecks: true}, "k.go", []byte(hoistColdDivSrc))
	if err != nil {
		t.Fatal(err)
	}
	compareHoistCold(t, div, divRef)
}

// compareHoistCold runs both kernels over lengths and bounds that fault
// in the first iteration (the pure entry's early path), in a later one,
// below zero (n < 0 makes r*n negative) or not at all: the same outputs,
// and for one thread the same site, index and length as the kernel
// keeping every check.
func compareHoistCold(t *testing.T, opt, ref *Package) {
	t.Helper()
	for _, inLen := range []int{0, 1, 5, 23, 24, 40, 64} {
		for _, n := range []int{-5, -1, 0, 1, 2, 6, 7, 8, 13} {
			for _, w := range []int{1, 4, 8} {
				for _, grid := range []int{1, 2} {
					block := [3]int{w, 1, 1}
					g := [3]int{grid, 1, 1}
					a := runBCE(t, opt, block, g, inLen, n)
					b := runBCE(t, ref, block, g, inLen, n)
					if (a.site == "") != (b.site == "") || a.err != b.err || fmt.Sprint(a.out) != fmt.Sprint(b.out) {
						t.Fatalf("len(in) %d n %d block %d grid %d: failing %q (emu %v) out %v; reference %q (emu %v) out %v",
							inLen, n, w, grid, a.site, a.err, a.out, b.site, b.err, b.out)
					}
					if w == 1 && grid == 1 && (a.site != b.site || a.idx != b.idx || a.n != b.n) {
						t.Fatalf("len(in) %d n %d, one thread: failure at %s index %d length %d, reference %s index %d length %d",
							inLen, n, a.site, int64(a.idx), a.n, b.site, int64(b.idx), b.n)
					}
				}
			}
		}
	}
}
