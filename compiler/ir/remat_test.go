package ir

import (
	"strings"
	"testing"
)

// rematFunc builds: w = ctaid.x·8 + tid.x>>5 and c = %clock before a
// counting loop over i < n; the loop reads u = tid.y (its own use); after
// the loop a check block reads w, u and c and branches to a store of w
// and to a block that records w, and, when inner is set, a second loop
// also reads w.
func rematFunc(inner bool) (f *Func, w, u, c Reg) {
	f = &Func{Name: "k"}
	ctaid, tid, wa, wb, i, n, p, q, v := f.NewReg(U32), f.NewReg(U32), f.NewReg(U32), f.NewReg(U32), f.NewReg(S64), f.NewReg(S64), f.NewReg(Pred), f.NewReg(Pred), f.NewReg(F32)
	w, u, c = f.NewReg(U32), f.NewReg(U32), f.NewReg(U32)
	entry, head, body, after, store, fail := f.NewBlock("entry"), f.NewBlock("head"), f.NewBlock("body"), f.NewBlock("after"), f.NewBlock("store"), f.NewBlock("fail")
	b := &Builder{F: f, B: entry}
	b.Mov(U32, ctaid, Special("%ctaid.x"))
	b.Arith(OpMul, U32, wa, R(ctaid), Imm(U32, 8))
	b.Mov(U32, tid, Special("%tid.x"))
	b.Shift(OpShr, U32, wb, R(tid), Imm(U32, 5))
	b.Arith(OpAdd, U32, w, R(wa), R(wb))
	b.Mov(U32, u, Special("%tid.y"))
	b.Mov(U32, c, Special("%clock"))
	b.Mov(S64, n, Imm(S64, 8))
	b.Mov(S64, i, Imm(S64, 0))
	b.Bra(head)
	b.B = head
	b.Setp(LT, S64, p, R(i), R(n))
	b.BraIf(p, false, body)
	b.Bra(after)
	b.B = body
	b.Ld(Global, false, F32, R(v), Addr(u, 0))
	b.Arith(OpAdd, S64, i, R(i), Imm(S64, 1))
	b.Bra(head)
	b.B = after
	b.Setp(LT, U32, q, R(w), R(u))
	b.St(Global, U32, Addr(c, 0), R(c))
	b.BraIf(q, false, fail)
	b.Bra(store)
	b.B = store
	b.St(Global, U32, Addr(w, 0), R(w))
	if inner {
		head2, body2, done := f.NewBlock("head2"), f.NewBlock("body2"), f.NewBlock("done")
		b.Bra(head2)
		b.B = head2
		b.Setp(LT, S64, p, R(i), R(n))
		b.BraIf(p, false, body2)
		b.Bra(done)
		b.B = body2
		b.St(Global, U32, Addr(w, 4), R(w))
		b.Arith(OpAdd, S64, i, R(i), Imm(S64, 1))
		b.Bra(head2)
		b.B = done
	}
	b.Exit()
	b.B = fail
	b.St(Global, U32, Addr(w, 8), R(w))
	b.Exit()
	return f, w, u, c
}

func TestRematerializeAfterLoops(t *testing.T) {
	f, w, u, c := rematFunc(false)
	before := len(f.Regs)
	rematerializeAfterLoops(f)
	if err := Check(f); err != nil {
		t.Fatal(err)
	}
	got := listing(f)
	blk := map[string]*Block{}
	for _, b := range f.Blocks {
		blk[b.Label[strings.Index(b.Label, "_")+1:]] = b
	}
	reads := func(b *Block, r Reg) bool { return mentions(b.Instrs, r) }
	// w is recomputed once, in "after" (five instructions: two reads of
	// special registers, the multiply, the shift, the add), and the blocks
	// it dominates read the copy.
	if n := len(f.Regs) - before; n != 5 {
		t.Errorf("%d new registers, want 5 (w's chain once):\n%s", n, got)
	}
	for _, name := range []string{"after", "store", "fail"} {
		if reads(blk[name], w) {
			t.Errorf("%s still reads w (r%d):\n%s", name, w, got)
		}
	}
	if !strings.Contains(got, "after:\n\tmov.u32 r") || strings.Count(got, "%ctaid.x") != 2 || strings.Count(got, "%tid.x") != 2 {
		t.Errorf("w's chain is not recomputed once at the top of after:\n%s", got)
	}
	// u is read in the loop and c is not a thread-identity value: both
	// stay as they are.
	if !reads(blk["after"], u) || !reads(blk["after"], c) || strings.Count(got, "%tid.y") != 1 || strings.Count(got, "%clock") != 1 {
		t.Errorf("u or c was recomputed:\n%s", got)
	}
	// The entry's chain stays (the dce pass removes it when, as here,
	// nothing before the loop reads w).
	if !reads(blk["entry"], w) {
		t.Errorf("entry lost w's definition:\n%s", got)
	}
}

