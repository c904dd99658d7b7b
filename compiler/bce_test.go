package compiler

// The range analysis must never remove a check that could fail. Random
// kernels index shared memory, a buffer and re-slices of it with indices
// built from thread ids, loop counters (up, down, strided, grid-stride),
// constants, &, %, shifts, min/max and small integer types, under random
// guards (signed, and the unsigned idiom) and early returns. Each is compiled twice, as shipped and with
// Config.KeepChecks, and both run on the emulator at shapes and lengths
// chosen to hit the edges (partial blocks, lengths 0 and one past an
// index, negative n). Some index through helpers whose parameters, and
// the fields of struct arguments, only the caller's intervals bound. Outputs and whether a check failed must agree: a
// wrongly removed check shows up as a write the reference never made (a
// failing thread exits) or a failure only the reference reports.

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gokern/kern/emu"
)

type bceGen struct {
	r      *rand.Rand
	b      strings.Builder
	indent string
	ints   []string // int variables in scope
	arrays []string // slices in scope: s (shared), in, re-slices
	nvar   int
	depth  int
	// hoist makes every other top-level statement a hoistLoop.
	hoist bool
}

func (g *bceGen) line(format string, args ...any) {
	g.b.WriteString(g.indent)
	fmt.Fprintf(&g.b, format, args...)
	g.b.WriteString("\n")
}

func (g *bceGen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *bceGen) small() string { return strconv.Itoa(g.r.IntN(40)) }

// index is a random int expression, mostly small and non-negative.
func (g *bceGen) index(d int) string {
	if d <= 0 || g.r.IntN(3) == 0 {
		switch g.r.IntN(6) {
		case 0:
			return g.small()
		case 1:
			return g.pick([]string{"t.Lane()", "t.Warp()", "t.LinearIdx()", "t.GlobalX()", "t.BlockIdx().X", "n"})
		default:
			return g.pick(g.ints)
		}
	}
	x := g.index(d - 1)
	c := strconv.Itoa(1 + g.r.IntN(37))
	if g.r.IntN(10) == 0 { // a helper's result (ranges.go's callee)
		return g.pick([]string{"hxor", "hpick", "hnest"}) + "(" + x + ", " + g.index(d-1) + ")"
	}
	switch g.r.IntN(13) {
	case 0:
		return "(" + x + " + " + g.index(d-1) + ")"
	case 1:
		return "(" + x + " - " + g.index(d-1) + ")"
	case 2:
		return "(" + x + "*" + strconv.Itoa(g.r.IntN(9)) + " + " + g.small() + ")"
	case 3:
		return "(" + x + " & " + c + ")"
	case 4:
		return "(" + x + " % " + c + ")"
	case 5:
		return "(" + x + " >> " + strconv.Itoa(g.r.IntN(4)) + ")"
	case 6:
		return "(" + x + " << " + strconv.Itoa(g.r.IntN(3)) + ")"
	case 7:
		return "min(" + x + ", " + c + ")"
	case 8:
		return "max(" + x + ", " + g.small() + ")"
	case 9:
		return "int(uint8(" + x + "))"
	case 10:
		return "int(int8(" + x + "))"
	case 11:
		return "(" + x + " / " + c + ")"
	}
	return "(" + x + " - " + c + ")"
}

func (g *bceGen) newInt(init string) string {
	g.nvar++
	v := fmt.Sprintf("v%d", g.nvar)
	g.line("%s := %s", v, init)
	g.line("_ = %s", v)
	g.ints = append(g.ints, v)
	return v
}

func (g *bceGen) block(body func()) {
	saved, savedInts, savedArrays := g.indent, len(g.ints), len(g.arrays)
	g.indent += "\t"
	g.depth++
	body()
	g.depth--
	g.indent, g.ints, g.arrays = saved, g.ints[:savedInts], g.arrays[:savedArrays]
}

func (g *bceGen) stmts(n int) {
	for range n {
		g.stmt()
	}
}

