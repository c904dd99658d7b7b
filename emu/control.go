package emu

// Control flow, barriers and warp-collective synchronization: the
// instructions that move lanes' PCs other than to the next instruction
// (PTX ISA §9.7.12 control flow, §9.7.13.4 bar/barrier).

import (
	"fmt"
	"math/bits"
)

// control executes a control instruction for the lanes in mask (exec: the
// ones whose guard passed) at pc.
func (w *warp) control(in *inst, pc int32, mask, exec uint32) error {
	switch in.ctl {
	case ctlBra:
		if w.uniform {
			switch exec {
			case mask:
				w.upc = in.target
				return nil
			case 0:
				w.upc++
				return nil
			}
		}
		w.materialize()
		w.setPC(exec, in.target)
		w.setPC(mask&^exec, pc+1)

	case ctlExit:
		w.materialize()
		w.setPC(mask&^exec, pc+1)
		if exec != 0 {
			if err := w.finishAsync(exec); err != nil {
				return w.fault(in, err)
			}
			w.exited |= exec
			w.b.exited(bits.OnesCount32(exec))
		}

	case ctlTrap:
		if exec != 0 {
			return w.fault(in, &laneError{bits.TrailingZeros32(exec), ErrTrap})
		}
		w.materialize()
		w.setPC(mask, pc+1)

	case ctlBar:
		w.materialize()
		w.setPC(mask, pc+1)
		if exec != 0 {
			if err := in.fn(w, in, exec); err != nil {
				return w.fault(in, err)
			}
		}

	case ctlWarp:
		need := w.members(in, mask)
		if need&^mask != 0 {
			// Member lanes are elsewhere: wait here for them.
			w.materialize()
			w.setPC(mask, pc)
			w.syncBlk |= mask
			w.uniform = false
			return nil
		}
		if exec != 0 {
			if err := in.fn(w, in, exec); err != nil {
				return w.fault(in, err)
			}
		}
		if w.uniform {
			w.upc++
			return nil
		}
		w.syncBlk &^= mask
		w.setPC(mask, pc+1)

	case ctlCall, ctlRet:
		if err := w.callControl(in, pc, mask, exec); err != nil {
			return err
		}

	case ctlAsync:
		if exec != 0 {
			if err := in.fn(w, in, exec); err != nil {
				return w.fault(in, err)
			}
		}
		if w.uniform {
			w.upc++
			return nil
		}
		w.setPC(mask, pc+1)
	}
	w.reconverge()
	return nil
}

// members returns the lanes that must execute a warp collective together
// with the lanes in at: its membermask operand (in.aux2 is the operand
// index plus one), or every lane for .aligned instructions without one
// (mma, ldmatrix), less the lanes that have exited.
func (w *warp) members(in *inst, at uint32) uint32 {
	live := w.valid &^ w.exited
	if in.aux2 == 0 {
		return live
	}
	mm := uint32(w.get(&in.ops[in.aux2-1], bits.TrailingZeros32(at)))
	return mm & live
}

func decBra(d *decoder, s *astStmt, m *mods, in *inst) {
	if !d.want(s, 1) {
		return
	}
	a := s.args[0]
	if a.kind != aName {
		d.errorf("bra: want a label, found %s", argString(a))
		return
	}
	in.ctl = ctlBra
	d.fixups = append(d.fixups, fixup{pc: int32(len(d.k.code)), label: a.name, line: d.line})
}

// decExit decodes exit, and ret: the end of the thread in an entry, a
// branch to the return point in an inlined function.
func decExit(d *decoder, s *astStmt, m *mods, in *inst) {
	d.want(s, 0)
	if m.base == "ret" && d.inFunc {
		in.ctl = ctlBra
		d.fixups = append(d.fixups, fixup{pc: int32(len(d.k.code)), label: retLabel, line: d.line})
		return
	}
	if m.base == "ret" && d.outlined {
		in.ctl = ctlRet
		return
	}
	in.ctl = ctlExit
}

func decTrap(d *decoder, s *astStmt, m *mods, in *inst) {
	d.want(s, 0)
	in.ctl = ctlTrap
}

