package ir

import (
	"strings"
	"testing"
)

// checkedPair builds qkvPrep's shape: a load, its widening, the bounds
// check of a second index (a branch to a failure block that reads the
// index and, with oobReadsAt, the widened value), the second load, then
// a store of both. param makes the first load a kernel parameter's.
func checkedPair(param, oobReadsAt bool) *Func {
	f := &Func{Name: "k"}
	a, bb, c, i, n := f.NewReg(U64), f.NewReg(U64), f.NewReg(U64), f.NewReg(U64), f.NewReg(U64)
	pos, at, p, slot, sum, fail := f.NewReg(S32), f.NewReg(S64), f.NewReg(Pred), f.NewReg(S32), f.NewReg(S64), f.NewReg(U64)
	entry, oob := f.NewBlock("entry"), f.NewBlock("oob")
	b := &Builder{F: f, B: entry}
	space := Global
	if param {
		space = ParamSpace
	}
	b.Ld(space, false, S32, R(pos), Addr(a, 0))
	b.Cvt(S64, S32, "", at, R(pos))
	b.Setp(HS, U64, p, R(i), R(n))
	b.BraIf(p, false, oob)
	b.Ld(Global, false, S32, R(slot), Addr(bb, 0))
	b.Cvt(S64, S32, "", sum, R(slot))
	b.Arith(OpAdd, S64, sum, R(sum), R(at))
	b.St(Global, S64, Addr(c, 0), R(sum))
	b.Ret()
	b.B = oob
	b.Mov(U64, fail, R(i))
	if oobReadsAt {
		b.Arith(OpAdd, U64, fail, R(fail), R(at))
	}
	b.St(Global, U64, Addr(c, 8), R(fail))
	b.Ret()
	return f
}

// entryOrder lists the entry block's mnemonics' roots.
func entryOrder(f *Func) string {
	var out []string
	for _, in := range f.Blocks[0].Instrs {
		root, _, _ := strings.Cut(in.Text, ".")
		out = append(out, root)
	}
	return strings.Join(out, " ")
}

func TestSinkLoadUses(t *testing.T) {
	for _, c := range []struct {
		name              string
		param, oobReadsAt bool
		want              string
	}{
		// The widening follows the second load: both loads go out before
		// the warp waits for either.
		{"moved", false, false, "ld setp bra ld cvt cvt add st ret"},
		// A parameter's load is no round trip: nothing moves.
		{"param", true, false, "ld cvt setp bra ld cvt add st ret"},
		// The failure block reads the widened value: it stays before the
		// branch.
		{"live at the branch's target", false, true, "ld cvt setp bra ld cvt add st ret"},
	} {
		f := checkedPair(c.param, c.oobReadsAt)
		sinkLoadUses(f)
		if err := Check(f); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := entryOrder(f); got != c.want {
			t.Errorf("%s: entry block %q, want %q\n%s", c.name, got, c.want, listing(f))
		}
	}
}
