package emu

// A warp: 32 lanes with their own PCs, and the scheduler that runs them.
//
// Independent thread scheduling (Volta and later): every lane has its own
// PC. Each step the warp executes one instruction for the lanes that share
// the lowest PC among those able to run. Divergent paths therefore all
// run, in address order, and lanes reconverge as soon as their PCs are
// equal again. While all runnable lanes share one PC (the common case) the
// warp is "uniform": it keeps that PC in upc and the per-lane PCs are not
// touched until control flow needs them.

import (
	"fmt"
	"math/bits"
)

type warp struct {
	// spin is set when the last instruction was an mbarrier wait that
	// found its phase incomplete: the warp yields to the others.
	spin bool
	// sleep is set when the last instruction was a nanosleep: the warp
	// is polling global memory and yields (cooperative.go).
	sleep bool
	b     *block
	l     *launch
	k     *kernel
	code  []inst
	obs   Observer
	id    int
	regs  []uint64 // slot*32 + lane
	local []byte   // 32 lanes × kernel.localSize

	pc      [32]int32
	upc     int32
	uniform bool // every runnable lane is at upc; pc[] may be stale for them

	valid   uint32 // lanes that exist (a partial last warp has fewer)
	exited  uint32
	barBlk  uint32 // waiting at a block barrier
	syncBlk uint32 // waiting at a warp collective for the rest of its member mask
	barID   [32]uint8
	barRed  uint32 // lanes waiting at a bar.red for its result
	// barAligned: lanes waiting at an aligned barrier (bar.sync), under
	// Synccheck only.
	barAligned uint32
	// waited: lanes past griddepcontrol.wait (Options.PDLcheck).
	waited uint32
	redOp  [32]uint8
	redDst [32]int32

	cache    [4]*alloc  // recent global allocations, most recent first
	sregsSet bool       // the per-launch special registers are written
	san      *sanitizer // nil unless Options.Memcheck or Racecheck
	cur      *inst      // the instruction being executed
	scratch  [32]byte   // where sanitized faulting accesses go
	// pending is the value a store is about to write (Racecheck only),
	// in pendBuf.
	pending, pendBuf []byte
	async            *asyncState
	wg               *wgState    // wgmma results not yet retired (exec_wgmma.go)
	frames           [32][]frame // each lane's call stack (call.go)
}

// reset prepares the warp for a new block: registers other than the
// special ones are zeroed (reads of unwritten registers are deterministic),
// %ctaid is updated, and the special registers that are the same in every
// block are written the first time only.
func (w *warp) reset() {
	clear(w.regs[numSregs*32:])
	clear(w.regs[srCarry*32 : srCarry*32+32])
	clear(w.local)
	w.pc = [32]int32{}
	w.upc, w.uniform = 0, true
	w.exited, w.barBlk, w.syncBlk, w.barRed, w.barAligned, w.waited = 0, 0, 0, 0, 0, 0
	w.cache = [4]*alloc{}
	w.async = nil
	w.wg, w.spin, w.sleep = nil, false, false
	if len(w.k.funcs) > 0 {
		for i := range w.frames {
			w.frames[i] = w.frames[i][:0]
		}
	}
	set := func(slot int, v uint64) {
		r := w.regs[slot*32 : slot*32+32]
		for i := range r {
			r[i] = v
		}
	}
	set(srCtaidX, uint64(w.b.idx[0]))
	set(srCtaidY, uint64(w.b.idx[1]))
	set(srCtaidZ, uint64(w.b.idx[2]))
	if w.sregsSet {
		return
	}
	w.sregsSet = true
	l := w.l
	bx, by := l.block[0], l.block[1]
	for lane := 0; lane < 32; lane++ {
		t := w.id*32 + lane
		w.regs[srTidX*32+lane] = uint64(t % bx)
		w.regs[srTidY*32+lane] = uint64(t / bx % by)
		w.regs[srTidZ*32+lane] = uint64(t / (bx * by))
		w.regs[srLaneid*32+lane] = uint64(lane)
		w.regs[srLanemaskEq*32+lane] = 1 << lane
		w.regs[srLanemaskLt*32+lane] = 1<<lane - 1
		w.regs[srLanemaskLe*32+lane] = 1<<(lane+1) - 1
		w.regs[srLanemaskGt*32+lane] = uint64(^uint32(0) << (lane + 1))
		w.regs[srLanemaskGe*32+lane] = uint64(^uint32(0) << lane)
	}
	set(srNtidX, uint64(l.block[0]))
	set(srNtidY, uint64(l.block[1]))
	set(srNtidZ, uint64(l.block[2]))
	set(srNctaidX, uint64(l.grid[0]))
	set(srNctaidY, uint64(l.grid[1]))
	set(srNctaidZ, uint64(l.grid[2]))
	set(srWarpid, uint64(w.id))
	set(srNwarpid, uint64(l.nwarps))
	set(srNsmid, 1)
	set(srDynSmem, uint64(l.dyn))
	set(srTotalSmem, uint64(l.shared))
	if w.k.reserved {
		set(srResBegin, uint64(l.resBase))
		set(srResEnd, uint64(l.resBase+reservedSmem))
		set(srResCap, reservedSmem)
		set(srRes0, uint64(l.resBase))
		set(srRes1, uint64(l.resBase+reservedSmem/2))
	}
}