func (g *bceGen) stmt() {
	if g.hoist && g.depth == 0 && g.r.IntN(2) == 0 {
		g.nvar++
		g.hoistLoop(fmt.Sprintf("k%d", g.nvar))
		return
	}
	a := g.pick(g.arrays)
	switch k := g.r.IntN(10); {
	case k < 3:
		g.line("acc += %s[%s]", a, g.index(2))
	case k == 3:
		g.line("acc += int32(%s)", g.index(3))
	case k == 4 && g.r.IntN(3) == 0:
		g.guardedTile(a)
	case k == 4:
		v := g.newInt(g.index(2))
		switch g.r.IntN(4) {
		case 0:
			g.line("if %s < len(%s) && %s >= 0 {", v, a, v)
		case 3: // bounds_unsigned.go's idiom, or a look-alike on another bound
			g.line("if uint(%s) < uint(%s) {", v, g.pick([]string{"len(" + a + ")", "len(" + g.pick(g.arrays) + ")", "n"}))
		case 1:
			g.line("if %s < %s {", v, g.pick([]string{"n", g.small(), "len(" + a + ")", "cap(" + a + ")"}))
		default:
			g.line("if %s >= %s {", v, g.small())
		}
		g.block(func() { g.line("acc += %s[%s]", a, v); g.maybe() })
		g.line("}")
	case k == 5:
		g.line("if %s > %s {", g.index(2), g.pick([]string{"n", g.small()}))
		g.block(func() { g.line("return") })
		g.line("}")
	case k == 6 && g.depth < 3:
		g.loop()
	case k == 7:
		lo := g.index(1)
		if g.r.IntN(2) == 0 {
			lo = g.newInt(lo)
		}
		g.nvar++
		row := fmt.Sprintf("row%d", g.nvar)
		if g.r.IntN(2) == 0 {
			m := g.pick([]string{"n", g.small()})
			g.line("%s := in[%s : %s+%s]", row, lo, lo, m)
		} else {
			m := g.pick([]string{"n", g.small()})
			g.line("%s := in[%s*%s : (%s+1)*%s]", row, lo, m, lo, m)
		}
		g.line("_ = %s", row)
		g.arrays = append(g.arrays, row)
	default:
		if g.r.IntN(3) == 0 {
			g.helperStmt(a)
			return
		}
		g.line("acc += %s[%s]", a, g.index(3))
	}
}

// helperStmt indexes a through helpers whose parameters only the caller's
// intervals bound (regrange.go): an index argument, a struct of offsets
// built by a helper (one field computed from another), a copy of it with
// a field bumped (a store that reads the field back), and a local struct
// whose field is stored again after its use in a loop.
func (g *bceGen) helperStmt(a string) {
	if g.r.IntN(2) == 0 {
		a = "s" // the shared array, of constant length: provable
	}
	switch g.r.IntN(5) {
	case 0:
		g.line("acc += hget(%s, %s)", a, g.index(2))
	case 1:
		g.line("acc += mkOffs(%s, %s).at(%s, %s&7)", g.index(1), g.index(1), a, g.index(1))
	case 2:
		g.line("acc += mkOffs(%s, %s).at2(%s, %s)", g.index(1), g.index(1), a, g.index(1))
	case 3:
		g.line("acc += hbump(mkOffs(%s, %s), %s).at(%s, %s)", g.index(1), g.index(1), g.small(), a, g.index(1))
	default:
		g.nvar++
		o, k := fmt.Sprintf("o%d", g.nvar), fmt.Sprintf("k%d", g.nvar)
		g.line("var %s offs", o)
		g.line("%s.a = %s", o, g.index(1))
		g.line("for %s := range %d {", k, 1+g.r.IntN(3))
		g.block(func() {
			g.ints = append(g.ints, k)
			g.line("acc += %s.at(%s, %s)", o, a, k)
			g.line("%s.a = %s", o, g.index(1))
		})
		g.line("}")
	}
}

// guardedTile writes an edge-tile load as MatMul32 does, an index
// row*w + col under `if row < h && col < w` (and sometimes a third test),
// with h and w from n, constants and the slice's length, so that a short
// slice or a negative n makes it fail. condmerge.go lowers the tests as
// one predicate; the reference keeps their branches. Half of the loads
// add an element of a local array kept in registers, read before the
// index is computed.
func (g *bceGen) guardedTile(a string) {
	row, col := g.newInt(g.index(1)), g.newInt(g.index(1))
	h := g.pick([]string{"n", g.small(), "len(" + a + ")", "n - 2"})
	w := g.pick([]string{"n", g.small(), "3", "len(" + a + ")"})
	cond := fmt.Sprintf("%s < %s && %s < %s", row, h, col, w)
	switch g.r.IntN(4) {
	case 0:
		cond += fmt.Sprintf(" && %s+%s >= %s", row, col, g.small())
	case 1:
		cond = fmt.Sprintf("%s >= 0 && ", col) + cond
	}
	g.nvar++
	v := fmt.Sprintf("e%d", g.nvar)
	g.line("%s := int32(%s)", v, g.small())
	g.line("if %s {", cond)
	if g.r.IntN(2) == 0 {
		// A local array's element read first (go/ssa evaluates the left
		// operand first), as MatMul32's epilogue stores acc[i]: liftcheck.go
		// lifts the check past the register read.
		g.block(func() { g.line("%s = reg[%d] + %s[%s*%s + %s]", v, g.r.IntN(4), a, row, w, col); g.maybe() })
	} else {
		g.block(func() { g.line("%s = %s[%s*%s + %s]", v, a, row, w, col); g.maybe() })
	}
	g.line("}")
	g.line("acc += %s", v)
}

