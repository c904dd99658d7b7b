package ir

import (
	"fmt"
	"go/token"
)

// Builder appends instructions to a block of a Func. Its methods are the
// only place PTX mnemonics are spelled (with ops.go's base names), so one
// grep finds every form the compiler can emit.
type Builder struct {
	F   *Func
	B   *Block
	Pos token.Pos // attached to each new instruction
}

// Emit appends an instruction with a prebuilt mnemonic.
func (b *Builder) Emit(op Op, text string, args ...Operand) *Instr {
	in := &Instr{Op: op, Text: text, Args: args, Pos: b.Pos}
	b.B.Instrs = append(b.B.Instrs, in)
	return in
}

// Terminated reports whether the current block already ends in a
// terminator.
func (b *Builder) Terminated() bool {
	n := len(b.B.Instrs)
	return n > 0 && Ops[b.B.Instrs[n-1].Op].Term && !b.B.Instrs[n-1].Guarded
}

// New allocates a register of type t.
func (b *Builder) New(t Type) Reg { return b.F.NewReg(t) }

func sfx(parts ...string) string {
	s := ""
	for _, p := range parts {
		if p != "" {
			s += "." + p
		}
	}
	return s
}

// Mov copies src into dst (mov.t).
func (b *Builder) Mov(t Type, dst Reg, src Operand) {
	b.Emit(OpMov, "mov"+sfx(movType(t).String()), R(dst), src)
}

func movType(t Type) Type {
	switch t {
	case B8, U8, S8:
		return B32
	case BF16:
		return B16
	}
	return t
}

// Arith emits add/sub/mul/min/max/and/or/xor/rem/div on type t. Float
// add, sub, mul and div round to nearest even with an explicit .rn: an
// explicit rounding mode forbids ptxas from contracting mul+add into fma
// (PTX ISA §9.7.3.1), which keeps results bit-identical to Go's.
func (b *Builder) Arith(op Op, t Type, dst Reg, x, y Operand) {
	mods := ""
	switch {
	case op == OpAnd || op == OpOr || op == OpXor:
		t = t.Bitwise()
		if t == B8 {
			t = B32
		}
	case t.IsFloat() && (op == OpAdd || op == OpSub || op == OpMul || op == OpDiv):
		mods = "rn"
	case op == OpMul:
		mods = "lo"
	}
	b.Emit(op, Ops[op].Name+sfx(mods, arithType(t).String()), R(dst), x, y)
}

// arithType maps sub-word integer types to the 32-bit type their
// registers have; callers renormalise the result.
func arithType(t Type) Type {
	switch t {
	case U8:
		return U32
	case B8:
		return B32
	case S8:
		return S32
	}
	return t
}

// MulWide emits mul.wide.t: the full product of two t operands (s32 or
// u32) in a register of twice the width (PTX ISA §9.7.1.6).
func (b *Builder) MulWide(t Type, dst Reg, x, y Operand) {
	b.Emit(OpMul, "mul.wide"+sfx(t.String()), R(dst), x, y)
}

// MulHi emits mul.hi (the high half of the full product).
func (b *Builder) MulHi(t Type, dst Reg, x, y Operand) {
	b.Emit(OpMul, "mul.hi"+sfx(t.String()), R(dst), x, y)
}

// Fma emits fma.rn: x*y+z rounded once.
func (b *Builder) Fma(t Type, dst Reg, x, y, z Operand) {
	b.Emit(OpFma, "fma.rn"+sfx(t.String()), R(dst), x, y, z)
}

// Packed2 emits op.rn.t on packed 16-bit floats: op is add, sub, mul or
// fma, t is f16x2 or bf16x2 (PTX ISA §9.7.4); every operand a .b32
// register.
func (b *Builder) Packed2(op, t string, dst Reg, args ...Operand) {
	o := map[string]Op{"add": OpAdd, "sub": OpSub, "mul": OpMul, "fma": OpFma}[op]
	b.Emit(o, op+".rn."+t, append([]Operand{R(dst)}, args...)...)
}

// Prmt emits prmt.b32 d, a, b, sel: the byte permute (PTX ISA §9.7.8.7).
func (b *Builder) Prmt(dst Reg, a, bb, sel Operand) {
	b.Emit(OpPrmt, "prmt.b32", R(dst), a, bb, sel)
}

// Dp4a emits dp4a.s32.s32 d, a, b, c: c plus the dot product of the
// signed bytes of a and b (PTX ISA §9.7.1.23).
func (b *Builder) Dp4a(dst Reg, a, bb, c Operand) {
	b.Emit(OpDp4a, "dp4a.s32.s32", R(dst), a, bb, c)
}

// Unary emits neg/abs/not/popc/clz/brev.
func (b *Builder) Unary(op Op, t Type, dst Reg, x Operand) {
	switch op {
	case OpNot, OpPopc, OpClz, OpBrev:
		t = t.Bitwise()
		if t == B8 {
			t = B32 // sub-word values live in 32-bit registers
		}
	}
	b.Emit(op, Ops[op].Name+sfx(arithType(t).String()), R(dst), x)
}

// Shift emits shl or shr. shr on a signed type is arithmetic. The shift
// amount is a .u32 operand; amounts of the register width or more are
// clamped by the hardware to the width (PTX ISA §9.7.8.8), which gives
// Go's results for over-wide shifts.
func (b *Builder) Shift(op Op, t Type, dst Reg, x, amount Operand) {
	tt := t
	if op == OpShl {
		tt = t.Bitwise()
	} else if !t.IsSigned() {
		tt = t.Unsigned()
	}
	b.Emit(op, Ops[op].Name+sfx(arithType(tt).String()), R(dst), x, amount)
}