// A read of w inside a later loop keeps w live through the first loop
// anyway, so nothing is recomputed.
func TestRematerializeSkipsReadsInLoops(t *testing.T) {
	f, _, _, _ := rematFunc(true)
	before := listing(f)
	rematerializeAfterLoops(f)
	if got := listing(f); got != before {
		t.Errorf("changed:\n%s\nwant unchanged:\n%s", got, before)
	}
}

// A chain whose own instructions were renamed by an earlier recomputation:
// w = tid.x>>5 passes through loop 1 and is read after it by v = w·32,
// which passes through loop 2 and is read after that. Recomputing v must
// clone its chain from the original operands (the in-place renaming of
// "mul v, w, 32" to read w's copy once cloned a read of a register
// defined nowhere in the chain), so every register a recomputed
// instruction reads is one the recomputation defined before it.
func TestRematerializeChainsThroughTwoLoops(t *testing.T) {
	f := &Func{Name: "k"}
	tid, w, v, i, n, p := f.NewReg(U32), f.NewReg(U32), f.NewReg(U32), f.NewReg(S64), f.NewReg(S64), f.NewReg(Pred)
	entry := f.NewBlock("entry")
	b := &Builder{F: f, B: entry}
	b.Mov(U32, tid, Special("%tid.x"))
	b.Shift(OpShr, U32, w, R(tid), Imm(U32, 5))
	b.Mov(S64, n, Imm(S64, 8))
	loop := func(name string) {
		head, body, after := f.NewBlock(name+"head"), f.NewBlock(name+"body"), f.NewBlock(name+"after")
		b.Mov(S64, i, Imm(S64, 0))
		b.Bra(head)
		b.B = head
		b.Setp(LT, S64, p, R(i), R(n))
		b.BraIf(p, false, body)
		b.Bra(after)
		b.B = body
		b.Arith(OpAdd, S64, i, R(i), Imm(S64, 1))
		b.Bra(head)
		b.B = after
	}
	loop("one")
	b.Arith(OpMul, U32, v, R(w), Imm(U32, 32))
	loop("two")
	b.St(Global, U32, Addr(v, 0), R(v))
	b.Exit()
	before := Reg(len(f.Regs))
	rematerializeAfterLoops(f)
	if err := Check(f); err != nil {
		t.Fatal(err)
	}
	got := listing(f)
	last := f.Blocks[len(f.Blocks)-1]
	if mentions(last.Instrs, v) || !strings.Contains(got, "twoafter:\n\tmov.u32 r") {
		t.Fatalf("v is not recomputed after loop two:\n%s", got)
	}
	defined := map[Reg]bool{}
	for _, in := range last.Instrs {
		if r, ok := soleDest(in); ok && r >= before {
			forUses(in, func(u Reg) {
				if !defined[u] {
					t.Errorf("recomputed %s reads r%d, which the recomputation has not defined:\n%s", in.Text, u, got)
				}
			})
			defined[r] = true
		}
	}
	if len(defined) != 3 {
		t.Errorf("%d instructions recomputed after loop two, want 3 (mov, shr, mul):\n%s", len(defined), got)
	}
}
