package emu

// mbarriers (PTX ISA §9.7.13.15): mbarrier.init, .inval, .arrive
// (with .expect_tx), .complete_tx, .expect_tx, and .test_wait/.try_wait
// with .parity, all on .shared / .shared::cta.
//
// The 64-bit object lives in the block's shared memory with the encoding
// native mode uses (gpu/native_mbarrier.go, mbarrierState):
//
//	bits  0..20  arrivals pending in the current phase
//	bits 21..41  expected arrivals per phase
//	bits 42..62  pending transaction bytes, signed 21-bit
//	bit  63      parity of the current phase
//
// A block runs on one goroutine, so updates need no lock. A try_wait
// that finds its phase incomplete ends the warp's turn (block.go) so that
// the warps that will arrive can run; a block whose every live warp only
// spins on incomplete phases, with no mbarrier changing, is a deadlock.

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

const (
	mbarBits = 21
	mbarMask = 1<<mbarBits - 1
	mbarMax  = 1<<20 - 1
)

type mbar uint64

func (s mbar) pending() int  { return int(s & mbarMask) }
func (s mbar) expected() int { return int(s >> mbarBits & mbarMask) }
func (s mbar) parity() int   { return int(s >> 63) }
func (s mbar) tx() int {
	v := int(s >> (2 * mbarBits) & mbarMask)
	if v >= 1<<(mbarBits-1) {
		v -= 1 << mbarBits
	}
	return v
}

func mkMbar(pending, expected, tx, parity int) mbar {
	return mbar(uint64(pending)&mbarMask | (uint64(expected)&mbarMask)<<mbarBits |
		(uint64(tx)&mbarMask)<<(2*mbarBits) | uint64(parity&1)<<63)
}

// step counts arrivals and adds txAdd to the transaction count (negative:
// bytes delivered), completing the phase when nothing is pending.
func (s mbar) step(arrivals, txAdd int) (mbar, error) {
	if s.expected() == 0 {
		return s, fmt.Errorf("mbarrier is not initialised (mbarrier.init)")
	}
	p, tx := s.pending()-arrivals, s.tx()+txAdd
	if p < 0 {
		return s, fmt.Errorf("more arrivals than the %d the mbarrier expects in its phase", s.expected())
	}
	if tx > mbarMax || tx < -mbarMax {
		return s, fmt.Errorf("mbarrier transaction count %d is out of range", tx)
	}
	if p == 0 && tx == 0 {
		return mkMbar(s.expected(), s.expected(), 0, s.parity()^1), nil
	}
	return mkMbar(p, s.expected(), tx, s.parity()), nil
}

// mbarOp is what one mbarrier instruction does to the object.
type mbarOp uint8

const (
	mbInit mbarOp = iota
	mbInval
	mbArrive
	mbArriveTx
	mbExpectTx
	mbCompleteTx
	mbWait
)

