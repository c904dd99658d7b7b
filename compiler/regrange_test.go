package compiler

import (
	"fmt"
	"strings"
	"testing"
)

// regrangeSrc passes the caller's intervals to helpers (regrange.go): a
// slot number and a struct of lane offsets built by a helper (as
// gpu/tile's Attn), a promoted local stored to after its use in a loop,
// and a re-slice's length. Lines are referred to by the test.
const regrangeSrc = `package k

import "github.com/gokern/kern/gpu"

type lane struct{ off, row, cp int }

func newLane(t gpu.Thread) lane {
	l := lane{row: t.Lane() >> 2}
	l.off = l.row*8 + t.Lane()&3
	return l
}

func (l lane) getA(s []int32, slot int) int32 { return s[slot*64+l.off] }
func (l lane) getB(s []int32, slot int) int32 { return s[slot*64+l.off] }
func (l lane) getC(s []int32) int32           { return s[l.row*8+l.cp] }
func at(s []int32, i int) int32               { return s[i] }
func (p pr) getD(s []int32) int32             { return s[p.x] }

type pr struct{ x, y int }

//kern:kernel block=32
func K(t gpu.Thread, in, out []int32, n int) {
	s := gpu.Shared[int32](t, 128)
	for i := t.Lane(); i < len(s); i += 32 {
		s[i] = int32(i)
	}
	t.Sync()
	l := newLane(t)
	acc := l.getA(s, 1)
	acc += l.getB(s, n&3)
	var p lane
	p.row, p.cp = t.Lane()>>2, t.Lane()&7
	for range 1 + n>>2&1 {
		acc += p.getC(s)
		p.cp = 64 + t.Lane()
	}
	acc += at(s[:8-n>>3&1], t.Lane()&7)
	var ps [2]pr
	ps[0].x = t.Lane() & 7
	ps[1].x = 100 + t.Lane()
	if n&16 != 0 {
		acc += ps[1].getD(s)
	}
	if i := t.Lane(); i < len(out) {
		out[i] = acc
	}
}
`

// TestCallerIntervalsBoundHelpers: the checks the caller's intervals
// prove are left out (getA: slot 1 of 64 plus a lane offset ≤ 59, in
// 128), and those that can fail are kept and fail with their position,
// as in the kernel keeping every check: getB's slot n&3 reaches 3 (n&3 ≥
// 2 fails); getC's cp is 64+lane on a second iteration (n&4), a store
// lowered after the use (row·8 + cp reaches 56+95); at's re-slice is 7
// long when n&8, its index up to 7; getD's p.x is element 1's field of
// a local array of structs, stored through the element (100+lane when
// n&16).
func TestCallerIntervalsBoundHelpers(t *testing.T) {
	opt, err := CompileSource(Config{}, "k.go", []byte(regrangeSrc))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := CompileSource(Config{KeepChecks: true}, "k.go", []byte(regrangeSrc))
	if err != nil {
		t.Fatal(err)
	}
	kept := strings.Join(opt.Kernels[0].Checks.KeptAt, " ")
	if strings.Contains(kept, "k.go:13:") {
		t.Errorf("getA's s[slot*64+l.off] with slot 1 was not proven: kept %v", kept)
	}
	for _, at := range []string{"k.go:14:", "k.go:15:", "k.go:16:", "k.go:17:"} {
		if !strings.Contains(kept, at) {
			t.Errorf("the check at %s was proven: kept %v", at, kept)
		}
	}
	for _, tc := range []struct {
		n    int
		want string // the failing site's position, "" for none
	}{
		{0, ""}, {1, ""}, {2, "k.go:14:"}, {3, "k.go:14:"}, {4, "k.go:15:"}, {8, "k.go:16:"}, {16, "k.go:17:"}, {-1, "k.go:1"},
	} {
		a := runBCE(t, opt, [3]int{32, 1, 1}, [3]int{1, 1, 1}, 0, tc.n)
		b := runBCE(t, ref, [3]int{32, 1, 1}, [3]int{1, 1, 1}, 0, tc.n)
		if fmt.Sprint(a.out) != fmt.Sprint(b.out) || (a.site == "") != (b.site == "") || a.err != b.err {
			t.Errorf("n %d: out %v, site %q; reference %v, %q", tc.n, a.out, a.site, b.out, b.site)
		}
		if tc.want == "" && a.site != "" || !strings.Contains(a.site, tc.want) {
			t.Errorf("n %d: failing site %q, want %q", tc.n, a.site, tc.want)
		}
	}
}
