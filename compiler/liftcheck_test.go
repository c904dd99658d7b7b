package compiler

import (
	"fmt"
	"testing"
)

// A transpose's store `out[r*n+c] = s[...]` under a merged guard: go/ssa
// loads s before it indexes out, and out's check is lifted past that load
// (liftablePrefix). Every launch, a one-thread one
// included, fails where, and with the index and length that, the kernel
// keeping every check under its guard does (Config.KeepChecks).
const liftPastSharedKernel = `package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=32x8
func K(t gpu.Thread, in, out []int32, n int) {
	s := gpu.Shared[int32](t, 32*33)
	for i := t.LinearIdx(); i < len(s); i += 256 {
		s[i] = int32(i*3 + 1)
	}
	t.Sync()
	tx, ty := t.ThreadIdx().X, t.ThreadIdx().Y
	for k := 0; k < 32; k += 8 {
		if r, c := ty+k, tx; r < n && c < n {
			out[r*n+c] = s[tx*33+ty+k] + int32(len(in))
		}
	}
}
`

func TestLiftPastSharedLoad(t *testing.T) {
	opt, err := CompileSource(Config{}, "k.go", []byte(liftPastSharedKernel))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(liftedCheck.FindAllString(opt.PTX, -1)); n != 1 {
		t.Fatalf("%d checks lifted above the guard, want out's, past the load of s\n%s", n, opt.PTX)
	}
	ref, err := CompileSource(Config{KeepChecks: true}, "k.go", []byte(liftPastSharedKernel))
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range [][3]int{{32, 8, 1}, {5, 3, 1}, {1, 1, 1}} {
		for _, inLen := range []int{0, 3, 32} {
			for _, n := range []int{-1, 0, 1, 2, 9, 32} {
				a := runBCE(t, opt, block, [3]int{1, 1, 1}, inLen, n)
				b := runBCE(t, ref, block, [3]int{1, 1, 1}, inLen, n)
				one := block == [3]int{1, 1, 1}
				if (a.site == "") != (b.site == "") || a.err != b.err || fmt.Sprint(a.out) != fmt.Sprint(b.out) ||
					one && (a.site != b.site || a.idx != b.idx || a.n != b.n) {
					t.Fatalf("block %v len(in) %d n %d: lifted %q index %d length %d out %v; reference %q index %d length %d out %v",
						block, inLen, n, a.site, int64(a.idx), a.n, a.out, b.site, int64(b.idx), b.n, b.out)
				}
			}
		}
	}
}