// decMbarrier decodes the mbarrier family.
func decMbarrier(d *decoder, s *astStmt, m *mods, in *inst) {
	if m.hasSp && m.space != spShared {
		d.errorf("%s: emu supports mbarriers in .shared::cta only", s.op)
		m.words = nil
		return
	}
	var op mbarOp
	parity := false
	switch {
	case m.word("init"):
		op = mbInit
	case m.word("inval"):
		op = mbInval
	case m.word("arrive"):
		op = mbArrive
		if m.word("expect_tx") {
			op = mbArriveTx
		}
	case m.word("expect_tx"):
		op = mbExpectTx
	case m.word("complete_tx"):
		op = mbCompleteTx
	case m.word("try_wait"), m.word("test_wait"):
		op = mbWait
		parity = m.word("parity")
	default:
		d.errorf("%s: unsupported mbarrier operation", s.op)
		m.words = nil
		return
	}
	m.word("shared::cta")
	m.types = nil
	// Operand layout: ops[0] destination (arrive, wait), ops[1] the
	// address, ops[2] the count / byte count / parity / state.
	in.ops[0] = opnd{kind: oReg, r: srSink * 32, r2: -1}
	args := s.args
	switch op {
	case mbArrive, mbArriveTx, mbWait:
		if len(args) < 2 {
			d.errorf("%s: want dst, [addr]{, operand}", s.op)
			return
		}
		in.ops[0] = d.dst(args[0])
		args = args[1:]
	}
	want := 2
	if op == mbInval || op == mbArrive {
		want = 1
	}
	if op == mbWait && len(args) == 3 {
		args = args[:2] // suspendTimeHint: a hint
	}
	if len(args) != want {
		d.errorf("%s: wrong number of operands", s.op)
		return
	}
	in.ops[1] = d.addr(args[0], spShared)
	in.space = spShared
	if want == 2 {
		t := tU32
		if op == mbWait && !parity {
			t = tU64
		}
		in.ops[2] = d.src(args[1], t)
	}
	in.fn = func(w *warp, in *inst, mask uint32) error {
		yield := false
		// racecheck's happens-before (race_mbarrier.go): arrivals release,
		// a successful wait acquires the completed phase.
		var hb *hbState
		if w.b.race != nil {
			hb = w.b.race.hb
		}
		released := false
		if hb != nil {
			defer func() {
				if released {
					hb.tick(w.id)
				}
			}()
		}
		for mm := mask; mm != 0; mm &= mm - 1 {
			l := bits.TrailingZeros32(mm)
			buf, err := w.access(spShared, w.addrOf(&in.ops[1], l), 8, 8, l, AccessAtomic)
			if err != nil {
				return err
			}
			s := mbar(binary.LittleEndian.Uint64(buf))
			n := int(w.get(&in.ops[2], l) & 0xffffffff)
			var next mbar
			switch op {
			case mbInit:
				if n < 1 || n > mbarMax {
					return faultf(l, ErrMbarrier, "mbarrier.init count %d is not in 1..%d", n, mbarMax)
				}
				next = mkMbar(n, n, 0, 0)
			case mbInval:
				next = 0
			case mbArrive:
				next, err = s.step(1, 0)
			case mbArriveTx:
				next, err = s.step(1, n)
			case mbExpectTx:
				next, err = s.step(0, n)
			case mbCompleteTx:
				next, err = s.step(0, -n)
			case mbWait:
				var done bool
				if parity {
					done = s.parity() != n&1
				} else { // the state token of mbarrier.arrive: its phase
					done = s.parity() != mbar(w.get(&in.ops[2], l)).parity()
				}
				if s.expected() == 0 {
					return faultf(l, ErrMbarrier, "mbarrier.try_wait on an mbarrier that is not initialised")
				}
				w.regs[int(in.ops[0].r)+l] = b2u(done)
				yield = yield || !done
				if done && hb != nil {
					ph := n & 1 // the completed phase's parity
					if !parity {
						ph = mbar(w.get(&in.ops[2], l)).parity()
					}
					hb.acquire(w.id, w.addrOf(&in.ops[1], l), ph)
				}
				continue
			}
			if err != nil {
				return faultf(l, ErrMbarrier, "%s: %v", in.text, err)
			}
			binary.LittleEndian.PutUint64(buf, uint64(next))
			w.b.mbarGen++
			if hb != nil {
				off := w.addrOf(&in.ops[1], l)
				switch op {
				case mbInit:
					hb.initBar(off)
				case mbArrive, mbArriveTx, mbCompleteTx:
					hb.release(w.id, off)
					released = true
				}
				if op != mbInit && op != mbInval && next.parity() != s.parity() {
					hb.completed(off, s.parity())
				}
			}
			if op == mbArrive || op == mbArriveTx {
				w.regs[int(in.ops[0].r)+l] = uint64(s)
			}
		}
		if w.obs != nil {
			w.observe(in, &in.ops[1], mask, AccessAtomic, 8)
		}
		w.spin = yield
		return nil
	}
}
