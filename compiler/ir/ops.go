package ir

// Op is an IR opcode. Every opcode is one PTX instruction family; the
// table below gives its base mnemonic, how many operands it takes (-1: any
// number, for calls and collectives with vector operands), and whether it
// ends a block. Check reads it, the constructors in build.go read it, and
// the emulator decodes the same mnemonics from the printed PTX.
type Op uint8

const (
	OpInvalid Op = iota
	OpMov
	OpAdd
	OpSub
	OpMul
	OpMad
	OpFma
	OpDiv
	OpRem
	OpNeg
	OpAbs
	OpMin
	OpMax
	OpAnd
	OpOr
	OpXor
	OpNot
	OpShl
	OpShr
	OpPopc
	OpClz
	OpBrev
	OpPrmt
	OpSetp
	OpSelp
	OpCvt
	OpCvta
	OpLd
	OpSt
	OpAtom
	OpBar
	OpBarWarp
	OpMembar
	OpShfl
	OpVote
	OpSqrt
	OpRsqrt
	OpRcp
	OpEx2
	OpLg2
	OpSin
	OpCos
	OpTanh
	OpCopysign
	OpMma
	OpLdmatrix
	OpCpAsync
	OpCpAsyncCommit
	OpCpAsyncWait
	OpMbarrier
	OpFence
	OpGridDep // griddepcontrol, or its comment form below sm_90 (compiler/lower_pdl.go)
	OpBarRed  // bar.red.or.pred: a block barrier that ORs a predicate (compiler/lower_grid.go)
	OpNanosleep
	OpPrefetch
	OpPragma // .pragma "nounroll" at a loop header (compiler/nounroll.go)
	OpWgmma
	OpSetmaxnreg
	OpBra
	OpRet
	OpExit
	OpTrap
	OpDp4a
	numOps
)

// OpInfo describes an opcode.
type OpInfo struct {
	Name string // base PTX mnemonic
	Args int    // operand count, -1 when variable
	Term bool   // ends a block
	// Sync marks a collective that every thread of the block (Block) or
	// warp must reach together; the uniformity check cites these.
	Sync bool
}

// Ops is the op table.
var Ops = [numOps]OpInfo{
	OpMov:           {Name: "mov", Args: 2},
	OpAdd:           {Name: "add", Args: 3},
	OpSub:           {Name: "sub", Args: 3},
	OpMul:           {Name: "mul", Args: 3},
	OpMad:           {Name: "mad", Args: 4},
	OpFma:           {Name: "fma", Args: 4},
	OpDiv:           {Name: "div", Args: 3},
	OpRem:           {Name: "rem", Args: 3},
	OpNeg:           {Name: "neg", Args: 2},
	OpAbs:           {Name: "abs", Args: 2},
	OpMin:           {Name: "min", Args: 3},
	OpMax:           {Name: "max", Args: 3},
	OpAnd:           {Name: "and", Args: 3},
	OpOr:            {Name: "or", Args: 3},
	OpXor:           {Name: "xor", Args: 3},
	OpNot:           {Name: "not", Args: 2},
	OpShl:           {Name: "shl", Args: 3},
	OpShr:           {Name: "shr", Args: 3},
	OpPopc:          {Name: "popc", Args: 2},
	OpClz:           {Name: "clz", Args: 2},
	OpBrev:          {Name: "brev", Args: 2},
	OpPrmt:          {Name: "prmt", Args: 4},
	OpSetp:          {Name: "setp", Args: 3},
	OpSelp:          {Name: "selp", Args: 4},
	OpCvt:           {Name: "cvt", Args: 2},
	OpCvta:          {Name: "cvta", Args: 2},
	OpLd:            {Name: "ld", Args: 2},
	OpSt:            {Name: "st", Args: 2},
	OpAtom:          {Name: "atom", Args: -1},
	OpBar:           {Name: "bar.sync", Args: 1, Sync: true},
	OpBarWarp:       {Name: "bar.warp.sync", Args: 1, Sync: true},
	OpMembar:        {Name: "membar", Args: 0},
	OpShfl:          {Name: "shfl.sync", Args: 5, Sync: true},
	OpVote:          {Name: "vote.sync", Args: 3, Sync: true},
	OpSqrt:          {Name: "sqrt", Args: 2},
	OpRsqrt:         {Name: "rsqrt", Args: 2},
	OpRcp:           {Name: "rcp", Args: 2},
	OpEx2:           {Name: "ex2", Args: 2},
	OpLg2:           {Name: "lg2", Args: 2},
	OpSin:           {Name: "sin", Args: 2},
	OpCos:           {Name: "cos", Args: 2},
	OpTanh:          {Name: "tanh", Args: 2},
	OpCopysign:      {Name: "copysign", Args: 3},
	OpMma:           {Name: "mma.sync.aligned", Args: 4, Sync: true},
	OpLdmatrix:      {Name: "ldmatrix.sync.aligned", Args: 2, Sync: true},
	OpCpAsync:       {Name: "cp.async", Args: -1},
	OpCpAsyncCommit: {Name: "cp.async.commit_group", Args: 0},
	OpCpAsyncWait:   {Name: "cp.async.wait_group", Args: 1},
	OpMbarrier:      {Name: "mbarrier", Args: -1},
	OpFence:         {Name: "fence", Args: 0},
	OpGridDep:       {Name: "griddepcontrol", Args: 0},
	OpBarRed:        {Name: "bar.red", Args: 3, Sync: true},
	OpNanosleep:     {Name: "nanosleep", Args: 1},
	OpPrefetch:      {Name: "prefetch", Args: 1}, // a cache hint with no result (compiler/lower_prefetch.go)
	OpPragma:        {Name: ".pragma", Args: 0},
	OpWgmma:         {Name: "wgmma", Args: -1, Sync: true},
	OpSetmaxnreg:    {Name: "setmaxnreg", Args: 1, Sync: true},
	OpBra:           {Name: "bra", Args: 1, Term: true},
	OpRet:           {Name: "ret", Args: 0, Term: true},
	OpExit:          {Name: "exit", Args: 0, Term: true},
	OpTrap:          {Name: "trap", Args: 0, Term: true},
	OpDp4a:          {Name: "dp4a", Args: 4},
}

func (op Op) String() string { return Ops[op].Name }