// get reads a source operand for lane l.
func (w *warp) get(o *opnd, l int) uint64 {
	if o.kind == oReg && !o.neg {
		return w.regs[int(o.r)+l]
	}
	if o.kind == oImm {
		return o.imm
	}
	return w.getSlow(o, l)
}

func (w *warp) getSlow(o *opnd, l int) uint64 {
	switch o.kind {
	case oReg: // negated predicate
		return w.regs[int(o.r)+l] ^ 1
	case oGsym:
		return w.l.gaddr[o.sym] + o.imm
	case oClock:
		return w.b.steps
	}
	return 0
}

// set writes register slot r (already *32) for lane l.
func (w *warp) set(r int32, l int, v uint64) { w.regs[int(r)+l] = v }

// guardMask returns the lanes of m whose guard predicate passes.
func (w *warp) guardMask(in *inst, m uint32) uint32 {
	p := w.regs[in.guard : in.guard+32]
	var e uint32
	for l := 0; l < 32; l++ {
		if p[l] != 0 {
			e |= 1 << l
		}
	}
	if in.gneg {
		e = ^e
	}
	return e & m
}

// runnable are the lanes that can execute now.
func (w *warp) runnable() uint32 {
	return w.valid &^ (w.exited | w.barBlk | w.syncBlk)
}

// minPC returns the lowest PC among lanes in m and the lanes of m at it.
func (w *warp) minPC(m uint32) (int32, uint32) {
	pc := int32(-1)
	var at uint32
	for mm := m; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm)
		switch p := w.pc[l]; {
		case pc < 0 || p < pc:
			pc, at = p, 1<<l
		case p == pc:
			at |= 1 << l
		}
	}
	return pc, at
}

// lanesAt returns the lanes of m whose PC is pc.
func (w *warp) lanesAt(m uint32, pc int32) uint32 {
	var at uint32
	for mm := m; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm)
		if w.pc[l] == pc {
			at |= 1 << l
		}
	}
	return at
}

// materialize writes upc into the PCs of the runnable lanes and leaves
// uniform mode, before anything changes lanes' PCs individually.
func (w *warp) materialize() {
	if !w.uniform {
		return
	}
	for mm := w.runnable(); mm != 0; mm &= mm - 1 {
		w.pc[bits.TrailingZeros32(mm)] = w.upc
	}
	w.uniform = false
}

// reconverge re-enters uniform mode if every runnable lane has one PC and
// no lane waits at a warp collective.
func (w *warp) reconverge() {
	run := w.runnable()
	if run == 0 || w.syncBlk != 0 {
		w.uniform = false
		return
	}
	pc := w.pc[bits.TrailingZeros32(run)]
	for mm := run; mm != 0; mm &= mm - 1 {
		if w.pc[bits.TrailingZeros32(mm)] != pc {
			w.uniform = false
			return
		}
	}
	w.uniform, w.upc = true, pc
}

// setPC moves lanes m to pc.
func (w *warp) setPC(m uint32, pc int32) {
	for mm := m; mm != 0; mm &= mm - 1 {
		w.pc[bits.TrailingZeros32(mm)] = pc
	}
}

// release unblocks the lanes waiting at barrier id.
func (w *warp) release(id int, bar *barrier) {
	var m uint32
	for mm := w.barBlk; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm)
		if int(w.barID[l]) == id {
			m |= 1 << l
		}
	}
	if m == 0 {
		return
	}
	for mm := m & w.barRed; mm != 0; mm &= mm - 1 {
		// bar.red delivers the block-wide result to each participant.
		l := bits.TrailingZeros32(mm)
		var v uint64
		switch w.redOp[l] {
		case redPopc:
			v = uint64(bar.redTrue)
		case redAnd:
			v = b2u(bar.redTrue == bar.redN)
		case redOr:
			v = b2u(bar.redTrue > 0)
		}
		w.regs[int(w.redDst[l])+l] = v
	}
	if a := m & w.barAligned; a != 0 {
		w.checkAligned(a, m)
		w.barAligned &^= m
	}
	w.barRed &^= m
	w.materialize()
	w.barBlk &^= m
	w.reconverge()
}

