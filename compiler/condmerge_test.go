package compiler

import "testing"

// What testdata/condmerge.go claims: a short-circuit guard whose later
// tests only compute is one and.pred and one branch; one whose later test
// reads memory, divides or reaches the join with another value keeps
// its branches. The check of an edge-tile load under a merged guard is
// and-ed with the guard before the branch (liftcheck.go): EdgeLoad's and
// Chain's a[...], not Kept's a[i], which is the guard's second test. The random kernels of bce_test.go check
// that both behave as the reference's branches (Config.KeepChecks).
func init() {
	goldenChecks["condmerge"] = func(t *testing.T, p *Package) {
		for k, want := range map[string][2]int{"EdgeLoad": {1, 1}, "Chain": {2, 1}, "Kept": {0, 0}} {
			body := entryBody(t, p, kernelOf(t, p, k).Entry)
			lifted := len(liftedCheck.FindAllString(body, -1))
			if merged := countLines(body, `^and\.pred `) - lifted; merged != want[0] || lifted != want[1] {
				t.Errorf("%s: %d guards merged and %d checks lifted, want %d and %d", k, merged, lifted, want[0], want[1])
			}
		}
		// The merged tests' blocks are gone: no branch to a cond.true block.
		mustNotContain(t, p, "EdgeLoad", `_cond_true:`)
		mustContain(t, p, "Kept", `_cond_true:`)
	}
}
