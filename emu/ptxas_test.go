package emu

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

var targetLine = regexp.MustCompile(`(?m)^\.target (sm_\w+)`)

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
			arch := "sm_80"
			if m := targetLine.FindSubmatch(src); m != nil && string(m[1]) == "sm_90a" {
				arch = "sm_90a" // Hopper-only instructions (mbarrier.try_wait, wgmma)
			}
			ptxas.Check(t, filepath.Base(f), src, arch)
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

// TestForeignTestdataAssembles checks the regression PTX of
// testdata/fixedbugs (but badentry.ptx, invalid on purpose) and the
// compiler-made corpus with ptxas, for the arch each was made for. ptxas
// warns (-Werror makes it an error) that a recursive kernel's stack size
// is not static and that the recursive function spills; those are
// expected here, any other message fails.
func TestForeignTestdataAssembles(t *testing.T) {
	path := ptxas.Require(t)
	if path == "" {
		return
	}
	fixed, _ := filepath.Glob(filepath.Join("testdata", "fixedbugs", "*.ptx"))
	corpus, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*.ptx"))
	for _, f := range append(fixed, corpus...) {
		if filepath.Base(f) == "badentry.ptx" {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			// The arch the PTX was made for (Triton's sm_90 is sm_90a).
			arch := "sm_80"
			if m := regexp.MustCompile(`(?m)^\s*\.target\s+(sm_\w+)`).FindSubmatch(src); m != nil {
				arch = string(m[1])
			}
			opts := []ptxas.Option{ptxas.Path(path), ptxas.FileName(filepath.Base(f))}
			if regexp.MustCompile(`(?m)^\s*\.target\s+sm_\w+\s*,\s*debug`).Match(src) {
				opts = append(opts, ptxas.OptLevel(0)) // nvcc -G: ptxas refuses to optimize debug PTX
			}
			_, err = ptxas.Assemble(src, arch, opts...)
			var perr *ptxas.Error
			if errors.As(err, &perr) {
				for _, m := range perr.Messages {
					if strings.Contains(m.Text, "Stack size") || strings.Contains(m.Text, "spilled") {
						continue // recursion: a dynamic stack and saved registers
					}
					t.Errorf("%s: %s", arch, m)
				}
				if len(perr.Messages) == 0 {
					t.Errorf("%s: %v", arch, err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
		})
	}
}
