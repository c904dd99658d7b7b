package compiler

import "testing"

// What testdata/condmerge.go claims: a short-circuit guard whose later
// tests only compute is one and.pred and one branch; one whose later test
// reads memory, divides or reaches the join with another value keeps
// its branches. The random kernels of bce_test.go check that the merged
// guards behave as the reference's branches (Config.KeepChecks).
func init() {
	goldenChecks["condmerge"] = func(t *testing.T, p *Package) {
		for k, want := range map[string]int{"EdgeLoad": 1, "Chain": 2, "Kept": 0} {
			body := entryBody(t, p, kernelOf(t, p, k).Entry)
			if n := countLines(body, `^and\.pred `); n != want {
				t.Errorf("%s: %d and.pred, want %d", k, n, want)
			}
		}
		// The merged tests' blocks are gone: no branch to a cond.true block.
		mustNotContain(t, p, "EdgeLoad", `_cond_true:`)
		mustContain(t, p, "Kept", `_cond_true:`)
	}
}