// Cmp is a comparison operator of setp (PTX ISA §9.7.3.? Table "Floating
// point comparison operators").
type Cmp string

const (
	EQ  Cmp = "eq"
	NE  Cmp = "ne"
	LT  Cmp = "lt"
	LE  Cmp = "le"
	GT  Cmp = "gt"
	GE  Cmp = "ge"
	NEU Cmp = "neu" // not equal or unordered: Go's != on floats
	LO  Cmp = "lo"  // unsigned <
	HS  Cmp = "hs"  // unsigned >=
)

// Setp sets predicate dst to x cmp y.
func (b *Builder) Setp(c Cmp, t Type, dst Reg, x, y Operand) {
	if t == Pred {
		// Compare predicates through xor: p != q is p xor q.
		t = Pred
	}
	b.Emit(OpSetp, "setp"+sfx(string(c), arithType(t).String()), R(dst), x, y)
}

// Selp sets dst to x if p else y.
func (b *Builder) Selp(t Type, dst Reg, x, y Operand, p Reg) {
	b.Emit(OpSelp, "selp"+sfx(movType(t).String()), R(dst), x, y, R(p))
}

// Cvt converts x of type from into dst of type to; rnd is "" or a
// rounding modifier (rn, rz, rni, rzi, rmi, rpi).
func (b *Builder) Cvt(to, from Type, rnd string, dst Reg, x Operand) {
	b.Emit(OpCvt, "cvt"+sfx(rnd, to.String(), from.String()), R(dst), x)
}

// Cvta converts a shared/global/local address to a generic one, or with
// toSpace a generic address to that space.
func (b *Builder) Cvta(s Space, toSpace bool, dst Reg, x Operand) {
	if toSpace {
		b.Emit(OpCvta, "cvta.to"+s.Suffix()+".u64", R(dst), x)
		return
	}
	b.Emit(OpCvta, "cvta"+s.Suffix()+".u64", R(dst), x)
}

// Ld loads dst (a register or vector operand) from addr in space s; nc
// uses the read-only non-coherent path (ld.global.nc).
func (b *Builder) Ld(s Space, nc bool, t Type, dst, addr Operand) {
	v := ""
	if dst.Kind == KVec {
		v = fmt.Sprintf("v%d", len(dst.Vec))
	}
	n := ""
	if nc {
		n = "nc"
	}
	b.Emit(OpLd, "ld"+s.Suffix()+sfx(n, v, memType(t).String()), dst, addr)
}

// St stores src (register, immediate or vector) to addr in space s.
func (b *Builder) St(s Space, t Type, addr, src Operand) {
	v := ""
	if src.Kind == KVec {
		v = fmt.Sprintf("v%d", len(src.Vec))
	}
	b.Emit(OpSt, "st"+s.Suffix()+sfx(v, memType(t).String()), addr, src)
}

// Prefetch emits prefetch.space.level [addr] (PTX ISA §9.7.9.15): a hint
// that the line holding addr be brought into the cache level ("L1",
// "L2"). It writes no register and never faults on a valid address.
func (b *Builder) Prefetch(s Space, level string, addr Operand) *Instr {
	return b.Emit(OpPrefetch, "prefetch"+s.Suffix()+sfx(level), addr)
}

// BulkPrefetchL2 emits cp.async.bulk.prefetch.L2.global [addr], size
// (PTX ISA §9.7.9.25.4, "cp.async.bulk.prefetch"; PTX 8.0, sm_90): addr
// 16-byte aligned, size a u32 multiple of 16.
func (b *Builder) BulkPrefetchL2(addr, size Operand) *Instr {
	return b.Emit(OpCpAsync, "cp.async.bulk.prefetch.L2.global", addr, size)
}

func memType(t Type) Type {
	switch t {
	case Pred:
		return U8
	case BF16:
		return B16
	}
	return t
}

// Atom emits atom.space.op.t dst, [addr], args... (PTX ISA §9.7.13.5).
func (b *Builder) Atom(s Space, op string, t Type, dst Reg, addr Operand, args ...Operand) {
	b.Emit(OpAtom, "atom"+s.Suffix()+sfx(op, t.String()), append([]Operand{R(dst), addr}, args...)...)
}

// Math emits a floating-point unit op: sqrt.rn, rsqrt.approx, ex2.approx,
// lg2.approx, sin.approx, cos.approx, tanh.approx, rcp.rn, abs, neg.
func (b *Builder) Math(op Op, mods string, t Type, dst Reg, x Operand) {
	b.Emit(op, Ops[op].Name+sfx(mods, t.String()), R(dst), x)
}

// Bra jumps to target.
func (b *Builder) Bra(target *Block) { b.Emit(OpBra, "bra.uni", Label(target)) }

// BraIf jumps to target when p (or !p with neg) holds; control otherwise
// continues with the next instruction.
func (b *Builder) BraIf(p Reg, neg bool, target *Block) {
	in := b.Emit(OpBra, "bra", Label(target))
	in.Guarded, in.Guard, in.GuardNeg = true, p, neg
}

// Exit ends the thread.
func (b *Builder) Exit() { b.Emit(OpExit, "exit") }

// Ret returns from the kernel.
func (b *Builder) Ret() { b.Emit(OpRet, "ret") }
