package compiler

import (
	"testing"

	"github.com/gokern/kern/internal/launchfact"
)

// factArgs are a test launch's arguments as launch facts read them:
// vals[i] the value of integer parameter i, lens[i] the length of slice
// parameter i.
type factArgs struct{ vals, lens map[int]int64 }

func (a factArgs) Value(i int) (int64, bool) { v, ok := a.vals[i]; return v, ok }
func (a factArgs) Len(i int) (int64, bool)   { v, ok := a.lens[i]; return v, ok }

// entryFor is the entry a launch with args runs (package kern, index32.go)
// of a kernel whose launches all meet index32Fits: its 32-bit entry when
// every launch fact holds, else its entry.
func entryFor(t *testing.T, k *Kernel, args factArgs) string {
	t.Helper()
	for _, f := range k.Facts32 {
		e, err := launchfact.Parse(f)
		if err != nil {
			t.Fatalf("kernel %s: %v", k.Name, err)
		}
		if !e.Holds(args) {
			return k.Entry
		}
	}
	return k.Entry32
}
