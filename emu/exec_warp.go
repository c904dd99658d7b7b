package emu

// Warp collectives: shfl.sync, vote.sync, match.sync, redux.sync,
// activemask and elect.sync (PTX ISA §9.7.9.6 shfl.sync, §9.7.13.10 vote,
// §9.7.13.11 match, §9.7.13.12 redux, §9.7.13.13 activemask, §9.7.13.14
// elect.sync). The scheduler runs a
// .sync collective only when every non-exited lane of its membermask is
// at it (control.go), so a handler sees all participants at once.

import (
	"fmt"
	"math/bits"
)

// decShfl decodes shfl.sync.mode.b32 d[|p], a, b, c, membermask.
func decShfl(d *decoder, s *astStmt, m *mods, in *inst) {
	mode := m.oneOf("up", "down", "bfly", "idx")
	t := d.oneType(s, m)
	if mode == "" || t != tB32 {
		d.errorf("%s: want shfl.sync.{up,down,bfly,idx}.b32", s.op)
		return
	}
	if !d.want(s, 5) {
		return
	}
	in.ops[0] = d.dstPair(s.args[0])
	in.ops[1] = d.src(s.args[1], tB32)
	in.ops[2] = d.src(s.args[2], tB32)
	in.ops[3] = d.src(s.args[3], tB32)
	in.ops[4] = d.src(s.args[4], tB32)
	in.ctl, in.aux2 = ctlWarp, 5
	in.aux = map[string]uint32{"up": 0, "down": 1, "bfly": 2, "idx": 3}[mode]
	in.fn = execShfl
}

// execShfl follows the ISA's pseudocode: c packs the clamp value (bits
// 4:0) and the segment mask (bits 12:8); a lane whose computed source j
// is out of its segment's range reads its own a, and p says whether j was
// in range. A source lane that is not executing supplies whatever its
// register holds (the ISA leaves that value undefined).
func execShfl(w *warp, in *inst, m uint32) error {
	var src [32]uint32
	a := &in.ops[1]
	for l := 0; l < 32; l++ {
		src[l] = uint32(w.get(a, l))
	}
	d, p := in.ops[0].r, in.ops[0].r2
	for mm := m; mm != 0; mm &= mm - 1 {
		lane := bits.TrailingZeros32(mm)
		bval := int(uint32(w.get(&in.ops[2], lane)) & 31)
		c := uint32(w.get(&in.ops[3], lane))
		cval := int(c & 31)
		seg := int(c >> 8 & 31)
		maxLane := lane&seg | cval&^seg
		minLane := lane & seg
		var j int
		var ok bool
		switch in.aux {
		case 0: // up
			j = lane - bval
			ok = j >= maxLane
		case 1: // down
			j = lane + bval
			ok = j <= maxLane
		case 2: // bfly
			j = lane ^ bval
			ok = j <= maxLane
		default: // idx
			j = minLane | bval&^seg
			ok = j <= maxLane
		}
		if !ok {
			j = lane
		}
		if m&(1<<j) == 0 && w.san != nil && w.san.sync {
			w.san.record(w, lane, "synccheck", "shuffle from a lane that is not executing it", 0,
				fmt.Sprintf("lane %d reads lane %d; the executing lanes are %#08x (the value is undefined)", lane, j, m))
		}
		w.regs[int(d)+lane] = uint64(src[j])
		if p >= 0 {
			w.regs[int(p)+lane] = b2u(ok)
		}
	}
	return nil
}

// decVote decodes vote.sync.{all,any,uni}.pred d, {!}a, membermask and
// vote.sync.ballot.b32 d, {!}a, membermask.
func decVote(d *decoder, s *astStmt, m *mods, in *inst) {
	mode := m.oneOf("all", "any", "ballot")
	if mode == "" && m.flags&fUni != 0 { // parseMods read .uni as bra.uni's flag
		mode = "uni"
		m.flags &^= fUni
	}
	t := d.oneType(s, m)
	if mode == "" || (mode == "ballot") != (t == tB32) || !d.want(s, 3) {
		d.errorf("%s: want vote.sync.{all,any,uni}.pred or vote.sync.ballot.b32 with d, a, membermask", s.op)
		return
	}
	in.ops[0] = d.dst(s.args[0])
	in.ops[1] = d.src(s.args[1], tPred)
	in.ops[2] = d.src(s.args[2], tB32)
	in.ctl, in.aux2 = ctlWarp, 3
	in.fn = func(w *warp, in *inst, m uint32) error {
		members := m & uint32(w.get(&in.ops[2], bits.TrailingZeros32(m)))
		var ballot uint32
		for mm := members; mm != 0; mm &= mm - 1 {
			l := bits.TrailingZeros32(mm)
			if w.get(&in.ops[1], l)&1 != 0 {
				ballot |= 1 << l
			}
		}
		var v uint64
		switch mode {
		case "all":
			v = b2u(ballot == members)
		case "any":
			v = b2u(ballot != 0)
		case "uni":
			v = b2u(ballot == 0 || ballot == members)
		default:
			v = uint64(ballot)
		}
		for mm := m; mm != 0; mm &= mm - 1 {
			w.regs[int(in.ops[0].r)+bits.TrailingZeros32(mm)] = v
		}
		return nil
	}
}

