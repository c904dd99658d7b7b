package compiler

import "testing"

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

func TestFixedBugs(t *testing.T) {
	for name, src := range fixedBugs {
		if _, err := CompileSource(Config{}, name, []byte(src)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
