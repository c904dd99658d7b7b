package main

import (
	"os"
	"testing"
)

// TestSpecREReadsEveryKernel: the pattern kern check reads a generated
// file's source hashes with finds every kernel's, a cooperative kernel's
// too (gofmt aligns its SourceHash with the Cooperative field above it,
// two spaces after the colon).
func TestSpecREReadsEveryKernel(t *testing.T) {
	for _, path := range []string{"../../examples/grid_sync/main_kern.go", "../../llm/qwen3/qwen3_kern.go"} {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		found := map[string]bool{}
		for _, m := range specRE.FindAllSubmatch(src, -1) {
			found[string(m[1])] = true
		}
		for _, name := range map[string][]string{
			"../../examples/grid_sync/main_kern.go": {"HeatStep", "HeatSteps"},
			"../../llm/qwen3/qwen3_kern.go":         {"megaLayerBF16", "rmsNormCastBF16"},
		}[path] {
			if !found[name] {
				t.Errorf("%s: no source hash read for %s", path, name)
			}
		}
	}
}