func (g *bceGen) maybe() {
	if g.r.IntN(2) == 0 {
		g.stmt()
	}
}

func (g *bceGen) loop() {
	g.nvar++
	k := fmt.Sprintf("k%d", g.nvar)
	switch g.r.IntN(7) {
	case 5, 6:
		g.hoistLoop(k)
		return
	case 0:
		g.line("for %s := range %d {", k, 1+g.r.IntN(12))
	case 1:
		g.line("for %s := %d; %s < %d; %s += %d {", k, g.r.IntN(5), k, 1+g.r.IntN(40), k, 1+g.r.IntN(9))
	case 2:
		g.line("for %s := t.ThreadIdx().X; %s < n; %s += t.BlockDim().X {", k, k, k)
	case 3:
		g.line("for %s := %s; %s >= 0; %s-- {", k, g.pick([]string{"n", g.small()}), k, k)
	default:
		a := g.pick(g.arrays)
		g.line("for %s := range %s {", k, a)
	}
	walk := g.r.IntN(2) == 0
	g.block(func() {
		g.ints = append(g.ints, k)
		g.line("acc += int32(%s)", k)
		if walk {
			g.kTile(k)
		}
		g.stmts(1 + g.r.IntN(3))
	})
	g.line("}")
}

// kTile writes MatMul32's K-loop load: a[row*w + k + col] under
// `row < h && k+col < w`, affine in the loop's counter k, whose index
// guardiv.go walks in counted loops (a short slice or a negative n still
// fails it, reporting the walked index).
func (g *bceGen) kTile(k string) {
	a := g.pick(g.arrays)
	row := g.pick([]string{"tx", "ty", g.small(), "n - 5"})
	col := g.pick([]string{"tx", "ty", "0", g.small(), "-3"})
	h := g.pick([]string{"n", g.small(), "len(" + a + ")"})
	w := g.pick([]string{"n", g.small(), "8", "len(" + a + ")"})
	g.nvar++
	v := fmt.Sprintf("e%d", g.nvar)
	g.line("%s := int32(%s)", v, g.small())
	g.line("if %s < %s && %s+%s < %s {", row, h, k, col, w)
	g.line("\t%s = %s[%s*%s + %s + %s]", v, a, row, w, k, col)
	g.line("}")
	g.line("acc += %s", v)
}

// hoistLoop writes a counted loop whose first statements index a slice at
// k plus an invariant, the shape hoist.go takes the checks out of: from
// constants, thread ids, n and the loop's own bound, some positive, some
// negative, with steps 1, a constant, the block width and twice it
// computed before the loop.
func (g *bceGen) hoistLoop(k string) {
	lo := g.pick([]string{"0", g.small(), "tx", "ty", "n - 3"})
	bound := g.pick([]string{"n", "len(in)", g.small(), "n + 2", "len(" + g.pick(g.arrays) + ")"})
	step := g.pick([]string{"1", strconv.Itoa(1 + g.r.IntN(9)), "t.BlockDim().X", "bw"})
	g.line("for %s := %s; %s < %s; %s += %s {", k, lo, k, bound, k, step)
	g.block(func() {
		g.ints = append(g.ints, k)
		for range 1 + g.r.IntN(3) {
			inv := g.pick([]string{"0", g.small(), "-" + g.small(), "tx", "ty*" + g.small(), "n", "-n", "(n - 7)", "tx - " + g.small()})
			if len(g.ints) > 3 && g.r.IntN(3) == 0 {
				inv = g.pick(g.ints[:len(g.ints)-1])
			}
			c := g.pick([]string{"", " + 1", " - 1", " + 8", " + " + g.small()})
			g.line("acc += %s[%s + %s%s]", g.pick(g.arrays), k, inv, c)
		}
		if g.r.IntN(2) == 0 {
			g.stmt()
		}
	})
	g.line("}")
}

