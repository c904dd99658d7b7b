package ir

import "testing"

// splitRegs are the registers of splitFunc.
type splitRegs struct {
	p, addr Reg
	w, t    [2]Reg // the loaded words and w>>16
	h, x    [4]Reg // the halves lo(w0), hi(w0), lo(w1), hi(w1), and an array's copies of them
	d       Reg    // the packed word
}

// splitFunc builds what gpu.Load8 and PackBFloat162 lower to, shortened to
// two words: a vector load, each word split into halves, the halves copied
// into an array's registers (zeroed first, as a Go array is), then edit's
// code, then "mov.b32 d, {lo, hi}" of the two registers edit returns and a
// store of d. It returns the function and the pack.
func splitFunc(edit func(b *Builder, r *splitRegs) (lo, hi Reg)) (*Func, *Instr) {
	f := &Func{Name: "k"}
	r := &splitRegs{p: f.NewReg(Pred), addr: f.NewReg(U64)}
	for i := range r.w {
		r.w[i], r.t[i] = f.NewReg(U32), f.NewReg(U32)
	}
	for i := range r.h {
		r.h[i], r.x[i] = f.NewReg(U16), f.NewReg(U16)
	}
	r.d = f.NewReg(U32)
	b := &Builder{F: f, B: f.NewBlock("entry")}
	b.Ld(Global, true, U32, Vec(r.w[:]...), Addr(r.addr, 0))
	for i, w := range r.w {
		b.Cvt(U16, U32, "", r.h[2*i], R(w))
		b.Shift(OpShr, B32, r.t[i], R(w), Imm(U32, 16))
		b.Cvt(U16, U32, "", r.h[2*i+1], R(r.t[i]))
	}
	for _, x := range r.x {
		b.Mov(U16, x, Imm(U16, 0))
	}
	for i, x := range r.x {
		b.Mov(U16, x, R(r.h[i]))
	}
	lo, hi := edit(b, r)
	pack := b.Emit(OpMov, "mov.b32", R(r.d), Vec(lo, hi))
	b.St(Global, U32, Addr(r.addr, 0), R(r.d))
	b.Exit()
	return f, pack
}

