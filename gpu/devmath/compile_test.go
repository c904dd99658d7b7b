package devmath_test

// Every routine must compile inside a kernel: each gpu math function that
// the compiler lowers to a devmath routine (and the others, for company)
// is called on float32 and float64, compiled, and assembled by ptxas.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gokern/kern/compiler"
	"github.com/gokern/kern/internal/ptxas"
)

var mathFuncs = []string{"Exp", "Exp2", "Log", "Log2", "Sin", "Cos", "Tanh", "Erf"}

func TestCompileInKernels(t *testing.T) {
	var src strings.Builder
	src.WriteString("package k\n\nimport \"github.com/gokern/kern/gpu\"\n")
	for _, name := range mathFuncs {
		for _, typ := range []string{"float32", "float64"} {
			fmt.Fprintf(&src, `
//kern:kernel block=128
func %s_%s(t gpu.Thread, x, out []%s) {
	i := t.GlobalX()
	if i < len(x) {
		out[i] = gpu.%s(x[i])
	}
}
`, name, typ, typ, name)
		}
	}
	pkg, err := compiler.CompileSource(compiler.Config{}, "k.go", []byte(src.String()))
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	if got, want := len(pkg.Kernels), 2*len(mathFuncs); got != want {
		t.Fatalf("compiled %d kernels, want %d", got, want)
	}
	reps := ptxas.Check(t, "devmath", []byte(pkg.PTX))
	for arch, rep := range reps {
		t.Logf("%s: %+v", arch, rep.Funcs)
	}
}