// bceKernel writes kernel K(t, in, out []int32, n int) with a shared array
// of S elements and block shape bx×by (0: no directive).
func bceKernel(seed uint64, bx, by, S int, hoist bool) string {
	g := &bceGen{r: rand.New(rand.NewPCG(seed, 8)), indent: "\t", hoist: hoist}
	g.b.WriteString("package k\n\nimport \"github.com/gokern/kern/gpu\"\n\n")
	if bx > 0 {
		fmt.Fprintf(&g.b, "//kern:kernel block=%dx%d\n", bx, by)
	} else {
		g.b.WriteString("//kern:kernel\n")
	}
	g.b.WriteString("func K(t gpu.Thread, in, out []int32, n int) {\n")
	g.line("s := gpu.Shared[int32](t, %d)", S)
	g.line("for i := t.LinearIdx(); i < len(s); i += t.BlockDim().X * t.BlockDim().Y {")
	g.line("\ts[i] = int32(i*7 + 1)")
	g.line("}")
	g.line("t.Sync()")
	g.line("tx, ty := t.ThreadIdx().X, t.ThreadIdx().Y")
	g.line("acc := int32(0)")
	// bw is a step computed before the loops, as a grid stride is:
	// hoist_lower.go's anchorStep puts it into the limit.
	g.line("bw := 2 * t.BlockDim().X")
	g.line("_, _, _ = tx, ty, bw")
	g.line("reg := [4]int32{int32(tx), 5, int32(ty) - 3, 7}")
	g.line("_ = reg")
	g.ints = []string{"tx", "ty"}
	g.arrays = []string{"s", "in"}
	g.stmts(3 + g.r.IntN(5))
	g.line("if o := t.BlockIdx().X*t.BlockDim().X*t.BlockDim().Y + t.LinearIdx(); o < len(out) {")
	g.line("\tout[o] = acc")
	g.line("}")
	g.b.WriteString("}\n")
	g.b.WriteString(bceHelpers)
	return g.b.String()
}

// bceHelpers are the helpers random indices call: a swizzle as gpu/tile's
// (non-negative when both operands are), a pick with two returns (one
// may be negative) and a helper calling a helper; and those helperStmt
// indexes through.
const bceHelpers = `
func hxor(x, y int) int { return x ^ (y >> 1 & 3) }

func hpick(x, y int) int {
	if x < y {
		return x
	}
	return y - 1
}

func hnest(x, y int) int { return hxor(x&15, y) + hpick(y, 9) }

type offs struct{ a, b int }

func mkOffs(x, y int) offs {
	o := offs{a: x & 31}
	o.b = o.a*2 + y
	return o
}

func (o offs) at(s []int32, k int) int32  { return s[o.a+k] }
func (o offs) at2(s []int32, k int) int32 { return s[o.b-k] }
func hget(s []int32, i int) int32         { return s[i] }
func hbump(o offs, d int) offs            { o.a += d; return o }
`

// liftedCheck matches a bounds check and-ed with its guard and its
// branch to the site's report (liftcheck.go).
var liftedCheck = regexp.MustCompile(`and\.pred (%p\d+), %p\d+, %p\d+;\n(?:\t\.loc[^\n]*\n)?\t@(%p\d+) bra \$L\d+_oob`)

// bceRun is one launch's observable result.
type bceRun struct {
	out  []int32
	site string // the failing check's position, "" when none failed
	err  bool   // the emulator itself reported an error
	// idx and n are the failing check's index and length.
	idx, n uint64
}

func runBCE(t *testing.T, p *Package, block, grid [3]int, inLen, n int) bceRun {
	t.Helper()
	return runBCEEntry(t, p, "K", block, grid, inLen, n)
}