// decBar decodes bar.sync/bar.arrive/bar.red, barrier.sync/arrive/red and
// bar.warp.sync (PTX ISA §9.7.13.4, §9.7.13.5).
func decBar(d *decoder, s *astStmt, m *mods, in *inst) {
	if m.word("warp") {
		// bar.warp.sync membermask
		if !d.want(s, 1) {
			return
		}
		m.word("sync")
		in.ops[0] = d.src(s.args[0], tB32)
		in.ctl, in.aux2 = ctlWarp, 1
		in.fn = func(*warp, *inst, uint32) error { return nil }
		return
	}
	kind := m.oneOf("sync", "arrive", "red")
	if kind == "" {
		// bar 0 is bar.sync 0; parseMods drops "sync" as a hint, so plain
		// bar.sync and barrier.sync arrive here too.
		kind = "sync"
	}
	if kind == "red" {
		decBarRed(d, s, m, in)
		return
	}
	if !d.want(s, 1, 2) {
		return
	}
	in.ops[0] = d.src(s.args[0], tU32)
	in.nops = 1
	if len(s.args) == 2 {
		in.ops[1] = d.src(s.args[1], tU32)
		in.nops = 2
	} else if kind == "arrive" {
		d.errorf("%s: want a thread count operand", s.op)
	}
	in.ctl = ctlBar
	wait := kind == "sync"
	// bar.sync and bar.arrive are barrier.sync.aligned and
	// barrier.arrive.aligned: every thread of a warp must execute the same
	// instruction together (PTX ISA §9.7.13.4). emu runs divergent ones
	// like barrier.sync; Synccheck reports them.
	aligned := m.base == "bar" || containsWord(s.op, "aligned")
	in.fn = func(w *warp, in *inst, m uint32) error {
		lane := bits.TrailingZeros32(m)
		if aligned && w.san != nil && w.san.sync && wait {
			// Judged when the barrier releases (warp.checkAligned): lanes
			// that reach this instruction at different steps, because
			// emu runs the lowest PC first, still execute it together.
			w.barAligned |= m
		} else if aligned && w.san != nil && w.san.sync {
			if live := w.valid &^ w.exited; m != live {
				w.san.record(w, lane, "synccheck", "divergent aligned barrier", 0,
					fmt.Sprintf("lanes %#08x of warp %d execute it, but lanes %#08x have not exited", m, w.id, live))
			}
		}
		id := int(uint32(w.get(&in.ops[0], lane)))
		if id >= len(w.b.bars) {
			return faultf(lane, ErrTrap, "barrier %d: only 0..15 exist", id)
		}
		count := 0
		if in.nops == 2 {
			count = int(uint32(w.get(&in.ops[1], lane)))
			if count%32 != 0 || count == 0 {
				return faultf(lane, ErrTrap, "barrier thread count %d is not a positive multiple of 32", count)
			}
		}
		if wait {
			w.barBlk |= m
			for mm := m; mm != 0; mm &= mm - 1 {
				w.barID[bits.TrailingZeros32(mm)] = uint8(id)
			}
		}
		w.b.arrive(id, bits.OnesCount32(m), count)
		return nil
	}
}

// Barrier reduction operations.
const (
	redPopc = iota + 1
	redAnd
	redOr
)

// decBarRed decodes bar.red.popc.u32 d, a{, b}, {!}c and
// bar.red.{and,or}.pred p, a{, b}, {!}c: a barrier that also reduces c
// over the participating threads and gives every one of them the result
// (PTX ISA §9.7.13.4).
func decBarRed(d *decoder, s *astStmt, m *mods, in *inst) {
	op := m.oneOf("popc", "and", "or")
	t := d.oneType(s, m)
	if op == "" || (op == "popc") != (t == tU32) || !d.want(s, 3, 4) {
		d.errorf("%s: want bar.red.popc.u32 d, a{, b}, c or bar.red.{and,or}.pred p, a{, b}, c", s.op)
		return
	}
	code := map[string]uint8{"popc": redPopc, "and": redAnd, "or": redOr}[op]
	in.ops[0] = d.dst(s.args[0])
	in.ops[1] = d.src(s.args[1], tU32)
	n := len(s.args)
	if n == 4 {
		in.ops[2] = d.src(s.args[2], tU32)
	}
	in.ops[3] = d.src(s.args[n-1], tPred)
	in.ctl = ctlBar
	in.fn = func(w *warp, in *inst, m uint32) error {
		lane := bits.TrailingZeros32(m)
		id := int(uint32(w.get(&in.ops[1], lane)))
		if id >= len(w.b.bars) {
			return faultf(lane, ErrTrap, "barrier %d: only 0..15 exist", id)
		}
		count := 0
		if n == 4 {
			count = int(uint32(w.get(&in.ops[2], lane)))
		}
		bar := &w.b.bars[id]
		for mm := m; mm != 0; mm &= mm - 1 {
			l := bits.TrailingZeros32(mm)
			bar.redN++
			if w.get(&in.ops[3], l)&1 != 0 {
				bar.redTrue++
			}
			w.barID[l] = uint8(id)
			w.redOp[l] = code
			w.redDst[l] = in.ops[0].r
		}
		w.barBlk |= m
		w.barRed |= m
		w.b.arrive(id, bits.OnesCount32(m), count)
		return nil
	}
}
