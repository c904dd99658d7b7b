package emu

// The decoded instruction form: what the interpreter executes.

// execFn executes one instruction for the lanes in m (guard already
// applied). It returns a *laneError for faults.
type execFn func(w *warp, in *inst, m uint32) error

// ctlKind says how an instruction moves the lanes' PCs. ctlNone
// instructions advance every lane of the step by one; the others are
// handled by the warp scheduler (warp.go).
type ctlKind uint8

const (
	ctlNone  ctlKind = iota
	ctlBra           // branch to inst.target
	ctlExit          // exit, or ret from the entry
	ctlTrap          // trap, brkpt
	ctlBar           // bar.sync / barrier.sync / bar.arrive / bar.red
	ctlWarp          // a .sync warp collective: all member lanes execute it together
	ctlAsync         // cp.async.wait_group / wait_all (runs fn, then advances)
	ctlCall          // a call on the call stack (call.go); aux indexes kernel.sites
	ctlRet           // ret from an out-of-line function (call.go)
)

// okind is an operand's kind.
type okind uint8

const (
	oNone  okind = iota
	oReg         // register: r is slot*32
	oImm         // immediate bits in imm
	oGsym        // address of module global #sym (+imm)
	oClock       // %clock / %clock64
)

// opnd is a resolved operand. For address operands kind says how the base
// is formed (register, absolute immediate, module global) and imm holds
// the byte offset.
type opnd struct {
	kind okind
	neg  bool  // !%p
	r    int32 // register slot * 32
	r2   int32 // second register of d|p, or -1
	sym  int32
	imm  uint64
	vec  []int32 // register slots*32 of a {a, b, ...} operand
	vimm []uint64
}

// inst is one decoded instruction.
type inst struct {
	fn    execFn
	ctl   ctlKind
	guard int32 // predicate register slot*32, -1 when unguarded
	gneg  bool
	t, t2 dtype // instruction type(s): t is the destination/operation type, t2 a source type
	rnd   rmode
	flags iflag
	space space
	vec   uint8  // vector width of ld/st (1, 2, 4)
	aux   uint32 // per-family: compare op, atomic op, shfl mode, ...
	aux2  uint32
	ops   [5]opnd
	nops  uint8
	pc    int32 // this instruction's index
	// target is the branch target PC.
	target int32
	line   int32  // PTX source line
	loc    locRef // the last .loc before this instruction
	text   string // the opcode as written, for messages
}

// iflag holds boolean modifiers.
type iflag uint16

const (
	fFtz iflag = 1 << iota
	fSat
	fApprox
	fFull
	fNaN
	fHi
	fWide
	fTrans
	fSatFinite
	fRndGiven // an explicit rounding modifier was present
	fUni
)

// space is a PTX state space (PTX ISA §5.1).
type space uint8

const (
	spGeneric space = iota
	spGlobal
	spShared
	spLocal
	spParam
	spConst
)

var spaceNames = [...]string{"generic", "global", "shared", "local", "param", "const"}

func (s space) String() string { return spaceNames[s] }
