package emu

// Asynchronous global-to-shared copies: cp.async, cp.async.commit_group,
// cp.async.wait_group, cp.async.wait_all (PTX ISA §9.7.9.25.3).
//
// Model: cp.async reads its source when issued and writes its destination
// when a wait completes its group (or when the thread exits). Reading the
// destination between the two therefore sees the old data, as it may on
// a GPU, so kernels that forget a wait fail on emu too. Groups are per
// thread, as in the ISA.

import (
	"math/bits"
)

// acopy is one issued cp.async.
type acopy struct {
	dst  uint64 // shared offset
	n    int
	data [16]byte
}

type laneAsync struct {
	pending []acopy   // issued, not yet committed
	groups  [][]acopy // committed groups, oldest first
}

type asyncState struct {
	lanes [32]laneAsync
}

func (w *warp) asyncLanes() *asyncState {
	if w.async == nil {
		w.async = &asyncState{}
	}
	return w.async
}

// decCp decodes the cp.async family.
func decCp(d *decoder, s *astStmt, m *mods, in *inst) {
	if !m.word("async") {
		d.errorf("%s: only cp.async is supported", s.op)
		m.words = nil
		return
	}
	switch {
	case m.word("bulk"):
		decBulk(d, s, m, in)
	case m.word("commit_group"):
		d.want(s, 0)
		in.fn = func(w *warp, in *inst, m uint32) error {
			a := w.asyncLanes()
			for mm := m; mm != 0; mm &= mm - 1 {
				la := &a.lanes[bits.TrailingZeros32(mm)]
				la.groups = append(la.groups, la.pending) // an empty group is allowed
				la.pending = nil
			}
			return nil
		}
	case m.word("wait_group"):
		if !d.want(s, 1) {
			return
		}
		in.ops[0] = d.src(s.args[0], tU32)
		if in.ops[0].kind != oImm {
			d.errorf("%s: the group count must be a constant", s.op)
		}
		in.ctl = ctlAsync
		in.fn = func(w *warp, in *inst, m uint32) error {
			return w.waitAsync(m, int(in.ops[0].imm), false)
		}
	case m.word("wait_all"):
		d.want(s, 0)
		in.ctl = ctlAsync
		in.fn = func(w *warp, in *inst, m uint32) error { return w.waitAsync(m, 0, true) }
	default:
		decCpAsync(d, s, m, in)
	}
}

// decCpAsync decodes cp.async.{ca,cg}.shared.global [dst], [src],
// cp-size{, src-size | , ignore-src}: cp-size is 4, 8 or 16 (16 only for
// .cg); bytes past src-size are zero-filled; a true ignore-src predicate
// copies nothing and fills zeros.
func decCpAsync(d *decoder, s *astStmt, m *mods, in *inst) {
	// ca/cg were dropped as cache hints by parseMods; the op must name
	// both spaces: .shared.global. parseMods keeps only the last space.
	if len(s.args) < 3 || len(s.args) > 4 {
		d.errorf("%s: want [dst], [src], cp-size{, src-size}", s.op)
		return
	}
	if m.space != spGlobal || !containsWord(s.op, "shared") && !containsWord(s.op, "shared::cta") {
		d.errorf("%s: want cp.async.{ca,cg}.shared.global", s.op)
		return
	}
	in.ops[0] = d.addr(s.args[0], spShared)
	in.ops[1] = d.addr(s.args[1], spGlobal)
	in.space = spShared // of the destination, for observers
	size := d.src(s.args[2], tU32)
	if size.kind != oImm || size.imm != 4 && size.imm != 8 && size.imm != 16 {
		d.errorf("%s: cp-size must be 4, 8 or 16", s.op)
		return
	}
	if containsWord(s.op, "cg") && size.imm != 16 {
		d.errorf("%s: cp.async.cg copies 16 bytes", s.op)
		return
	}
	n := int(size.imm)
	ignoreSrc := false
	if len(s.args) == 4 {
		a := s.args[3]
		if r, ok := d.reg(a.name); a.kind == aName && ok && r.typ == tPred {
			ignoreSrc = true
		}
		in.ops[2] = d.src(a, tU32)
	} else {
		in.ops[2] = opnd{kind: oImm, imm: uint64(n), r2: -1}
	}
	in.fn = func(w *warp, in *inst, m uint32) error {
		a := w.asyncLanes()
		var read uint32 // lanes that read their source
		for mm := m; mm != 0; mm &= mm - 1 {
			l := bits.TrailingZeros32(mm)
			dst := w.addrOf(&in.ops[0], l)
			if _, err := w.access(spShared, dst, n, n, l, AccessAsync); err != nil {
				return err
			}
			srcN := int(w.get(&in.ops[2], l))
			if ignoreSrc {
				if srcN&1 != 0 {
					srcN = 0
				} else {
					srcN = n
				}
			}
			if srcN > n {
				return faultf(l, ErrOutOfBounds, "cp.async src-size %d exceeds cp-size %d", srcN, n)
			}
			c := acopy{dst: dst, n: n}
			if srcN > 0 {
				src, err := w.access(spGlobal, w.addrOf(&in.ops[1], l), srcN, min(n, 16), l, AccessLoad)
				if err != nil {
					return err
				}
				copy(c.data[:], src)
				read |= 1 << l
			}
			a.lanes[l].pending = append(a.lanes[l].pending, c)
		}
		if w.obs != nil {
			w.observe(in, &in.ops[0], m, AccessAsync, n)
			if read != 0 { // the global side, as a load of cp-size bytes per reading lane
				w.observeIn(in, spGlobal, &in.ops[1], read, AccessLoad, n)
			}
		}
		return nil
	}
}

func containsWord(op, w string) bool {
	for _, p := range splitDots(op) {
		if p == w {
			return true
		}
	}
	return false
}

func splitDots(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

// waitAsync completes all but the newest keep groups of lanes m; with all
// it also completes the uncommitted copies (cp.async.wait_all).
func (w *warp) waitAsync(m uint32, keep int, all bool) error {
	if w.async == nil {
		return nil
	}
	for mm := m; mm != 0; mm &= mm - 1 {
		la := &w.async.lanes[bits.TrailingZeros32(mm)]
		if all {
			la.groups = append(la.groups, la.pending)
			la.pending = nil
		}
		for len(la.groups) > keep {
			for _, c := range la.groups[0] {
				copy(w.b.shared[c.dst:c.dst+uint64(c.n)], c.data[:c.n])
				if w.b.race != nil && w.cur != nil {
					// The copy writes shared memory when it lands.
					w.b.race.access(w, bits.TrailingZeros32(mm), c.dst, c.n, true, false)
				}
			}
			la.groups = la.groups[1:]
		}
	}
	return nil
}

// finishAsync lands every outstanding copy of exiting lanes.
func (w *warp) finishAsync(m uint32) error {
	return w.waitAsync(m, 0, true)
}
