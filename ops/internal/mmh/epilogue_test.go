package mmh

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"testing"
)

// TestEpilogueMatchesMM checks that the epilogue arithmetic copied from
// ops/internal/mm (see epilogue.go) has not drifted: each shared function
// must print identically in both packages, so the sm_80 and sm_90a
// kernels fuse bias, activation and residual, and round, the same way.
func TestEpilogueMatchesMM(t *testing.T) {
	ours := funcs(t, "epilogue.go")
	theirs := funcs(t, filepath.Join("..", "mm", "tc.go"), filepath.Join("..", "mm", "doc.go"))
	for _, name := range []string{"epiStore", "epiOne", "activate", "siluF", "f32c.load", "f32c.store", "f16c.load", "f16c.store", "bf16c.load", "bf16c.store"} {
		a, b := ours[name], theirs[name]
		switch {
		case a == "" || b == "":
			t.Errorf("%s: missing (here %t, in mm %t)", name, a != "", b != "")
		case a != b:
			t.Errorf("%s differs from ops/internal/mm's:\n%s\nmm:\n%s", name, a, b)
		}
	}
}

// funcs returns the printed declarations of the functions and methods of
// files, by name ("f", "type.method"), doc comments left out.
func funcs(t *testing.T, files ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil {
				if id, ok := fd.Recv.List[0].Type.(*ast.Ident); ok {
					name = id.Name + "." + name
				}
			}
			var b bytes.Buffer
			if err := printer.Fprint(&b, fset, fd); err != nil {
				t.Fatal(err)
			}
			out[name] = b.String()
		}
	}
	return out
}
