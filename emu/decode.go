package emu

// The instruction table: every PTX mnemonic emu understands maps to the
// decoder of its family (exec_*.go). A mnemonic not in the table is a load
// error naming the instruction and line.

import (
	"fmt"
	"runtime"
	"strings"
)

type decodeFn func(d *decoder, s *astStmt, m *mods, in *inst)

// opTable maps base mnemonics to decoders; each family file documents its
// instructions' semantics with the PTX ISA section.
var opTable map[string]decodeFn

func init() {
	opTable = map[string]decodeFn{
		// exec_int.go: integer arithmetic and logic (PTX ISA §9.7.1, §9.7.8)
		"add": decArith, "sub": decArith, "mul": decArith, "mad": decArith,
		"div": decArith, "rem": decArith, "abs": decArith, "neg": decArith,
		"min": decArith, "max": decArith,
		// exec_carry.go: extended precision (PTX ISA §9.7.2)
		"addc": decAddc, "subc": decSubc, "madc": decMadc,
		"and": decLogic, "or": decLogic, "xor": decLogic, "not": decLogic, "cnot": decLogic,
		"shl": decShift, "shr": decShift, "shf": decShf,
		"popc": decBits, "clz": decBits, "brev": decBits, "bfind": decBits,
		"bfe": decBfe, "bfi": decBfi, "prmt": decPrmt, "dp4a": decDp4a,
		// exec_float.go: float-only arithmetic (PTX ISA §9.7.3)
		"fma": decArith, "rcp": decUnaryF, "sqrt": decUnaryF, "rsqrt": decUnaryF,
		"ex2": decUnaryF, "lg2": decUnaryF, "sin": decUnaryF, "cos": decUnaryF,
		"tanh": decUnaryF, "copysign": decCopysign, "testp": decTestp,
		// exec_cmp.go: comparison and selection (PTX ISA §9.7.7)
		"setp": decSetp, "set": decSet, "selp": decSelp, "slct": decSlct,
		// exec_cvt.go: conversion and moves (PTX ISA §9.7.9)
		"cvt": decCvt, "mov": decMov,
		// exec_mem.go: memory (PTX ISA §9.7.9.8-§9.7.9.10, §9.7.13); exec_prefetch.go
		"ld": decLd, "ldu": decLd, "st": decSt, "cvta": decCvta,
		"prefetch": decPrefetch, "prefetchu": decPrefetch, "membar": decNop, "fence": decNop,
		"nanosleep": decNanosleep, "pmevent": decNop,
		// exec_atom.go: atomics (PTX ISA §9.7.13.5, §9.7.13.6)
		"atom": decAtom, "red": decAtom,
		// exec_warp.go: warp collectives (PTX ISA §9.7.9.6, §9.7.13.8-10)
		"shfl": decShfl, "vote": decVote, "activemask": decActivemask,
		"redux": decRedux, "match": decMatch, "elect": decElect,
		// exec_mma.go: tensor cores (PTX ISA §9.7.14)
		"mma": decMma, "ldmatrix": decLdmatrix,
		// exec_async.go: asynchronous copies (PTX ISA §9.7.9.25)
		"cp": decCp,
		// exec_mbarrier.go: mbarriers (PTX ISA §9.7.13.15)
		"mbarrier": decMbarrier,
		// exec_wgmma.go: warpgroup MMA (PTX ISA §9.7.15)
		"wgmma": decWgmma,
		// exec_setmaxnreg.go: register reallocation (PTX ISA §9.7.17.1)
		"setmaxnreg": decSetmaxnreg,
		// exec_griddep.go: programmatic dependent launch
		"griddepcontrol": decGridDep,
		// control.go: control flow and barriers (PTX ISA §9.7.12, §9.7.13.4);
		// call is expanded inline by the decoder (inline.go)
		"bra": decBra, "exit": decExit, "ret": decExit, "trap": decTrap, "brkpt": decTrap,
		"bar": decBar, "barrier": decBar,
	}
}

// mods is an opcode's modifiers, classified.
type mods struct {
	base   string
	types  []dtype
	rnd    rmode
	flags  iflag
	space  space
	hasSp  bool
	vec    int
	words  []string // modifiers left for the family decoder
	intRnd bool     // .rni/.rzi/.rmi/.rpi
}

// hints are modifiers that only tune caching, ordering or scope; emu runs
// every access in program order with sequentially consistent memory.
var hints = map[string]bool{
	"ca": true, "cg": true, "cs": true, "lu": true, "cv": true, "wb": true, "wt": true, "nc": true,
	"volatile": true, "relaxed": true, "acquire": true, "release": true, "acq_rel": true,
	"sc": true, "weak": true, "mmio": true, "cta": true, "gpu": true, "sys": true, "cluster": true,
	"aligned": true, "sync": true, "noftz": true, "strong": true,
}

