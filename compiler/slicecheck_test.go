package compiler

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/gokern/kern/emu"
)

// x[lo:hi] of a 5-element x on the emulator: in range, at the edges, and
// past each bound, negative ones included. A failure records the site of
// the bound that failed (hi against cap first, then lo against hi, as Go
// checks them) with the bound as the index and its limit as the length;
// both checks share one branch.
func TestSliceExpressionChecks(t *testing.T) {
	p, err := CompileSource(Config{}, "k.go", []byte(`package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=32
func K(t gpu.Thread, x []int32, lo, hi int) {
	y := x[lo:hi]
	if len(y) > 0 {
		y[0] = 1
	}
}
`))
	if err != nil {
		t.Fatal(err)
	}
	sites := p.Kernels[0].Sites
	if len(sites) != 2 || sites[0] != "slice at k.go:7:8: [:x] with capacity y" || sites[1] != "slice at k.go:7:8: [x:y]" {
		t.Fatalf("sites %q, want the slice's two (y[0] is proven)", sites)
	}
	// One branch for both checks, whose block picks the failing one's
	// site, index and length (checkBothBounds).
	body := entryBody(t, p, "K")
	if n, sel := countLines(body, `^@%p\d+ bra \$L\d+_oob`), countLines(body, `^selp\.u32 %r\d+, \d+, \d+, %p\d+;`); n != 1 || sel != 1 {
		t.Errorf("%d conditional branches to a site and %d selections of a site code, want 1 and 1:\n%s", n, sel, body)
	}
	m, err := emu.Load([]byte(p.PTX))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		lo, hi        int64
		site          int // -1: no failure
		index, length int64
	}{
		{0, 5, -1, 0, 0}, {5, 5, -1, 0, 0}, {0, 0, -1, 0, 0}, {2, 4, -1, 0, 0},
		{0, 6, 0, 6, 5}, {1, -1, 0, -1, 5}, {7, 6, 0, 6, 5},
		{2, 1, 1, 2, 1}, {-1, 3, 1, -1, 3}, {6, 5, 1, 6, 5},
	} {
		dev := emu.NewDevice(emu.Options{})
		x, _ := dev.Alloc(4 * 5)
		params := make([]byte, 32)
		binary.LittleEndian.PutUint64(params[0:], x)
		binary.LittleEndian.PutUint64(params[8:], 5)
		binary.LittleEndian.PutUint64(params[16:], uint64(c.lo))
		binary.LittleEndian.PutUint64(params[24:], uint64(c.hi))
		_ = dev.Launch(m, "K", emu.LaunchConfig{Grid: [3]int{1, 1, 1}, Block: [3]int{1, 1, 1}, Params: params})
		r := readSlot(t, dev, m)
		if r.site != c.site || (c.site >= 0 && (int64(r.index) != c.index || int64(r.length) != c.length)) {
			t.Errorf("x[%d:%d]: site %d index %d length %d, want site %d index %d length %d",
				c.lo, c.hi, r.site, int64(r.index), int64(r.length), c.site, c.index, c.length)
		}
		if c.site >= 0 && !strings.HasPrefix(sites[r.site], SliceSitePrefix) {
			t.Errorf("x[%d:%d]: site %q", c.lo, c.hi, sites[r.site])
		}
	}
}

// Rows r*n:(r+1)*n of x and of y: go/ssa computes the bounds twice, y's
// lo ≤ hi is x's (lowBoundChecked), so y keeps only hi ≤ cap. Faults on
// the emulator: y shorter than x fails at y's site; n < 0 (hi < 0 after
// wrapping, or lo > hi) at x's.
func TestSameBoundsCheckedOnce(t *testing.T) {
	p, err := CompileSource(Config{}, "k.go", []byte(`package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=32
func K(t gpu.Thread, x, y []int32, r, n int) {
	a := x[r*n : (r+1)*n]
	b := y[r*n : (r+1)*n]
	if len(a) > 0 && len(b) > 0 {
		b[0] = a[0]
	}
}
`))
	if err != nil {
		t.Fatal(err)
	}
	sites := p.Kernels[0].Sites
	want := []string{"slice at k.go:7:8: [:x] with capacity y", "slice at k.go:7:8: [x:y]", "slice at k.go:8:8: [:x] with capacity y"}
	if len(sites) < 3 || sites[0] != want[0] || sites[1] != want[1] || sites[2] != want[2] || strings.Contains(strings.Join(sites, "\n"), "k.go:8:8: [x:y]") {
		t.Fatalf("sites %q, want %q first and no [x:y] at 8:8", sites, want)
	}
	m, err := emu.Load([]byte(p.PTX))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		lenY, r, n    int64
		site          int // -1: no failure
		index, length int64
	}{
		{12, 1, 4, -1, 0, 0}, {12, 2, 4, -1, 0, 0}, {8, 2, 4, 2, 12, 8}, {12, 0, -1, 0, -1, 12},
		{12, 2, 0, -1, 0, 0}, {12, -1, 3, 1, -3, 0},
	} {
		dev := emu.NewDevice(emu.Options{})
		x, _ := dev.Alloc(4 * 12)
		y, _ := dev.Alloc(4 * 12)
		params := make([]byte, 48)
		binary.LittleEndian.PutUint64(params[0:], x)
		binary.LittleEndian.PutUint64(params[8:], 12)
		binary.LittleEndian.PutUint64(params[16:], y)
		binary.LittleEndian.PutUint64(params[24:], uint64(c.lenY))
		binary.LittleEndian.PutUint64(params[32:], uint64(c.r))
		binary.LittleEndian.PutUint64(params[40:], uint64(c.n))
		_ = dev.Launch(m, "K", emu.LaunchConfig{Grid: [3]int{1, 1, 1}, Block: [3]int{1, 1, 1}, Params: params})
		r := readSlot(t, dev, m)
		if r.site != c.site || (c.site >= 0 && (int64(r.index) != c.index || int64(r.length) != c.length)) {
			t.Errorf("len(y)=%d r=%d n=%d: site %d index %d length %d, want site %d index %d length %d",
				c.lenY, c.r, c.n, r.site, int64(r.index), int64(r.length), c.site, c.index, c.length)
		}
	}
}
