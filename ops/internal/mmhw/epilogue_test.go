package mmhw

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"testing"
)

// TestEpilogueMatchesMMH checks that the epilogue copied from
// ops/internal/mmh (see epilogue.go) has not drifted: every function and
// method but epilogue itself (which walks 256 columns here) must print
// identically in both packages, and so must the declarations of the
// staging constants and codecs, so that v3's two tiles stage and store
// their accumulators the same way (bias, activation, residual and the
// rounding are ops/internal/epilogue's in both).
func TestEpilogueMatchesMMH(t *testing.T) {
	ours := decls(t, "epilogue.go")
	theirs := decls(t, filepath.Join("..", "mmh", "epilogue.go"))
	n := 0
	for name, a := range theirs {
		if name == "epilogue" {
			continue
		}
		n++
		if b := ours[name]; a != b {
			t.Errorf("%s differs from ops/internal/mmh's:\n%s\nmmh:\n%s", name, b, a)
		}
	}
	// The staging helpers, codecs and their store4 that the two files
	// repeat (the arithmetic is ops/internal/epilogue's, one source).
	if n < 11 {
		t.Errorf("only %d declarations compared: %v", n, theirs)
	}
}

// decls returns the printed top-level declarations of file, doc comments
// left out: functions by name ("f", "type.method"), the rest by the name
// of their first spec.
func decls(t *testing.T, file string) map[string]string {
	t.Helper()
	out := map[string]string{}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		var name string
		switch d := d.(type) {
		case *ast.FuncDecl:
			name = d.Name.Name
			if d.Recv != nil {
				if id, ok := d.Recv.List[0].Type.(*ast.Ident); ok {
					name = id.Name + "." + name
				}
			}
		case *ast.GenDecl:
			switch s := d.Specs[0].(type) {
			case *ast.ValueSpec:
				name = "const " + s.Names[0].Name
			case *ast.TypeSpec:
				name = "type " + s.Name.Name
			case *ast.ImportSpec:
				name = "import"
			}
		}
		var b bytes.Buffer
		if err := printer.Fprint(&b, fset, d); err != nil {
			t.Fatal(err)
		}
		out[name] = b.String()
	}
	return out
}
