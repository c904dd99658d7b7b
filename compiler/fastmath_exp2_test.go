package compiler

import (
	"strings"
	"testing"
)

// TestFastMathExp2: under fastmath gpu.Exp2 (float32) is ex2.approx.ftz,
// which needs no range fix-up around MUFU.EX2; by default it keeps
// subnormals (ex2.approx.f32).
func TestFastMathExp2(t *testing.T) {
	src := `package k

import "github.com/gokern/kern/gpu"

//kern:kernel fastmath
func K(t gpu.Thread, x []float32) {
	x[0] = gpu.Exp2(x[0])
}
`
	p, err := CompileSource(Config{}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.PTX, "ex2.approx.ftz.f32") {
		t.Errorf("fastmath Exp2 is not ex2.approx.ftz:\n%s", p.PTX)
	}
	exact, err := CompileSource(Config{}, "k.go", []byte(strings.Replace(src, " fastmath", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(exact.PTX, "ex2.approx.f32") || strings.Contains(exact.PTX, "ex2.approx.ftz") {
		t.Errorf("default Exp2 is not ex2.approx.f32:\n%s", exact.PTX)
	}
}
