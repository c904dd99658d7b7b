// Package ir is kern's kernel IR: a register machine one step above PTX.
//
// The compiler lowers go/ssa into ir.Func, runs the passes in compile.go
// over it, and package ptx prints it. The IR is deliberately close to PTX:
//
//   - Registers are typed virtual registers (PTX .reg), unlimited in number
//     and, unlike SSA values, may be assigned more than once. go/ssa phis
//     become moves on the incoming edges, and registers that stand for Go
//     local array elements are plain mutable registers. ptxas allocates
//     physical registers and does the global optimisation, so the IR needs
//     no SSA invariants of its own.
//   - Each instruction is one PTX instruction. Its mnemonic is built by the
//     constructors in build.go from the op table in ops.go, so every PTX
//     spelling lives in one place, and Check can verify operand counts.
//   - Blocks end in exactly one terminator (bra, conditional bra, ret, exit)
//     and never fall through.
package ir

import (
	"fmt"
	"go/token"
)

// Type is a PTX fundamental type (PTX ISA §5.2.1).
type Type uint8

const (
	Invalid Type = iota
	Pred
	B8
	B16
	B32
	B64
	U8
	U16
	U32
	U64
	S8
	S16
	S32
	S64
	F16
	BF16
	F32
	F64
)

var typeNames = [...]string{
	Invalid: "invalid", Pred: "pred",
	B8: "b8", B16: "b16", B32: "b32", B64: "b64",
	U8: "u8", U16: "u16", U32: "u32", U64: "u64",
	S8: "s8", S16: "s16", S32: "s32", S64: "s64",
	F16: "f16", BF16: "bf16", F32: "f32", F64: "f64",
}

// String is the type's PTX spelling without the dot.
func (t Type) String() string { return typeNames[t] }

// Bits is the type's width.
func (t Type) Bits() int {
	switch t {
	case Pred:
		return 1
	case B8, U8, S8:
		return 8
	case B16, U16, S16, F16, BF16:
		return 16
	case B32, U32, S32, F32:
		return 32
	case B64, U64, S64, F64:
		return 64
	}
	return 0
}

// Bytes is the type's size in memory.
func (t Type) Bytes() int { return (t.Bits() + 7) / 8 }

// IsFloat reports whether t is a floating-point type.
func (t Type) IsFloat() bool { return t == F16 || t == BF16 || t == F32 || t == F64 }

// IsSigned reports whether t is a signed integer type.
func (t Type) IsSigned() bool { return t == S8 || t == S16 || t == S32 || t == S64 }

// Signed returns the signed integer type of t's width.
func (t Type) Signed() Type {
	switch t.Bits() {
	case 8:
		return S8
	case 16:
		return S16
	case 32:
		return S32
	}
	return S64
}

// Unsigned returns the unsigned integer type of t's width.
func (t Type) Unsigned() Type {
	switch t.Bits() {
	case 8:
		return U8
	case 16:
		return U16
	case 32:
		return U32
	}
	return U64
}

// Bitwise returns the untyped bit type of t's width.
func (t Type) Bitwise() Type {
	switch t.Bits() {
	case 1:
		return Pred
	case 8:
		return B8
	case 16:
		return B16
	case 32:
		return B32
	}
	return B64
}

// RegType is the type a register holding a t is declared with. PTX has no
// 8-bit registers, so sub-word integers live in 32-bit registers; ld/st of
// .u8/.s8 widen and narrow them (PTX ISA §9.7.9.8).
func (t Type) RegType() Type {
	switch t {
	case B8, U8:
		return U32
	case S8:
		return S32
	}
	return t
}

// Space is a PTX state space (PTX ISA §5.1).
type Space uint8

const (
	Generic Space = iota
	Global
	Shared
	Local
	ParamSpace
	Const
)

var spaceNames = [...]string{Generic: "", Global: "global", Shared: "shared", Local: "local", ParamSpace: "param", Const: "const"}

func (s Space) String() string {
	if s == Generic {
		return "generic"
	}
	return spaceNames[s]
}

// Suffix is the space as an instruction modifier: ".global", or "" for
// generic addressing.
func (s Space) Suffix() string {
	if s == Generic {
		return ""
	}
	return "." + spaceNames[s]
}

// Reg is a virtual register: an index into Func.Regs.
type Reg int32

// OperandKind says what an Operand holds.
type OperandKind uint8

const (
	KReg     OperandKind = iota + 1
	KImm                 // integer or float bits in Imm, typed by Type
	KSym                 // a symbol's address (shared array, global), plus Off
	KSpecial             // a special register such as %tid.x, in Sym
	KVec                 // a vector {a, b, ...} of registers, in Vec
	KAddr                // a memory operand [base+Off]: base register in Reg, or symbol in Sym
	KLabel               // a block label, in Sym
)

