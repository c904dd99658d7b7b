package compiler

import (
	"fmt"
	"strings"
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

// TestLaunchFactsByDirectiveThreads: an access indexed by a thread index
// the block= directive sizes takes the fact that the slice spans the
// directive's extent (len(in) ≥ 32, ≥ 64 with ty), so the 32-bit entry
// drops its check; launches with shorter slices run the checked entry,
// which reports exactly what the kernel keeping every check reports, and
// nothing where no thread reaches past the end (in[tx] > n skips the
// second read).
func TestLaunchFactsByDirectiveThreads(t *testing.T) {
	src := `package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=32x2 idx32
func K(t gpu.Thread, in, out []int32, n int) {
	tx, ty := t.ThreadIdx().X, t.ThreadIdx().Y
	v := int32(-1)
	if ty == 0 && in[tx] > int32(n) {
		v = in[tx+32*ty+16]
	}
	if o := t.BlockIdx().X*t.BlockDim().X*t.BlockDim().Y + t.LinearIdx(); o < len(out) {
		out[o] = v
	}
}
`
	opt, err := CompileSource(Config{}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	k := opt.Kernels[0]
	if got := fmt.Sprint(k.Facts32); !strings.Contains(got, "(>= l0 32)") || !strings.Contains(got, "l0 48") && !strings.Contains(got, "l0 80") {
		t.Fatalf("facts %v: want len(in) ≥ 32 for in[tx] and a bound for in[tx+32ty+16]", k.Facts32)
	}
	t.Logf("facts %v", k.Facts32)
	body := opt.PTX[strings.Index(opt.PTX, ".entry K_i32("):]
	if strings.Contains(body, ErrorSlot) {
		t.Errorf("the 32-bit entry still checks (writes %s):\n%s", ErrorSlot, body)
	}
	ref, err := CompileSource(Config{KeepChecks: true}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ran32, clean := 0, 0
	for _, inLen := range []int{0, 1, 20, 31, 32, 47, 48, 63, 64, 80, 81, 200} {
		for _, n := range []int{-5, 1010, 1040, 5000} { // in[i] = 1000+3i: n picks which threads read on
			for _, shape := range [][2][3]int{{{32, 2, 1}, {2, 1, 1}}, {{17, 1, 1}, {1, 1, 1}}, {{1, 1, 1}, {1, 1, 1}}} {
				block, grid := shape[0], shape[1]
				nout := grid[0] * block[0] * block[1]
				entry := entryFor(t, k, factArgs{vals: map[int]int64{2: int64(n)}, lens: map[int]int64{0: int64(inLen), 1: int64(nout)}})
				a := runBCEEntry(t, opt, entry, block, grid, inLen, n)
				b := runBCEEntry(t, ref, "K", block, grid, inLen, n)
				if entry == "K_i32" {
					ran32++
				} else if b.site == "" {
					clean++
				}
				if (a.site == "") != (b.site == "") || a.err != b.err || fmt.Sprint(a.out) != fmt.Sprint(b.out) ||
					block[0] == 1 && (a.site != b.site || a.idx != b.idx || a.n != b.n) {
					t.Fatalf("len(in) %d n %d block %v: %s differs from the kernel keeping every check:\n  %+v\n  %+v", inLen, n, block, entry, a, b)
				}
			}
		}
	}
	if ran32 == 0 || clean == 0 {
		t.Errorf("%d runs of the 32-bit entry, %d clean runs of the checked one: the test exercises too little", ran32, clean)
	}
}