// runBCEEntry is runBCE launching the module's entry named entry.
func runBCEEntry(t *testing.T, p *Package, entry string, block, grid [3]int, inLen, n int) bceRun {
	t.Helper()
	// One worker: blocks run one after another in index order. The random
	// kernels may write one element from two blocks (an offset that falls
	// below out's second half), and with blocks in parallel which write
	// lands last would differ between the two runs compared.
	dev := emu.NewDevice(emu.Options{Workers: 1})
	m, err := emu.Load([]byte(p.PTX))
	if err != nil {
		t.Fatal(err)
	}
	nout := grid[0] * block[0] * block[1]
	in, _ := dev.Alloc(4*inLen + 4)
	out, _ := dev.Alloc(4 * nout)
	raw := make([]byte, 4*inLen)
	for i := range inLen {
		binary.LittleEndian.PutUint32(raw[4*i:], uint32(1000+i*3))
	}
	if err := dev.Write(in, raw); err != nil {
		t.Fatal(err)
	}
	if err := dev.Write(out, make([]byte, 4*nout)); err != nil {
		t.Fatal(err)
	}
	params := make([]byte, 40)
	binary.LittleEndian.PutUint64(params[0:], in)
	binary.LittleEndian.PutUint64(params[8:], uint64(inLen))
	binary.LittleEndian.PutUint64(params[16:], out)
	binary.LittleEndian.PutUint64(params[24:], uint64(nout))
	binary.LittleEndian.PutUint64(params[32:], uint64(int64(n)))
	var res bceRun
	if err := dev.Launch(m, entry, emu.LaunchConfig{Grid: grid, Block: block, Params: params}); err != nil {
		res.err = true
	}
	rec := readSlot(t, dev, m)
	res.idx, res.n = rec.index, rec.length
	if rec.code != 0 {
		res.site = "?"
		if rec.site >= 0 && rec.site < len(p.Kernels[0].Sites) {
			res.site = p.Kernels[0].Sites[rec.site]
		}
	}
	got := make([]byte, 4*nout)
	if err := dev.Read(out, got); err != nil {
		t.Fatal(err)
	}
	for i := range nout {
		res.out = append(res.out, int32(binary.LittleEndian.Uint32(got[4*i:])))
	}
	return res
}

// KERN_RANDOM=N runs N kernels instead of 30.
func TestBoundsEliminationKeepsFailingChecks(t *testing.T) { testBCE(t, false) }

// The same with kernels made mostly of loops whose checks hoist.go takes
// out: in one thread, the failure reported must be the first access the
// per-iteration checks fail, with its index and length.
func TestHoistedChecksKeepFailingChecks(t *testing.T) { testBCE(t, true) }