// Operand is one instruction operand.
type Operand struct {
	Kind OperandKind
	Reg  Reg
	Type Type   // of an immediate
	Imm  uint64 // bits of an immediate
	Sym  string
	Off  int64
	Vec  []Reg
}

// R is a register operand.
func R(r Reg) Operand { return Operand{Kind: KReg, Reg: r} }

// Imm is an immediate of type t holding bits.
func Imm(t Type, bits uint64) Operand { return Operand{Kind: KImm, Type: t, Imm: bits} }

// Special is a special register operand such as "%tid.x".
func Special(name string) Operand { return Operand{Kind: KSpecial, Sym: name} }

// Vec is a vector operand {r0, r1, ...}.
func Vec(rs ...Reg) Operand { return Operand{Kind: KVec, Vec: rs} }

// Addr is the memory operand [r+off].
func Addr(r Reg, off int64) Operand { return Operand{Kind: KAddr, Reg: r, Off: off} }

// TensorAddr is the operand [r, {c0, c1, ...}] of cp.async.bulk.tensor: a
// tensor map's address and the tensor coordinates (PTX ISA §9.7.9.25.5).
func TensorAddr(r Reg, coords ...Reg) Operand {
	return Operand{Kind: KAddr, Reg: r, Vec: coords}
}

// SymAddr is the memory operand [sym+off].
func SymAddr(sym string, off int64) Operand { return Operand{Kind: KAddr, Reg: -1, Sym: sym, Off: off} }

// Sym is a symbol's address as a value (mov.u64 %rd, sym).
func Sym(sym string) Operand { return Operand{Kind: KSym, Sym: sym} }

// Label is a branch target.
func Label(b *Block) Operand { return Operand{Kind: KLabel, Sym: b.Label} }

// Instr is one PTX instruction.
type Instr struct {
	Op   Op
	Text string // the full mnemonic with modifiers, e.g. "ld.global.nc.f32"
	// Guard, when Kind is KReg, predicates the instruction (@%p or @!%p).
	Guard    Reg
	GuardNeg bool
	Guarded  bool
	Args     []Operand // destinations first, as PTX writes them
	Pos      token.Pos // Go source position, for .loc
}

// Block is a basic block. Its last instruction is its terminator.
type Block struct {
	Label  string
	Instrs []*Instr
	Index  int
}

// Var is a module- or kernel-level memory declaration (.shared array,
// .global, .local array).
type Var struct {
	Name   string
	Space  Space
	Align  int
	Size   int // bytes; 0 with Extern for dynamic shared memory
	Extern bool
	Init   []uint64 // .global initialiser of 8-byte words, if any
}

// Param is one .param of a kernel entry.
type Param struct {
	Name string
	Type Type
}

// Func is one kernel entry.
type Func struct {
	Name   string
	Params []Param
	Regs   []Type // the declared type of each virtual register
	Blocks []*Block
	Vars   []*Var
	// MaxNTid, when non-zero, is emitted as .maxntid (the directive's block
	// shape), letting ptxas budget registers for that block size.
	MaxNTid [3]int
	// MinNCTAPerSM, when non-zero, is emitted as .minnctapersm (the
	// directive's minblocks=).
	MinNCTAPerSM int
	// MaxNReg, when non-zero, is emitted as .maxnreg (the directive's
	// maxregs=).
	MaxNReg int
	// FastMath (//kern:kernel fastmath) lets the contract pass drop the
	// rounding modifiers that keep float results bit-identical to Go's.
	FastMath bool
}

// NewReg allocates a virtual register of type t (its RegType).
func (f *Func) NewReg(t Type) Reg {
	f.Regs = append(f.Regs, t.RegType())
	return Reg(len(f.Regs) - 1)
}

// NewBlock appends an empty block labelled with the given hint.
func (f *Func) NewBlock(hint string) *Block {
	b := &Block{Label: fmt.Sprintf("$L%d_%s", len(f.Blocks), hint), Index: len(f.Blocks)}
	f.Blocks = append(f.Blocks, b)
	return b
}

// Module is a set of kernels compiled together: one Go package.
type Module struct {
	Version string // PTX ISA version, e.g. "7.0"
	Target  string // e.g. "sm_80"
	Funcs   []*Func
	Vars    []*Var // module-scope globals (the bounds-check error slot)
	Files   []string
	// FileIndex maps a file name to its .file number.
	FileIndex map[string]int
}
