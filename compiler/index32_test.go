package compiler

// Tests of a kernel's 32-bit entry (index32.go): under launches that meet
// its assumptions it computes what the kernel's entry computes and fails
// at the same site with the same index and length.

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gokern/kern/emu"
)

// KERN_RANDOM=N runs N random kernels of bce_test.go's generator, marked
// idx32, instead of 30: each launch within the 32-bit entry's assumptions
// (small grids, buffers and n, n also negative) gives the same output,
// and the same failing check (site, index, length) for one thread, on
// both entries.
func TestIndex32EntryMatchesEntry(t *testing.T) {
	kernels := 30
	if n, err := strconv.Atoi(os.Getenv("KERN_RANDOM")); err == nil {
		kernels = n
	}
	narrowed, limits32, ran32, linear, regrouped := 0, 0, 0, 0, 0
	for k := range kernels {
		r := rand.New(rand.NewPCG(uint64(k), 32))
		bx, by := 1+r.IntN(48), 1+r.IntN(3)
		if r.IntN(4) == 0 {
			bx, by = 0, 0
		}
		S := 1 + r.IntN(200)
		src := bceKernel(uint64(k), bx, by, S, k%2 == 1)
		src = strings.Replace(src, "\n//kern:kernel", "\n//kern:kernel idx32", 1)
		p, err := CompileSource(Config{}, "k.go", []byte(src))
		if err != nil && strings.Contains(err.Error(), "[TypeError]") {
			continue
		}
		if err != nil {
			t.Fatalf("kernel %d: %v\n%s", k, err, src)
		}
		if got := p.Kernels[0].Entry32; got != "K_i32" {
			t.Fatalf("kernel %d: Entry32 = %q, want K_i32", k, got)
		}
		body := p.PTX[strings.Index(p.PTX, ".entry K_i32("):]
		if strings.Contains(body, "mul.wide.s32") || strings.Contains(body, "add.s32") || strings.Contains(body, "setp.lt.s32") {
			narrowed++
		}
		if strings.Contains(body, "min.s32") {
			limits32++ // a hoisted loop's limit in 32 bits (limit32)
		}
		if offsetSharedAddrs(body) > 0 {
			linear++ // a shared index's constant in its address (sharedlin.go)
		}
		if regroupedSums(body) > 0 {
			regrouped++ // (p+a)+c as p+(a+c) (reassoc32.go)
		}
		for shape := range 5 {
			maxX, maxY := bx, by
			if bx == 0 {
				maxX, maxY = 64, 2
			}
			block := [3]int{maxX, maxY, 1}
			if shape > 0 {
				block = [3]int{1 + r.IntN(maxX), 1 + r.IntN(maxY), 1}
			}
			grid := [3]int{1 + r.IntN(3), 1, 1}
			if shape == 4 {
				block, grid = [3]int{1, 1, 1}, [3]int{1, 1, 1}
			}
			inLen := []int{0, 1, S, S + 1, r.IntN(90)}[r.IntN(5)]
			n := []int{-3, 0, 1, inLen, inLen + 1, r.IntN(70)}[r.IntN(6)]
			nout := grid[0] * block[0] * block[1]
			entry := entryFor(t, p.Kernels[0], factArgs{vals: map[int]int64{2: int64(n)}, lens: map[int]int64{0: int64(inLen), 1: int64(nout)}})
			if entry == "K_i32" {
				ran32++
			}
			a := runBCEEntry(t, p, entry, block, grid, inLen, n)
			b := runBCEEntry(t, p, "K", block, grid, inLen, n)
			if (a.site == "") != (b.site == "") || a.err != b.err || fmt.Sprint(a.out) != fmt.Sprint(b.out) ||
				shape == 4 && (a.site != b.site || a.idx != b.idx || a.n != b.n) {
				t.Fatalf("kernel %d, block %v grid %v len(in) %d n %d: the 32-bit entry differs from the kernel's\n"+
					"  K_i32: site %q index %d length %d, emulator error %v\n  K:     site %q index %d length %d, emulator error %v\n  out %v\n  ref %v\n%s",
					k, block, grid, inLen, n, a.site, int64(a.idx), a.n, a.err, b.site, int64(b.idx), b.n, b.err, a.out, b.out, src)
			}
		}
	}
	if limits32 == 0 {
		t.Errorf("no 32-bit entry computes a hoisted loop's limit in 32 bits: the test exercises no limit32")
	}
	if ran32 < kernels {
		t.Errorf("only %d launches ran a 32-bit entry: its launch facts fail too often to test it", ran32)
	}
	if linear == 0 || regrouped == 0 {
		t.Errorf("%d shared indices split, %d sums regrouped: the test must exercise both sharedlin.go and reassoc32.go", linear, regrouped)
	}
	t.Logf("%d of %d 32-bit entries narrow, %d hoisted limits in 32 bits, %d split shared indices, %d regrouped sums; %d launches ran the 32-bit entry",
		narrowed, kernels, limits32, linear, regrouped, ran32)
	if narrowed < kernels/4 {
		t.Errorf("only %d of %d 32-bit entries have 32-bit arithmetic: the test exercises nothing", narrowed, kernels)
	}
}