func parseMods(op string) *mods {
	parts := strings.Split(op, ".")
	m := &mods{base: parts[0], vec: 1}
	for _, p := range parts[1:] {
		if t, ok := typeByName[p]; ok {
			m.types = append(m.types, t)
			continue
		}
		switch p {
		case "rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna":
			m.rnd = map[byte]rmode{'n': rnRN, 'z': rnRZ, 'm': rnRM, 'p': rnRP}[p[1]]
			m.flags |= fRndGiven
			m.intRnd = len(p) == 3 && p[2] == 'i'
		case "ftz":
			m.flags |= fFtz
		case "sat":
			m.flags |= fSat
		case "satfinite":
			m.flags |= fSatFinite
		case "approx":
			m.flags |= fApprox
		case "full":
			m.flags |= fFull
		case "NaN":
			m.flags |= fNaN
		case "wide":
			m.flags |= fWide
		case "trans":
			m.flags |= fTrans
		case "uni":
			m.flags |= fUni
		case "global":
			m.space, m.hasSp = spGlobal, true
		case "shared", "shared::cta":
			m.space, m.hasSp = spShared, true
		case "local":
			m.space, m.hasSp = spLocal, true
		case "param", "param::entry", "param::func":
			m.space, m.hasSp = spParam, true
		case "const":
			m.space, m.hasSp = spConst, true
		case "v2":
			m.vec = 2
		case "v4":
			m.vec = 4
		default:
			if hints[p] || strings.HasPrefix(p, "L1::") || strings.HasPrefix(p, "L2::") {
				continue
			}
			m.words = append(m.words, p)
		}
	}
	return m
}

// word removes w from the remaining modifiers and reports whether it was
// there.
func (m *mods) word(w string) bool {
	for i, x := range m.words {
		if x == w {
			m.words = append(m.words[:i], m.words[i+1:]...)
			return true
		}
	}
	return false
}

// oneOf removes and returns the first remaining modifier in set, or "".
func (m *mods) oneOf(set ...string) string {
	for _, w := range set {
		if m.word(w) {
			return w
		}
	}
	return ""
}

// decodeStmt decodes one instruction statement.
func (d *decoder) decodeStmt(s *astStmt) inst {
	in := inst{guard: -1, line: int32(s.line), loc: s.loc, text: s.op, target: -1}
	if s.guard != "" {
		r, ok := d.reg(s.guard)
		if !ok {
			d.errorf("unknown guard predicate %s", s.guard)
		}
		in.guard, in.gneg = r.slot*32, s.guardNeg
	}
	m := parseMods(s.op)
	dec, ok := opTable[m.base]
	if !ok {
		d.errorf("unsupported instruction %s", s.op)
		return in
	}
	nerr := len(d.errs)
	dec(d, s, m, &in)
	if len(d.errs) == nerr && len(m.words) > 0 {
		d.errorf("%s: unsupported modifier .%s", s.op, strings.Join(m.words, ", ."))
	}
	if len(d.errs) == nerr && in.fn == nil && in.ctl == ctlNone {
		d.errorf("%s: unsupported form", s.op)
	}
	in.flags |= m.flags
	return in
}

// want checks the operand count.
func (d *decoder) want(s *astStmt, n ...int) bool {
	for _, k := range n {
		if len(s.args) == k {
			return true
		}
	}
	d.errorf("%s: want %s operands, found %d", s.op, joinInts(n), len(s.args))
	return false
}

func joinInts(n []int) string {
	parts := make([]string, len(n))
	for i, k := range n {
		parts[i] = fmt.Sprint(k)
	}
	return strings.Join(parts, " or ")
}

// oneType returns the single instruction type.
func (d *decoder) oneType(s *astStmt, m *mods) dtype {
	if len(m.types) != 1 {
		d.errorf("%s: want one type modifier, found %d", s.op, len(m.types))
		return tB32
	}
	return m.types[0]
}

// decNanosleep ends the warp's turn and yields the block's goroutine: a
// warp that sleeps is polling memory another block writes (a grid
// barrier), and on a machine with fewer cores than the launch has blocks
// that block needs the core (cooperative.go).
func decNanosleep(d *decoder, s *astStmt, m *mods, in *inst) {
	m.words = nil
	m.types = nil
	in.fn = func(w *warp, _ *inst, _ uint32) error {
		w.sleep = true
		runtime.Gosched()
		return nil
	}
}

func decNop(d *decoder, s *astStmt, m *mods, in *inst) {
	m.words = nil
	m.types = nil
	in.fn = func(*warp, *inst, uint32) error { return nil }
}
