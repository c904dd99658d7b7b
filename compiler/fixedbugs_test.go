package compiler

import (
	"fmt"
	"strings"
	"testing"
)

// Regression kernels for bugs found by users of the compiler; each must
// compile.
var fixedBugs = map[string]string{
	// A local whose type is a type parameter was rejected as an interface
	// value (its underlying type is the constraint).
	"typeparam_local.go": `package k

import "github.com/gokern/kern/gpu"

func twice[T float32 | float64](v T) T { r := v + v; return r }

//kern:kernel block=32
func Generic(t gpu.Thread, x []float32) {
	if i := t.GlobalX(); i < len(x) {
		x[i] = twice(x[i])
	}
}
`,
}

// A store through a pointer that is one of two parameters marks only
// those two written; the third stays read-only (ld.global.nc).
func TestPhiPointerWritesOnlyItsParameters(t *testing.T) {
	p, err := CompileSource(Config{}, "phi.go", []byte(`package k

import "github.com/gokern/kern/gpu"

//kern:kernel
func K(t gpu.Thread, a, b, c []float32, f bool) {
	s := a
	if f {
		s = b
	}
	s[0] = c[0]
	var r []float32
	if f {
		r = a
	} else {
		r = c
	}
	b[1] = r[1]
}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, prm := range p.Kernels[0].Params {
		got += fmt.Sprintf("%s=%v ", prm.Name, prm.Writes)
	}
	if want := "a=true b=true c=false f=false "; got != want {
		t.Errorf("writes %q, want %q", got, want)
	}
	// c[0] is read through c alone: read-only. r[1] may be a (written) or
	// c: an ordinary load.
	if n := strings.Count(p.PTX, "ld.global.nc."); n != 1 {
		t.Errorf("%d ld.global.nc loads, want 1 (c[0])\n%s", n, p.PTX)
	}
}

func TestFixedBugs(t *testing.T) {
	for name, src := range fixedBugs {
		if _, err := CompileSource(Config{}, name, []byte(src)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
