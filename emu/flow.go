package emu

import "strings"

// Data flow per instruction, for timing observers (latency.go): which
// register slots an instruction reads and writes, what kind of unit it
// occupies, and whether it sits in a poll loop. Computed once per kernel
// from the decoded code; a Step carries its instruction's entry.

// OpClass is what an instruction does, as a timing model sees it.
type OpClass uint8

const (
	ClassALU     OpClass = iota // integer and float arithmetic, moves, compares
	ClassSFU                    // transcendentals, rcp, sqrt, division
	ClassMMA                    // mma.sync, wgmma.mma_async
	ClassShuffle                // shfl, vote, match, redux: a warp collective
	ClassMem                    // ld, st, atom, red, ldmatrix, cp.async, prefetch
	ClassBarrier                // bar.sync, barrier.sync, bar.red: the whole block
	ClassFence                  // membar, fence
	ClassAsyncCommit
	ClassAsyncWait // cp.async.wait_group / wait_all, cp.async.bulk.wait_group
	ClassWait      // mbarrier.try_wait / test_wait, wgmma.wait_group
	ClassSleep     // nanosleep
	ClassControl   // bra, ret, exit, call and the like
)

// flow is one instruction's data flow.
type flow struct {
	reads, writes []int32 // register slots
	class         OpClass
	spin          bool // inside a poll loop: a nanosleep and the branch back to it
	bulk          bool // cp.async.bulk: completes on an mbarrier
	// order: a branch that ptxas leaves a branch, so the warp issues in
	// order across it: a loop's back edge, a jump over more than
	// ifConvert instructions, a call, ret or exit. A short forward jump
	// (an if around a few instructions) ptxas turns into predicated
	// code and schedules across.
	order bool
	// copy: an unguarded mov of one register to another. kern's
	// lowering emits them for every phi and every value passed through
	// a struct or array; ptxas's register allocator coalesces them, so
	// they wait for nothing: the copy is ready when its source is.
	copy bool
}

// ifConvert is the longest forward jump the timing model treats as
// predicated code.
const ifConvert = 16

// noDest are the opcode roots whose first operand is not a register the
// instruction writes.
var noDest = map[string]bool{
	"st": true, "red": true, "stmatrix": true, "prefetch": true, "prefetchu": true,
	"cp": true, "membar": true, "fence": true, "nanosleep": true, "trap": true,
	"brkpt": true, "bra": true, "ret": true, "exit": true, "call": true,
	"griddepcontrol": true, "setmaxnreg": true, "tensormap": true, "pmevent": true,
	"barrier": true, "bar": true, "discard": true, "applypriority": true,
}

// sfu are the roots of instructions that run on the special-function
// unit or as a short subroutine.
var sfu = map[string]bool{
	"ex2": true, "lg2": true, "sin": true, "cos": true, "rsqrt": true, "sqrt": true,
	"rcp": true, "tanh": true, "div": true, "rem": true,
}

// classify returns an instruction's class and whether its first operand
// is a destination.
func classify(text string, nops int) (OpClass, bool) {
	root, rest, _ := strings.Cut(text, ".")
	dest := !noDest[root] && nops > 0
	switch root {
	case "ld", "ldu", "atom", "ldmatrix", "st", "red", "stmatrix", "prefetch", "prefetchu":
		return ClassMem, dest
	case "cp":
		switch {
		case strings.Contains(rest, "commit_group"):
			return ClassAsyncCommit, false
		case strings.Contains(rest, "wait_group"), strings.Contains(rest, "wait_all"):
			return ClassAsyncWait, false
		}
		return ClassMem, false
	case "mma":
		return ClassMMA, true
	case "wgmma":
		switch {
		case strings.HasPrefix(rest, "mma_async"):
			return ClassMMA, true
		case strings.HasPrefix(rest, "wait_group"):
			return ClassWait, false
		}
		return ClassALU, false
	case "mbarrier":
		switch {
		case strings.Contains(rest, "try_wait"), strings.Contains(rest, "test_wait"):
			return ClassWait, true
		case strings.HasPrefix(rest, "arrive"):
			return ClassMem, nops >= 2
		}
		return ClassMem, false
	case "bar", "barrier":
		switch {
		case strings.HasPrefix(rest, "warp"):
			return ClassShuffle, false
		case strings.HasPrefix(rest, "red"):
			return ClassBarrier, true
		}
		return ClassBarrier, false
	case "membar", "fence":
		return ClassFence, false
	case "nanosleep":
		return ClassSleep, false
	case "shfl", "vote", "match", "redux", "activemask", "elect":
		return ClassShuffle, dest
	case "bra", "ret", "exit", "call", "trap", "brkpt":
		return ClassControl, false
	}
	if sfu[root] {
		return ClassSFU, dest
	}
	return ClassALU, dest
}

// buildFlow computes every instruction's flow.
func buildFlow(code []inst) []flow {
	fl := make([]flow, len(code))
	for pc := range code {
		in := &code[pc]
		n := 0 // operands: the decoders leave the unused ones oNone
		for i := range in.ops {
			if in.ops[i].kind != oNone {
				n = i + 1
			}
		}
		class, dest := classify(in.text, n)
		dest = dest && in.ops[0].kind == oReg
		f := flow{class: class, bulk: strings.HasPrefix(in.text, "cp.async.bulk") || strings.HasPrefix(in.text, "cp.reduce.async.bulk")}
		if in.guard >= 0 {
			f.reads = append(f.reads, in.guard/32)
		}
		for i := 0; i < n; i++ {
			o := &in.ops[i]
			var regs []int32
			if o.kind == oReg && o.vec == nil { // a {a, b, …} operand's r means nothing
				regs = append(regs, o.r/32)
				if o.r2 >= 0 && i == 0 && dest {
					regs = append(regs, o.r2/32)
				}
			}
			for _, v := range o.vec {
				regs = append(regs, v/32)
			}
			switch {
			case i == 0 && dest && class == ClassMMA && strings.HasPrefix(in.text, "wgmma"):
				f.writes = append(f.writes, regs...) // the accumulators are read too
				f.reads = append(f.reads, regs...)
			case i == 0 && dest:
				f.writes = append(f.writes, regs...)
			default:
				f.reads = append(f.reads, regs...)
			}
		}
		f.copy = class == ClassALU && strings.HasPrefix(in.text, "mov.") && in.guard < 0 && n == 2 &&
			in.ops[0].kind == oReg && in.ops[0].vec == nil && in.ops[1].kind == oReg && in.ops[1].vec == nil
		if class == ClassControl {
			f.order = in.ctl != ctlBra || in.target < 0 || int(in.target) <= pc || int(in.target) > pc+ifConvert
		}
		fl[pc] = f
	}
	// A poll loop: a nanosleep at s and, after it, a branch back to s or
	// before it, within a few instructions (gpu.GridSync's spin, an
	// mbarrier or flag wait). Its instructions run as often as the
	// emulator's scheduling makes them, not as a GPU would.
	for s := range code {
		if fl[s].class != ClassSleep {
			continue
		}
		for e := s + 1; e < len(code) && e <= s+32; e++ {
			if code[e].ctl == ctlBra && code[e].target >= 0 && int(code[e].target) <= s {
				for pc := int(code[e].target); pc <= e; pc++ {
					fl[pc].spin = true
				}
				break
			}
		}
	}
	return fl
}