func testBCE(t *testing.T, hoist bool) {
	kernels := 30
	if n, err := strconv.Atoi(os.Getenv("KERN_RANDOM")); err == nil {
		kernels = n
	}
	skipped, hoisted, byBW, pure, merged, lifted, helped := 0, 0, 0, 0, 0, 0, 0
	for k := range kernels {
		r := rand.New(rand.NewPCG(uint64(k), map[bool]uint64{false: 77, true: 78}[hoist]))
		bx, by := 1+r.IntN(48), 1+r.IntN(3)
		if r.IntN(4) == 0 {
			bx, by = 0, 0
		}
		S := 1 + r.IntN(200)
		src := bceKernel(uint64(k), bx, by, S, hoist)
		opt, err := CompileSource(Config{}, "k.go", []byte(src))
		if err != nil && strings.Contains(err.Error(), "[TypeError]") {
			skipped++ // a constant index the type checker rejects (negative, or past an array)
			continue
		}
		if err != nil {
			t.Fatalf("kernel %d: %v\n%s", k, err, src)
		}
		hoisted += opt.Kernels[0].Checks.Hoisted
		if strings.Contains(src, "+= bw {") && opt.Kernels[0].Checks.Hoisted > 0 {
			byBW++ // likely a hoisted loop whose step anchorStep puts into the limit
		}
		if strings.Contains(opt.PTX, "hoisted_early") {
			pure++ // a pure loop: the entry edge decides the fault (hoist_pure.go)
		}
		if strings.Contains(opt.PTX, "and.pred") {
			merged++ // a short-circuit guard as one predicate (condmerge.go)
		}
		if liftedCheck.MatchString(opt.PTX) {
			lifted++ // a check and-ed with its guard (liftcheck.go)
		}
		helped += helperProven(src, opt.Kernels[0].Checks.KeptAt)
		ref, err := CompileSource(Config{KeepChecks: true}, "k.go", []byte(src))
		if err != nil {
			t.Fatalf("kernel %d (KeepChecks): %v", k, err)
		}
		for shape := range 5 {
			maxX, maxY := bx, by
			if bx == 0 {
				maxX, maxY = 64, 2
			}
			block := [3]int{maxX, maxY, 1}
			if shape > 0 { // partial blocks, down to one thread
				block = [3]int{1 + r.IntN(maxX), 1 + r.IntN(maxY), 1}
			}
			grid := [3]int{1 + r.IntN(3), 1, 1}
			if shape == 4 { // one thread: the failing site is deterministic
				block, grid = [3]int{1, 1, 1}, [3]int{1, 1, 1}
			}
			inLen := []int{0, 1, S, S + 1, r.IntN(90)}[r.IntN(5)]
			n := []int{-3, 0, 1, inLen, inLen + 1, r.IntN(70)}[r.IntN(6)]
			a := runBCE(t, opt, block, grid, inLen, n)
			b := runBCE(t, ref, block, grid, inLen, n)
			// Which failing thread reports first depends on how the
			// emulator interleaves warps and blocks, so only whether a
			// check failed is compared; the outputs show every thread
			// that went past a check the reference fails.
			if (a.site == "") != (b.site == "") || a.err != b.err || fmt.Sprint(a.out) != fmt.Sprint(b.out) {
				t.Fatalf("kernel %d, block %v grid %v len(in) %d n %d: analysed kernel differs from the one keeping every check\n"+
					"  failing site %q, emulator error %v\n  reference: %q, %v\n  out %v\n  ref %v\n%s",
					k, block, grid, inLen, n, a.site, a.err, b.site, b.err, a.out, b.out, src)
			}
			// One thread reports the first check it fails: a hoisted check
			// must name the same access, index and length as the
			// per-iteration one.
			if shape == 4 && (a.site != b.site || a.idx != b.idx || a.n != b.n) {
				t.Fatalf("kernel %d, one thread, len(in) %d n %d: failure at %s index %d length %d, reference %s index %d length %d\n%s",
					k, inLen, n, a.site, int64(a.idx), a.n, b.site, int64(b.idx), b.n, src)
			}
		}
	}
	if hoist && hoisted < kernels/2 {
		t.Errorf("no check of %d random kernels was hoisted: the generator needs fixing", kernels)
	}
	if hoist && byBW == 0 {
		t.Errorf("no kernel hoists checks with a step computed before the loop: the generator needs fixing")
	}
	if lifted == 0 {
		t.Errorf("no kernel lifts a guarded check: the generator needs fixing")
	}
	if merged == 0 {
		t.Errorf("no kernel has a merged short-circuit guard: the generator needs fixing")
	}
	if hoist && pure == 0 {
		t.Errorf("no kernel has a pure hoisted loop: the generator needs fixing")
	}
	if !hoist && helped == 0 {
		t.Errorf("no helper's index was proven from its caller's intervals: the generator needs fixing")
	}
	t.Logf("%d checks hoisted; %d kernels hoist with a loop stepping by bw, %d with a pure loop; %d merge a guard, %d lift a check; %d prove a helper's index", hoisted, byBW, pure, merged, lifted, helped)
	if skipped > kernels/4 {
		t.Errorf("%d of %d random kernels did not type-check: the generator needs fixing", skipped, kernels)
	}
}

// helperProven reports (1 or 0) whether a kernel calls helperStmt's
// helpers and the check in one of their bodies was proven in every copy:
// only the caller's intervals can prove it (regrange.go).
func helperProven(src string, kept []string) int {
	all := strings.Join(kept, " ")
	for i, l := range strings.Split(src, "\n") {
		for def, call := range map[string]string{"func (o offs) at(": ".at(", "func (o offs) at2(": ".at2(", "func hget(": "+= hget("} {
			if strings.HasPrefix(l, def) && strings.Contains(src, call) && !strings.Contains(all, fmt.Sprintf("k.go:%d:", i+1)) {
				return 1
			}
		}
	}
	return 0
}

