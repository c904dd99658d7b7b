package emu

// The syntax tree the parser builds and the decoder consumes. It is kept
// close to the text: names are unresolved strings, opcodes are the full
// dotted mnemonic.

type astModule struct {
	version  string
	target   []string
	files    map[int]string // .file index -> path
	vars     []*astVar      // module-scope variables
	funcs    []*astFunc
	addrSize int
}

// astVar is a variable declaration (PTX ISA §5.4).
type astVar struct {
	line   int
	space  string // "global", "shared", "local", "const"
	extern bool
	align  int // 0 when not given
	typ    dtype
	vec    int // 1, 2 or 4 (.v2/.v4)
	name   string
	count  int      // number of elements; -1 for an unsized extern array
	init   []uint64 // flattened initializer, nil if none
}

// size is the variable's size in bytes (0 for an unsized array).
func (v *astVar) size() int {
	if v.count < 0 {
		return 0
	}
	return v.count * v.vec * v.typ.size()
}

// alignment is the declared alignment or the natural one.
func (v *astVar) alignment() int {
	if v.align > 0 {
		return v.align
	}
	return v.vec * v.typ.size()
}

// astParam is a kernel or function parameter.
type astParam struct {
	line  int
	space string // "param" or "reg"
	typ   dtype
	align int
	name  string
	count int // elements; 1 unless an array
}

type astFunc struct {
	line    int
	name    string
	entry   bool
	proto   bool // a declaration without a body
	params  []astParam
	rets    []astParam
	maxntid [3]int
	reqntid [3]int
	regs    []astReg
	vars    []*astVar
	stmts   []astStmt
	errs    ErrorList // errors in the body
}

// astReg declares one register (n < 0) or the range name0..name(n-1).
type astReg struct {
	line int
	typ  dtype
	name string
	n    int
}

// locRef is a .loc position (PTX ISA §11.5.4); file 0 means none.
type locRef struct {
	file, line, col int
}

// astStmt is a label or an instruction.
type astStmt struct {
	line     int
	label    string // set for a label statement
	loc      locRef
	guard    string // predicate register, "" when unguarded
	guardNeg bool
	op       string // full opcode, e.g. "ld.global.v4.f32"
	args     []astArg
}

type argKind uint8

const (
	aName argKind = iota // register, special register, symbol or label
	aImm                 // integer constant
	aF32                 // 0fXXXXXXXX
	aF64                 // 0dXXXXXXXXXXXXXXXX or a decimal float
	aVec                 // {a, b, ...}
	aAddr                // [base], [base+off], [imm]
	aPair                // d|p
	aList                // (a, b) in call
)

type astArg struct {
	kind  argKind
	name  string // aName; aAddr base ("" for an absolute address)
	neg   bool   // !%p
	imm   uint64 // aImm, aF32, aF64 bits; aAddr offset
	elems []astArg
}
