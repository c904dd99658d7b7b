package compiler

import (
	"strings"
	"testing"
)

// TestUnsignedGuardProvesAnIndex: uint(i) < uint(len(x)) proves x[i]
// (bounds_unsigned.go), taken or as an early exit; a 32-bit conversion
// (uint32(len) wraps), a guard on another slice's length and a signed
// guard without i ≥ 0 keep their checks.
func TestUnsignedGuardProvesAnIndex(t *testing.T) {
	src := `package k

import "github.com/gokern/kern/gpu"

//kern:kernel
func K(t gpu.Thread, out, x, y []float32, i int) {
	if uint(i) < uint(len(x)) {
		out[0] = x[i]
	}
	if uint32(i) < uint32(len(x)) {
		out[1] = x[i]
	}
	if uint(i) < uint(len(y)) {
		out[2] = x[i]
	}
	if i < len(x) {
		out[3] = x[i]
	}
	j := i + 1
	if uint(len(y)) <= uint(j) {
		return
	}
	out[4] = y[j]
}
`
	p, err := CompileSource(Config{}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	kept := strings.Join(p.Kernels[0].Checks.KeptAt, " ")
	for _, at := range []string{"k.go:8:13", "k.go:23:12"} {
		if strings.Contains(kept, at) {
			t.Errorf("the check at %s was not proven: kept %v", at, kept)
		}
	}
	for _, at := range []string{"k.go:11:13", "k.go:14:13", "k.go:17:13"} {
		if !strings.Contains(kept, at) {
			t.Errorf("the check at %s was proven: kept %v", at, kept)
		}
	}
}