// TestRepackSplitWords: both words packed back in order become copies of
// the loaded words, and dce then removes the split and the array.
func TestRepackSplitWords(t *testing.T) {
	f, _ := splitFunc(func(b *Builder, r *splitRegs) (Reg, Reg) {
		d := b.New(U32)
		b.Emit(OpMov, "mov.b32", R(d), Vec(r.x[2], r.x[3]))
		b.St(Global, U32, Addr(r.addr, 4), R(d))
		return r.x[0], r.x[1]
	})
	repackSplitWords(f)
	removeDeadCode(f)
	if err := Check(f); err != nil {
		t.Fatal(err)
	}
	got := listing(f)
	// r2 and r4 are the words, r15 and r14 the packs.
	want := `$L0_entry:
	ld.global.nc.v2.u32 {r2,r4} [r1]
	mov.b32 r15 r4
	st.global.u32 [r1] r15
	mov.b32 r14 r2
	st.global.u32 [r1] r14
	exit
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestRepackSigned: the signed spellings of the split (an int32 word, an
// arithmetic shift, int16 halves) give the word too, and a pack of the
// halves themselves, not copies, as well.
func TestRepackSigned(t *testing.T) {
	f := &Func{Name: "k"}
	addr, w, sh, a, c, d := f.NewReg(U64), f.NewReg(S32), f.NewReg(S32), f.NewReg(S16), f.NewReg(S16), f.NewReg(B32)
	b := &Builder{F: f, B: f.NewBlock("entry")}
	b.Ld(Global, false, S32, R(w), Addr(addr, 0))
	b.Cvt(S16, S32, "", a, R(w))
	b.Shift(OpShr, S32, sh, R(w), Imm(U32, 16))
	b.Cvt(S16, S32, "", c, R(sh))
	pack := b.Emit(OpMov, "mov.b32", R(d), Vec(a, c))
	b.St(Global, B32, Addr(addr, 0), R(d))
	b.Exit()
	repackSplitWords(f)
	if a := pack.Args[1]; a.Kind != KReg || a.Reg != w {
		t.Errorf("the pack reads %s, want r%d:\n%s", listing(f), w, listing(f))
	}
}

// TestRepackKeeps: packs that are not the word they seem to be stay packs.
func TestRepackKeeps(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(b *Builder, r *splitRegs) (Reg, Reg)
	}{
		{"swapped halves", func(b *Builder, r *splitRegs) (Reg, Reg) { return r.x[1], r.x[0] }},
		{"different words", func(b *Builder, r *splitRegs) (Reg, Reg) { return r.x[0], r.x[3] }},
		{"the same half twice", func(b *Builder, r *splitRegs) (Reg, Reg) { return r.x[0], r.x[0] }},
		{"word written after the split", func(b *Builder, r *splitRegs) (Reg, Reg) {
			b.Arith(OpAdd, U32, r.w[0], R(r.w[0]), Imm(U32, 1))
			return r.x[0], r.x[1]
		}},
		{"word written by a predicated instruction", func(b *Builder, r *splitRegs) (Reg, Reg) {
			b.Setp(LT, U32, r.p, R(r.w[1]), Imm(U32, 3))
			b.Arith(OpAdd, U32, r.w[0], R(r.w[0]), Imm(U32, 1))
			last := b.B.Instrs[len(b.B.Instrs)-1]
			last.Guarded, last.Guard = true, r.p
			return r.x[0], r.x[1]
		}},
		{"word written by an op of unmodelled operands", func(b *Builder, r *splitRegs) (Reg, Reg) {
			b.Emit(OpAtom, "atom.global.add.u32", R(r.w[0]), Addr(r.addr, 0), R(r.w[1]))
			return r.x[0], r.x[1]
		}},
		{"copy overwritten", func(b *Builder, r *splitRegs) (Reg, Reg) {
			b.Mov(U16, r.x[1], Imm(U16, 7))
			return r.x[0], r.x[1]
		}},
		{"copy made by a predicated mov", func(b *Builder, r *splitRegs) (Reg, Reg) {
			b.Setp(LT, U32, r.p, R(r.w[1]), Imm(U32, 3))
			b.Mov(U16, r.x[3], R(r.h[1]))
			last := b.B.Instrs[len(b.B.Instrs)-1]
			last.Guarded, last.Guard = true, r.p
			return r.x[0], r.x[3]
		}},
		{"word rewritten between its shift and the high half", func(b *Builder, r *splitRegs) (Reg, Reg) {
			// lo(w0); w0 = w0+1; hi of the new w0: not the new w0.
			b.Arith(OpAdd, U32, r.w[0], R(r.w[0]), Imm(U32, 1))
			b.Shift(OpShr, B32, r.t[0], R(r.w[0]), Imm(U32, 16))
			b.Cvt(U16, U32, "", r.h[1], R(r.t[0]))
			return r.x[0], r.h[1]
		}},
		{"word rewritten between the shift and its cvt", func(b *Builder, r *splitRegs) (Reg, Reg) {
			// t = w0>>16; w0 = w0+1; lo(new w0), hi(old w0).
			b.Shift(OpShr, B32, r.t[0], R(r.w[0]), Imm(U32, 16))
			b.Arith(OpAdd, U32, r.w[0], R(r.w[0]), Imm(U32, 1))
			b.Cvt(U16, U32, "", r.h[0], R(r.w[0]))
			b.Cvt(U16, U32, "", r.h[1], R(r.t[0]))
			return r.h[0], r.h[1]
		}},
		{"shift result overwritten before its cvt", func(b *Builder, r *splitRegs) (Reg, Reg) {
			b.Shift(OpShr, B32, r.t[0], R(r.w[0]), Imm(U32, 16))
			b.Arith(OpAnd, B32, r.t[0], R(r.t[0]), Imm(U32, 0xff))
			b.Cvt(U16, U32, "", r.h[1], R(r.t[0]))
			return r.x[0], r.h[1]
		}},
		{"shifted in place", func(b *Builder, r *splitRegs) (Reg, Reg) {
			// lo(w0); w0 >>= 16; lo(w0) is now hi(old w0), not the word.
			b.Shift(OpShr, B32, r.w[0], R(r.w[0]), Imm(U32, 16))
			b.Cvt(U16, U32, "", r.h[1], R(r.w[0]))
			return r.x[0], r.h[1]
		}},
		{"shift by 8", func(b *Builder, r *splitRegs) (Reg, Reg) {
			b.Shift(OpShr, B32, r.t[0], R(r.w[0]), Imm(U32, 8))
			b.Cvt(U16, U32, "", r.h[1], R(r.t[0]))
			return r.x[0], r.h[1]
		}},
		{"saturating cvt", func(b *Builder, r *splitRegs) (Reg, Reg) {
			b.Cvt(U16, U32, "sat", r.h[0], R(r.w[0]))
			return r.h[0], r.x[1]
		}},
		{"pack in another block", func(b *Builder, r *splitRegs) (Reg, Reg) {
			next := b.F.NewBlock("next")
			b.Bra(next)
			b.B = next
			return r.x[0], r.x[1]
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, pack := splitFunc(tc.edit)
			want := pack.Args[1]
			repackSplitWords(f)
			if err := Check(f); err != nil {
				t.Fatal(err)
			}
			if got := pack.Args[1]; got.Kind != KVec || got.Vec[0] != want.Vec[0] || got.Vec[1] != want.Vec[1] {
				t.Errorf("the pack was rewritten:\n%s", listing(f))
			}
		})
	}
}
