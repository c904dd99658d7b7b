package compiler

import (
	"strings"
	"testing"
)

// TestArrayPointerParamBoundsAnIndex: a helper's *[N]T parameter has
// length N (ranges.go, lenAt), as a local conversion's has, so an index
// the range analysis bounds below N needs no check, and one it cannot
// bound keeps it. gpu/tile's mmaSlab takes its operands this way.
func TestArrayPointerParamBoundsAnIndex(t *testing.T) {
	src := `package k

import "github.com/gokern/kern/gpu"

func get(v *[64]int32, i int) int32 {
	return v[i&63] + v[i]
}

//kern:kernel block=64
func K(t gpu.Thread, out []int32) {
	s := gpu.Shared[int32](t, 128)
	s[t.ThreadIdx().X] = 1
	t.Sync()
	out[0] = get((*[64]int32)(s), t.ThreadIdx().X+1)
}
`
	p, err := CompileSource(Config{}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	kept := strings.Join(p.Kernels[0].Checks.KeptAt, " ")
	if strings.Contains(kept, "k.go:6:10") {
		t.Errorf("v[i&63] of a *[64]int32 parameter was not proven: kept %v", kept)
	}
	if !strings.Contains(kept, "k.go:6:20") {
		t.Errorf("v[i] with i up to 64 was proven: kept %v", kept)
	}
}