// decActivemask decodes activemask.b32 d: the lanes executing it together.
func decActivemask(d *decoder, s *astStmt, m *mods, in *inst) {
	d.oneType(s, m)
	if !d.want(s, 1) {
		return
	}
	in.ops[0] = d.dst(s.args[0])
	in.fn = func(w *warp, in *inst, m uint32) error {
		for mm := m; mm != 0; mm &= mm - 1 {
			w.regs[int(in.ops[0].r)+bits.TrailingZeros32(mm)] = uint64(m)
		}
		return nil
	}
}

// decRedux decodes redux.sync.op.type d, a, membermask (op: add, min, max
// on .u32/.s32; and, or, xor on .b32).
func decRedux(d *decoder, s *astStmt, m *mods, in *inst) {
	op := m.oneOf("add", "min", "max", "and", "or", "xor")
	t := d.oneType(s, m)
	if op == "" || !d.want(s, 3) {
		d.errorf("%s: want redux.sync.op.type d, a, membermask", s.op)
		return
	}
	f := atomOp(op, t)
	in.ops[0] = d.dst(s.args[0])
	in.ops[1] = d.src(s.args[1], t)
	in.ops[2] = d.src(s.args[2], tB32)
	in.ctl, in.aux2 = ctlWarp, 3
	in.fn = func(w *warp, in *inst, m uint32) error {
		members := m & uint32(w.get(&in.ops[2], bits.TrailingZeros32(m)))
		var acc uint64
		first := true
		for mm := members; mm != 0; mm &= mm - 1 {
			v := w.get(&in.ops[1], bits.TrailingZeros32(mm)) & t.mask()
			if first {
				acc, first = v, false
				continue
			}
			acc = f(acc, v, 0) & t.mask()
		}
		for mm := m; mm != 0; mm &= mm - 1 {
			w.regs[int(in.ops[0].r)+bits.TrailingZeros32(mm)] = acc
		}
		return nil
	}
}

// decMatch decodes match.any.sync.type d, a, membermask and
// match.all.sync.type d[|p], a, membermask.
func decMatch(d *decoder, s *astStmt, m *mods, in *inst) {
	mode := m.oneOf("any", "all")
	t := d.oneType(s, m)
	if mode == "" || (t != tB32 && t != tB64) || !d.want(s, 3) {
		d.errorf("%s: want match.{any,all}.sync.{b32,b64} d, a, membermask", s.op)
		return
	}
	in.ops[0] = d.dstPair(s.args[0])
	in.ops[1] = d.src(s.args[1], t)
	in.ops[2] = d.src(s.args[2], tB32)
	in.ctl, in.aux2 = ctlWarp, 3
	in.fn = func(w *warp, in *inst, m uint32) error {
		members := m & uint32(w.get(&in.ops[2], bits.TrailingZeros32(m)))
		for mm := m; mm != 0; mm &= mm - 1 {
			l := bits.TrailingZeros32(mm)
			v := w.get(&in.ops[1], l) & t.mask()
			var same uint32
			for nn := members; nn != 0; nn &= nn - 1 {
				k := bits.TrailingZeros32(nn)
				if w.get(&in.ops[1], k)&t.mask() == v {
					same |= 1 << k
				}
			}
			var r uint64
			all := same == members
			if mode == "any" {
				r = uint64(same)
			} else if all {
				r = uint64(members)
			}
			w.regs[int(in.ops[0].r)+l] = r
			if p := in.ops[0].r2; p >= 0 {
				w.regs[int(p)+l] = b2u(all)
			}
		}
		return nil
	}
}

// decElect decodes elect.sync d|p, membermask (PTX ISA §9.7.13.14,
// sm_90): of the lanes of membermask executing it, one is the leader;
// every executing lane gets its lane id in d and p says whether it is
// that lane. The ISA leaves the choice to the hardware; emu elects the
// lowest lane, as GPUs do. d may be the sink _, p may be absent.
func decElect(d *decoder, s *astStmt, m *mods, in *inst) {
	if !d.want(s, 2) {
		return
	}
	in.ops[0] = d.dstPair(s.args[0])
	in.ops[1] = d.src(s.args[1], tB32)
	in.ctl, in.aux2 = ctlWarp, 2
	in.fn = func(w *warp, in *inst, m uint32) error {
		members := m & uint32(w.get(&in.ops[1], bits.TrailingZeros32(m)))
		leader := bits.TrailingZeros32(members) // 32: none (no lane is told it leads)
		for mm := m; mm != 0; mm &= mm - 1 {
			l := bits.TrailingZeros32(mm)
			w.regs[int(in.ops[0].r)+l] = uint64(leader) & 31
			if p := in.ops[0].r2; p >= 0 {
				w.regs[int(p)+l] = b2u(l == leader)
			}
		}
		return nil
	}
}
