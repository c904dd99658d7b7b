package emu

// Extended-precision integer arithmetic (PTX ISA §9.7.2): add.cc, addc,
// sub.cc, subc, mad.cc and madc. The condition-code carry flag CC.CF is a
// per-thread bit that .cc instructions write and the -c instructions
// read; emu keeps it in the special register slot srCarry, one word per
// lane, zero when a block starts. clang and nvcc emit these for __int128
// and multi-word integer code.

import "math/bits"

// decCarry decodes the carry forms; op is "add", "sub" or "mad" and
// carryIn says whether the instruction adds CC.CF (addc, subc, madc).
func decCarry(d *decoder, s *astStmt, m *mods, in *inst, op string, carryIn bool) {
	carryOut := m.word("cc")
	if !carryIn && !carryOut {
		d.errorf("%s: want .cc", s.op)
		return
	}
	hi := m.word("hi")
	lo := m.word("lo")
	if op == "mad" && hi == lo {
		d.errorf("%s: want .lo or .hi", s.op)
		return
	}
	if op != "mad" && (hi || lo) {
		d.errorf("%s: .lo and .hi apply to mad", s.op)
		return
	}
	t := d.oneType(s, m)
	in.t = t
	switch t {
	case tU32, tS32, tU64, tS64:
	default:
		d.errorf("%s: want .u32, .s32, .u64 or .s64", s.op)
		return
	}
	n := 3
	if op == "mad" {
		n = 4
	}
	if !d.want(s, n) {
		return
	}
	in.ops[0] = d.dst(s.args[0])
	for i := 1; i < n; i++ {
		in.ops[i] = d.src(s.args[i], t)
	}
	w64 := t.size() == 8
	signed := t.isSigned()
	mask := t.mask()
	sx := t.ext
	nb := uint(t.bits())
	in.fn = func(w *warp, in *inst, m uint32) error {
		for mm := m; mm != 0; mm &= mm - 1 {
			l := bits.TrailingZeros32(mm)
			cf := &w.regs[srCarry*32+l]
			var cin uint64
			if carryIn {
				cin = *cf & 1
			}
			a, b := w.get(&in.ops[1], l)&mask, w.get(&in.ops[2], l)&mask
			if op == "mad" {
				// The product's low or high half is added to c (§9.7.2.5).
				p := (a * b) & mask
				if hi {
					p = mulHi(sx(a), sx(b), nb, signed) & mask
				}
				a, b = p, w.get(&in.ops[3], l)&mask
			}
			var r, cout uint64
			switch {
			case op == "sub" && w64:
				r, cout = bits.Sub64(a, b, cin)
			case op == "sub":
				r = (a - b - cin) & mask
				cout = b2u(a < b+cin)
			case w64:
				r, cout = bits.Add64(a, b, cin)
			default:
				s := a + b + cin
				r, cout = s&mask, s>>32
			}
			w.regs[int(in.ops[0].r)+l] = r
			if carryOut {
				*cf = cout
			}
		}
		return nil
	}
}

func decAddc(d *decoder, s *astStmt, m *mods, in *inst) { decCarry(d, s, m, in, "add", true) }
func decSubc(d *decoder, s *astStmt, m *mods, in *inst) { decCarry(d, s, m, in, "sub", true) }
func decMadc(d *decoder, s *astStmt, m *mods, in *inst) { decCarry(d, s, m, in, "mad", true) }