// extremesKernel computes, per case, an index from two int parameters in
// 32-bit entries' range whose sums, products and quotients do not fit in
// 32 bits: the 32-bit entry must compute them in 64 bits (or prove them
// exact) and report the same index as the kernel's entry.
const extremesKernel = `package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=32 idx32
func K(t gpu.Thread, x, out []int64, a, b, which int) {
	if t.ThreadIdx().X != 0 {
		return
	}
	switch which {
	case 0:
		out[0] = x[a*b]
	case 1:
		out[0] = x[a+b]
	case 2:
		out[0] = x[a-b+5]
	case 3:
		out[0] = x[a/b+2]
	case 4:
		out[0] = x[a%b+3]
	case 5:
		q, r := a/b, a%b
		out[0] = x[(q*7+r)&7] + int64(q) + int64(r)
	case 6:
		if a < b {
			out[0] = 1
		} else if a*3 > b {
			out[0] = 2
		}
	case 7:
		out[0] = int64(a*b) + int64(a+b) + int64(a-b) + int64(a*4) + int64(b/16) + int64(a%8)
	}
}
`

func TestIndex32Extremes(t *testing.T) {
	p, err := CompileSource(Config{}, "k.go", []byte(extremesKernel))
	if err != nil {
		t.Fatal(err)
	}
	m, err := emu.Load([]byte(p.PTX))
	if err != nil {
		t.Fatal(err)
	}
	vals := []int64{math.MinInt32, math.MinInt32 + 1, -70000, -17, -1, 0, 1, 3, 16, 70000, math.MaxInt32 - 1, math.MaxInt32}
	ran32 := 0
	for which := range 8 {
		for _, a := range vals {
			for _, b := range vals {
				// The launch runs the 32-bit entry only where its launch
				// facts hold (launchfact.go: x[a*b] is proven by
				// a·b ≥ 0 and len(x) > a·b).
				entry := entryFor(t, p.Kernels[0], factArgs{vals: map[int]int64{2: a, 3: b, 4: int64(which)}, lens: map[int]int64{0: 8, 1: 1}})
				if entry == "K_i32" {
					ran32++
				}
				got := runExtremes(t, m, p, entry, a, b, which)
				want := runExtremes(t, m, p, "K", a, b, which)
				if got != want {
					t.Fatalf("case %d, a %d b %d: %s %+v, kernel %+v", which, a, b, entry, got, want)
				}
			}
		}
	}
	if ran32 < 8*len(vals)*len(vals)/2 {
		t.Errorf("only %d of %d launches ran the 32-bit entry", ran32, 8*len(vals)*len(vals))
	}
	if len(p.Kernels[0].Facts32) > 0 {
		t.Errorf("unguarded accesses were proven by launch facts %q", p.Kernels[0].Facts32)
	}
}

type extremesRun struct {
	out       int64
	site      string
	idx, n    uint64
	emulError bool
}

func runExtremes(t *testing.T, m *emu.Module, p *Package, entry string, a, b int64, which int) extremesRun {
	t.Helper()
	dev := emu.NewDevice(emu.Options{})
	const xLen = 8
	x, _ := dev.Alloc(8 * xLen)
	out, _ := dev.Alloc(8)
	raw := make([]byte, 8*xLen)
	for i := range xLen {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(100+i))
	}
	if err := dev.Write(x, raw); err != nil {
		t.Fatal(err)
	}
	if err := dev.Write(out, make([]byte, 8)); err != nil {
		t.Fatal(err)
	}
	params := make([]byte, 56)
	le := binary.LittleEndian
	le.PutUint64(params[0:], x)
	le.PutUint64(params[8:], xLen)
	le.PutUint64(params[16:], out)
	le.PutUint64(params[24:], 1)
	le.PutUint64(params[32:], uint64(a))
	le.PutUint64(params[40:], uint64(b))
	le.PutUint64(params[48:], uint64(which))
	var res extremesRun
	if err := dev.Launch(m, entry, emu.LaunchConfig{Grid: [3]int{1, 1, 1}, Block: [3]int{32, 1, 1}, Params: params}); err != nil {
		res.emulError = true
	}
	rec := readSlot(t, dev, m)
	if rec.code != 0 {
		res.site, res.idx, res.n = p.Kernels[0].Sites[rec.site], rec.index, rec.length
	}
	got := make([]byte, 8)
	if err := dev.Read(out, got); err != nil {
		t.Fatal(err)
	}
	res.out = int64(le.Uint64(got))
	return res
}
