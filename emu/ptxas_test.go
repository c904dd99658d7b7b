package emu

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

// TestTestdataAssembles checks that every hand-written PTX file in
// testdata is valid PTX: NVIDIA's ptxas must accept it for sm_80. The emu
// tests are only meaningful if the PTX they run is what a GPU would run.
func TestTestdataAssembles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.ptx"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			ptxas.Check(t, filepath.Base(f), src, "sm_80")
		})
	}
}

// TestLoadsCompilerGoldens loads the PTX kern's compiler emits for its
// own tests (compiler/testdata), so that a construct the compiler starts
// printing and emu cannot decode shows up here, naming the line.
func TestLoadsCompilerGoldens(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "compiler", "testdata", "*.ptx"))
	if len(files) == 0 {
		t.Skip("no compiler goldens")
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Load(src); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