// checkAligned is synccheck's rule for an aligned barrier (PTX ISA
// §9.7.13.4: every thread of a warp executes the same bar.sync): when it
// releases, the lanes a that waited at an aligned barrier must be every
// live lane of the warp (m are all the lanes released), and must have
// arrived from one instruction.
func (w *warp) checkAligned(a, m uint32) {
	first := bits.TrailingZeros32(a)
	pc := w.pc[first] // the lanes' PCs are past their barrier
	saved := w.cur
	w.cur = &w.code[pc-1]
	defer func() { w.cur = saved }()
	live := w.valid &^ w.exited
	if m != live {
		w.san.record(w, first, "synccheck", "divergent aligned barrier", 0,
			fmt.Sprintf("lanes %#08x of warp %d execute it, but lanes %#08x have not exited", m, w.id, live))
		return
	}
	for mm := a; mm != 0; mm &= mm - 1 {
		if l := bits.TrailingZeros32(mm); w.pc[l] != pc {
			w.san.record(w, first, "synccheck", "divergent aligned barrier", 0,
				fmt.Sprintf("lanes of warp %d reach it from different instructions (PTX lines %d and %d)", w.id, w.code[pc-1].line, w.code[w.pc[l]-1].line))
			return
		}
	}
}

// run executes up to budget warp-instructions and returns how many ran.
// It returns early when no lane can run (all exited or blocked).
func (w *warp) run(budget int) (int, error) {
	code := w.code
	n := 0
	for n < budget {
		var pc int32
		var mask uint32
		switch {
		case w.uniform:
			pc, mask = w.upc, w.runnable()
			if mask == 0 {
				return n, nil
			}
		default:
			run := w.runnable()
			if run == 0 {
				if w.syncBlk == 0 {
					return n, nil
				}
				var ok bool
				if pc, mask, ok = w.readyCollective(); !ok {
					return n, nil
				}
			} else {
				pc, mask = w.minPC(run)
				mask |= w.lanesAt(w.syncBlk, pc)
			}
		}
		in := &code[pc]
		w.cur = in
		exec := mask
		if in.guard >= 0 {
			exec = w.guardMask(in, mask)
		}
		n++
		w.b.steps++
		if w.obs != nil {
			w.observeStep(in, pc, mask, exec)
		}
		if in.ctl == ctlNone {
			if exec != 0 {
				if err := in.fn(w, in, exec); err != nil {
					return n, w.fault(in, err)
				}
			}
			if w.uniform {
				w.upc++
			} else {
				w.setPC(mask, pc+1)
				w.reconverge()
			}
			if w.spin || w.sleep { // a failed mbarrier wait, a poll: let other warps (and blocks) run
				return n, nil
			}
			continue
		}
		if err := w.control(in, pc, mask, exec); err != nil {
			return n, err
		}
	}
	return n, nil
}

// readyCollective finds a group of lanes waiting at a warp collective
// whose member lanes have all arrived (some may have exited since).
func (w *warp) readyCollective() (int32, uint32, bool) {
	left := w.syncBlk
	for left != 0 {
		pc, at := w.minPC(left)
		left &^= at
		if w.members(&w.code[pc], at)&^at == 0 {
			return pc, at, true
		}
	}
	return 0, 0, false
}

func (w *warp) observeStep(in *inst, pc int32, mask, exec uint32) {
	f := &w.k.flow[pc]
	w.obs.Step(&Step{Kernel: w.k.info.Name, Block: w.b.idx, Warp: w.id, PC: int(pc), Line: int(in.line),
		Instr: in.text, Active: mask, Exec: exec, Reads: f.reads, Writes: f.writes, Class: f.class, Spin: f.spin, Bulk: f.bulk, Ordered: f.order, Copy: f.copy})
}

// thread returns the block-relative thread index of lane l.
func (w *warp) thread(l int) [3]int {
	t := w.id*32 + l
	bx, by := w.l.block[0], w.l.block[1]
	return [3]int{t % bx, t / bx % by, t / (bx * by)}
}

// fault wraps a handler error with the kernel, block, thread and source
// position.
func (w *warp) fault(in *inst, err error) error {
	lane := -1
	if le, ok := err.(*laneError); ok {
		lane, err = le.lane, le.err
	}
	e := &Error{Kernel: w.k.info.Name, Block: w.b.idx, Thread: [3]int{-1, -1, -1}, PTXLine: int(in.line), Instr: in.text, Err: err}
	if lane >= 0 {
		e.Thread = w.thread(lane)
	}
	if in.loc.file != 0 {
		e.File = w.k.files[in.loc.file]
		if e.File == "" {
			e.File = "file" + itoa(in.loc.file)
		}
		e.Line, e.Col = in.loc.line, in.loc.col
	}
	return e
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	if neg {
		n--
		b[n] = '-'
	}
	return string(b[n:])
}
