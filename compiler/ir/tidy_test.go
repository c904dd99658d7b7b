package ir

import (
	"strings"
	"testing"
)

// listing prints f's instructions one per line as "text r0 r1 ...", enough
// to compare the passes' output with what is expected.
func listing(f *Func) string {
	var sb strings.Builder
	for _, b := range f.Blocks {
		sb.WriteString(b.Label + ":\n")
		for _, in := range b.Instrs {
			sb.WriteString("\t")
			if in.Guarded {
				sb.WriteString("@p ")
			}
			sb.WriteString(in.Text)
			for _, a := range in.Args {
				switch a.Kind {
				case KReg:
					sb.WriteString(" r" + itoa(int(a.Reg)))
				case KAddr:
					sb.WriteString(" [r" + itoa(int(a.Reg)) + "]")
				case KImm:
					sb.WriteString(" #" + itoa(int(a.Imm)))
				case KLabel:
					sb.WriteString(" " + a.Sym)
				case KSpecial:
					sb.WriteString(" " + a.Sym)
				case KVec:
					sb.WriteString(" {")
					for j, r := range a.Vec {
						if j > 0 {
							sb.WriteString(",")
						}
						sb.WriteString("r" + itoa(int(r)))
					}
					sb.WriteString("}")
				}
			}
			sb.WriteString("\n")
		}
	}
	return sb.String()
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// loopFunc builds a counting loop the way lowering does: i's phi register
// r0 gets a move on each incoming edge, and the loop step computes into a
// fresh register first. r5 and r6 are a dead chain (an unused thread-index
// component).
func loopFunc() *Func {
	f := &Func{Name: "k"}
	i, t0, t1, p, dead, dead2, n, v := f.NewReg(S64), f.NewReg(S64), f.NewReg(S64), f.NewReg(Pred), f.NewReg(U32), f.NewReg(S64), f.NewReg(S64), f.NewReg(F32)
	entry, loop, body, done := f.NewBlock("entry"), f.NewBlock("loop"), f.NewBlock("body"), f.NewBlock("done")
	b := &Builder{F: f, B: entry}
	b.Mov(U32, dead, Special("%tid.y"))
	b.Cvt(S64, U32, "", dead2, R(dead))
	b.Mov(S64, n, Imm(S64, 8))
	b.Arith(OpAdd, S64, t0, Imm(S64, 0), Imm(S64, 1))
	b.Mov(S64, i, R(t0))
	b.Bra(loop)
	b.B = loop
	b.Setp(LT, S64, p, R(i), R(n))
	b.BraIf(p, false, body)
	b.Bra(done)
	b.B = body
	b.Ld(Global, false, F32, R(v), Addr(i, 0))
	b.Arith(OpAdd, S64, t1, R(i), Imm(S64, 1))
	b.Mov(S64, i, R(t1))
	b.Bra(loop)
	b.B = done
	b.Exit()
	return f
}

func TestCoalesceAndDCE(t *testing.T) {
	f := loopFunc()
	coalesceCopies(f)
	removeDeadCode(f)
	if err := Check(f); err != nil {
		t.Fatal(err)
	}
	got := listing(f)
	want := `$L0_entry:
	mov.s64 r6 #8
	add.s64 r0 #0 #1
	bra.uni $L1_loop
$L1_loop:
	setp.lt.s64 r3 r0 r6
	@p bra $L2_body
	bra.uni $L3_done
$L2_body:
	ld.global.f32 r7 [r0]
	add.s64 r0 r0 #1
	bra.uni $L1_loop
$L3_done:
	exit
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestCoalesceKeeps checks the cases the pass must leave alone: the copy's
// source read again, the destination read between the two, a predicated
// definition, and registers of different types.
func TestCoalesceKeeps(t *testing.T) {
	f := &Func{Name: "k"}
	x, t1, t2, t3, p, y, w := f.NewReg(S64), f.NewReg(S64), f.NewReg(S64), f.NewReg(S64), f.NewReg(Pred), f.NewReg(U64), f.NewReg(S64)
	entry := f.NewBlock("entry")
	b := &Builder{F: f, B: entry}
	b.Mov(S64, x, Imm(S64, 3))
	b.Setp(LT, S64, p, R(x), Imm(S64, 2))
	// t1 is read twice.
	b.Arith(OpAdd, S64, t1, R(x), Imm(S64, 1))
	b.Mov(S64, x, R(t1))
	b.St(Global, S64, Addr(t1, 0), R(x))
	// x is read between t2's definition and the copy.
	b.Arith(OpAdd, S64, t2, R(x), Imm(S64, 1))
	b.St(Global, S64, Addr(x, 0), R(x))
	b.Mov(S64, x, R(t2))
	// t3 is defined under a predicate.
	b.Arith(OpAdd, S64, t3, R(x), Imm(S64, 1))
	b.B.Instrs[len(b.B.Instrs)-1].Guarded, b.B.Instrs[len(b.B.Instrs)-1].Guard = true, p
	b.Mov(S64, x, R(t3))
	// y is a u64, w an s64.
	b.Arith(OpAdd, S64, w, R(x), Imm(S64, 1))
	b.Mov(U64, y, R(w))
	b.St(Global, U64, Addr(y, 0), R(x))
	b.Exit()
	before := listing(f)
	coalesceCopies(f)
	removeDeadCode(f)
	if got := listing(f); got != before {
		t.Errorf("changed:\n%s\nwas\n%s", got, before)
	}
}

func TestCSE(t *testing.T) {
	f := &Func{Name: "k"}
	r := func(t Type) Reg { return f.NewReg(t) }
	tid, a, i, e1, ck1 := r(U32), r(S64), r(S64), r(S64), r(U32)
	tid2, b, tid3, b2, c, e2, ck2 := r(U32), r(S64), r(U32), r(S64), r(S64), r(S64), r(U32)
	entry, body := f.NewBlock("entry"), f.NewBlock("body")
	bd := &Builder{F: f, B: entry}
	bd.Mov(U32, tid, Special("%tid.x"))
	bd.Arith(OpMul, S64, a, R(tid), Imm(S64, 16))
	bd.Mov(S64, i, Imm(S64, 0))
	bd.Arith(OpAdd, S64, e1, R(i), Imm(S64, 1))
	bd.Mov(U32, ck1, Special("%clock"))
	bd.Bra(body)
	bd.B = body
	bd.Mov(U32, tid2, Special("%tid.x"))            // stays: tid is in another block
	bd.Arith(OpMul, S64, b, R(tid2), Imm(S64, 16))  // so does this
	bd.Mov(U32, tid3, Special("%tid.x"))            // the same as tid2
	bd.Arith(OpMul, S64, b2, R(tid3), Imm(S64, 16)) // then the same as b
	bd.Mov(S64, c, R(a))                            // a copy of a, which dominates it
	bd.Mov(S64, i, Imm(S64, 1))                     // i is defined twice
	bd.Arith(OpAdd, S64, e2, R(i), Imm(S64, 1))     // so this stays
	bd.Mov(U32, ck2, Special("%clock"))             // and so does this
	bd.Mov(U32, f.NewReg(U32), Special("%clock"))
	bd.St(Global, S64, Addr(c, 0), R(e2))
	bd.St(Global, S64, Addr(e1, 0), R(b2))
	bd.St(Global, U32, Addr(c, 0), R(ck2))
	bd.Exit()
	eliminateCommonSubexprs(f)
	if err := Check(f); err != nil {
		t.Fatal(err)
	}
	got := listing(f)
	want := `$L0_entry:
	mov.u32 r0 %tid.x
	mul.lo.s64 r1 r0 #16
	mov.s64 r2 #0
	add.s64 r3 r2 #1
	mov.u32 r4 %clock
	bra.uni $L1_body
$L1_body:
	mov.u32 r5 %tid.x
	mul.lo.s64 r6 r5 #16
	mov.s64 r2 #1
	add.s64 r10 r2 #1
	mov.u32 r11 %clock
	mov.u32 r12 %clock
	st.global.s64 [r1] r10
	st.global.s64 [r3] r6
	st.global.u32 [r1] r11
	exit
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestMergeBlocks: a chain entered only from the block before it becomes
// one block; a loop header, entered twice, stays its own.
func TestMergeBlocks(t *testing.T) {
	f := loopFunc()
	mergeBlocks(f)
	if err := Check(f); err != nil {
		t.Fatal(err)
	}
	// Only the exit block, entered once, joins the loop header.
	if len(f.Blocks) != 3 || f.Blocks[1].Instrs[2].Op != OpExit {
		t.Fatalf("loop: want entry, header+exit, body:\n%s", listing(f))
	}
	g := &Func{Name: "k"}
	r := g.NewReg(S64)
	a, b, c := g.NewBlock("a"), g.NewBlock("b"), g.NewBlock("c")
	bd := &Builder{F: g, B: a}
	bd.Mov(S64, r, Imm(S64, 1))
	bd.Bra(c)
	bd.B = c
	bd.Arith(OpAdd, S64, r, R(r), Imm(S64, 1))
	bd.Bra(b)
	bd.B = b
	bd.St(Global, S64, Addr(r, 0), R(r))
	bd.Exit()
	mergeBlocks(g)
	if err := Check(g); err != nil {
		t.Fatal(err)
	}
	want := `$L0_a:
	mov.s64 r0 #1
	add.s64 r0 r0 #1
	st.global.s64 [r0] r0
	exit
`
	if got := listing(g); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestMmaCopies: the accumulator copied into an mma's C fragment and the
// D fragment copied back become one mma reading and writing the
// accumulator, as a CUDA compiler writes it.
func TestMmaCopies(t *testing.T) {
	f := &Func{Name: "k"}
	acc := []Reg{f.NewReg(F32), f.NewReg(F32)}
	c := []Reg{f.NewReg(F32), f.NewReg(F32)}
	d := []Reg{f.NewReg(F32), f.NewReg(F32)}
	a, b := f.NewReg(B32), f.NewReg(B32)
	entry := f.NewBlock("entry")
	bd := &Builder{F: f, B: entry}
	bd.Mov(F32, acc[0], Imm(F32, 0))
	bd.Mov(F32, acc[1], Imm(F32, 0))
	bd.Mov(F32, c[0], R(acc[0]))
	bd.Mov(F32, c[1], R(acc[1]))
	bd.Emit(OpMma, "mma.sync.aligned.x", Vec(d...), R(a), R(b), Vec(c...))
	bd.Mov(F32, acc[0], R(d[0]))
	bd.Mov(F32, acc[1], R(d[1]))
	bd.St(Global, F32, Addr(a, 0), R(acc[0]))
	bd.Exit()
	coalesceVectorCopies(f)
	forwardCopies(f)
	if err := Check(f); err != nil {
		t.Fatal(err)
	}
	mma := f.Blocks[0].Instrs[2]
	if len(f.Blocks[0].Instrs) != 5 || mma.Op != OpMma {
		t.Fatalf("copies left:\n%s", listing(f))
	}
	for i, r := range acc {
		if mma.Args[0].Vec[i] != r || mma.Args[3].Vec[i] != r {
			t.Errorf("fragment %d: D %d, C %d, want both %d", i, mma.Args[0].Vec[i], mma.Args[3].Vec[i], r)
		}
	}
}