// A capacity bounds nothing about a length: s[i] under i < cap(s) keeps
// its check (a re-slice x[:2] has capacity len(x)).
func TestCapDoesNotProveAnIndex(t *testing.T) {
	src := `package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=64
func K(t gpu.Thread, x, out []int32) {
	s := x[0:2]
	if i := t.ThreadIdx().X; i < cap(s) {
		out[0] = s[i]
	}
}
`
	p, err := CompileSource(Config{}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Kernels[0].Checks; !strings.Contains(strings.Join(c.KeptAt, " "), "k.go:9:13") {
		t.Errorf("s[i] under i < cap(s) was proven: kept %v", c.KeptAt)
	}
}

// A helper's result is bounded from its body with the call's arguments:
// gpu/tile's swizzle ch ^ (r>>1&3) of ch < 4 stays below 4, so the index
// into a shared array of 4·32 is proven; the same helper given ch < 8
// may reach 7 and keeps its check, and so does a helper whose other
// return can be negative.
func TestHelperResultBoundsAnIndex(t *testing.T) {
	src := `package k

import "github.com/gokern/kern/gpu"

func swz(r, ch int) int { return ch ^ (r >> 1 & 3) }

func pick(x, y int) int {
	if x < y {
		return x
	}
	return y - 1
}

//kern:kernel block=128
func K(t gpu.Thread, out []int32) {
	s := gpu.Shared[int32](t, 4*32)
	r, ch := t.ThreadIdx().X>>2, t.ThreadIdx().X&3
	s[r+32*swz(r, ch)] = 1
	t.Sync()
	x := s[r+32*swz(r, t.ThreadIdx().X&7)]
	x += s[pick(r, ch)]
	out[0] = x
}
`
	p, err := CompileSource(Config{}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	kept := strings.Join(p.Kernels[0].Checks.KeptAt, " ")
	if strings.Contains(kept, "k.go:18:3") {
		t.Errorf("s[r+32*swz(r, ch)] with ch < 4 was not proven: kept %v", kept)
	}
	for _, at := range []string{"k.go:20:8", "k.go:21:8"} {
		if !strings.Contains(kept, at) {
			t.Errorf("the check at %s was proven: kept %v", at, kept)
		}
	}
}

// factTile writes a guarded 2-D access whose check only a launch fact
// proves (launchfact.go): in[r*W + c + K] under r < H && c < W (or an
// early return, or a loop's bound), r and c non-negative from thread
// ids, block ids and counters, H and W from n. Short slices, negative n
// and grids past H make the facts fail, or the access.
func (g *bceGen) factTile() {
	nonNeg := []string{"tx", "ty", "t.GlobalX()", "t.BlockIdx().X*4 + ty", "tx / 2", "tx % 5", "t.LinearIdx()"}
	bound := []string{"n", "n - 2", "n / 2", "len(in) / 4", "5", "n + 1"}
	r, c := g.newInt(g.pick(nonNeg)), g.newInt(g.pick(nonNeg))
	H, W := g.pick(bound), g.pick([]string{"n", "n - 1", "n / 2", "3"})
	k := g.pick([]string{"0", "0", "1", "2"})
	switch g.r.IntN(4) {
	case 0: // a loop over c, as MatMulMMA's k loop
		g.nvar++
		kv := fmt.Sprintf("k%d", g.nvar)
		if g.r.IntN(2) == 0 {
			// W even, as MatMulMMA's k%16 == 0: the counter stops at
			// W−2 (align.go), so in[r*W + k + 1] is proven by len ≥ H·W.
			W = g.newInt(W)
			g.line("if %s%%2 != 0 {", W)
			g.block(func() { g.line("return") })
			g.line("}")
		}
		g.line("if %s < %s {", r, H)
		g.block(func() {
			g.line("for %s := 0; %s < %s; %s += 2 {", kv, kv, W, kv)
			g.line("\tacc += in[%s*%s + %s + %s]", r, W, kv, g.pick([]string{"0", "1", "tx % 2"}))
			g.line("}")
		})
		g.line("}")
	case 1: // an early return on a scaled row, as MatMulMMA's tm*16 >= m
		g.line("if %s*2 >= %s || %s >= %s {", r, H, c, W)
		g.block(func() { g.line("return") })
		g.line("}")
		g.line("acc += in[(%s*2 + 1)*%s + %s + %s]", r, W, c, k)
	case 2: // a store, as the transpose's, into out's upper half; its
		// value depends on the index only, so threads storing to one
		// element race harmlessly
		g.line("if %s < %s && %s < %s {", r, H, c, W)
		g.block(func() { g.line("out[len(out)/2 + %s*%s + %s] = in[%s*%s + %s + %s]", r, W, c, r, W, c, k) })
		g.line("}")
	default:
		g.line("if %s < %s && %s < %s {", r, H, c, W)
		g.block(func() { g.line("acc += in[%s*%s + %s + %s]", r, W, c, k); g.maybe() })
		g.line("}")
	}
}

// KERN_RANDOM=N runs N kernels instead of 30. Random idx32 kernels with
// guarded 2-D accesses (factTile) run, each launch on the entry package
// kern would pick (the 32-bit one only where its launch facts hold), at
// lengths around the facts' bounds: outputs and whether a check failed
// must match the kernel compiled with Config.KeepChecks, and for one
// thread the site, index and length too. A launch whose facts fail but
// whose accesses stay in bounds must report nothing.
func TestLaunchFactsKeepFailingChecks(t *testing.T) {
	kernels := 30
	if n, err := strconv.Atoi(os.Getenv("KERN_RANDOM")); err == nil {
		kernels = n
	}
	withFacts, ran32, missedClean := 0, 0, 0
	for k := range kernels {
		r := rand.New(rand.NewPCG(uint64(k), 79))
		bx, by := 1+r.IntN(16), 1+r.IntN(3)
		g := &bceGen{r: rand.New(rand.NewPCG(uint64(k), 80)), indent: "\t"}
		g.b.WriteString("package k\n\nimport \"github.com/gokern/kern/gpu\"\n\n")
		fmt.Fprintf(&g.b, "//kern:kernel block=%dx%d idx32\n", bx, by)
		g.b.WriteString("func K(t gpu.Thread, in, out []int32, n int) {\n")
		g.line("tx, ty := t.ThreadIdx().X, t.ThreadIdx().Y")
		g.line("_, _ = tx, ty")
		g.line("acc := int32(1)")
		g.ints = []string{"tx", "ty"}
		g.arrays = []string{"in"}
		for range 1 + r.IntN(3) {
			g.factTile()
		}
		g.line("if o := t.BlockIdx().X*t.BlockDim().X*t.BlockDim().Y + t.LinearIdx(); o < len(out)/2 {")
		g.line("\tout[o] = acc")
		g.line("}")
		g.b.WriteString("}\n")
		g.b.WriteString(bceHelpers)
		src := g.b.String()
		opt, err := CompileSource(Config{}, "k.go", []byte(src))
		if err != nil {
			t.Fatalf("kernel %d: %v\n%s", k, err, src)
		}
		if len(opt.Kernels[0].Facts32) > 0 {
			withFacts++
		}
		ref, err := CompileSource(Config{KeepChecks: true}, "k.go", []byte(src))
		if err != nil {
			t.Fatalf("kernel %d (KeepChecks): %v", k, err)
		}
		for shape := range 6 {
			block := [3]int{bx, by, 1}
			if shape > 0 {
				block = [3]int{1 + r.IntN(bx), 1 + r.IntN(by), 1}
			}
			grid := [3]int{1 + r.IntN(3), 1, 1}
			if shape == 5 {
				block, grid = [3]int{1, 1, 1}, [3]int{1, 1, 1}
			}
			n := []int{-3, 0, 1, 2, 3 + r.IntN(6), 9 + r.IntN(4)}[r.IntN(6)]
			inLen := max(0, []int{n * n, n*n - 1, n*n + 1, n*n + 2, n * (n - 1), r.IntN(90), 0}[r.IntN(7)])
			nout := grid[0] * block[0] * block[1]
			entry := entryFor(t, opt.Kernels[0], factArgs{vals: map[int]int64{2: int64(n)}, lens: map[int]int64{0: int64(inLen), 1: int64(nout)}})
			a := runBCEEntry(t, opt, entry, block, grid, inLen, n)
			b := runBCEEntry(t, ref, "K", block, grid, inLen, n)
			if entry == "K_i32" {
				ran32++
			} else if len(opt.Kernels[0].Facts32) > 0 && b.site == "" {
				missedClean++ // a fact failed, yet no access was out of bounds
			}
			if (a.site == "") != (b.site == "") || a.err != b.err || fmt.Sprint(a.out) != fmt.Sprint(b.out) ||
				shape == 5 && (a.site != b.site || a.idx != b.idx || a.n != b.n) {
				t.Fatalf("kernel %d, %s, block %v grid %v len(in) %d n %d: differs from the kernel keeping every check\n"+
					"  %s: site %q index %d length %d, emulator error %v\n  ref: site %q index %d length %d, emulator error %v\n  out %v\n  ref %v\n  facts %q\n%s",
					k, entry, block, grid, inLen, n, entry, a.site, int64(a.idx), a.n, a.err, b.site, int64(b.idx), b.n, b.err, a.out, b.out, opt.Kernels[0].Facts32, src)
			}
		}
	}
	t.Logf("%d of %d kernels have launch facts; %d launches ran the 32-bit entry, %d failed a fact with no access out of bounds", withFacts, kernels, ran32, missedClean)
	if withFacts < kernels/2 || ran32 == 0 || missedClean == 0 {
		t.Errorf("the generator exercises too little: %d kernels with facts, %d 32-bit runs, %d clean runs failing a fact", withFacts, ran32, missedClean)
	}
}
