package emu

// setmaxnreg (PTX ISA §9.7.17.1, sm_90a): a warpgroup releases registers
// (.dec) or asks for more (.inc) so that producer warps of a
// warp-specialised kernel hand theirs to the consumers. The emulator has
// no register file to resize, so the instruction only checks what the
// hardware requires: a count in 24..256 that is a multiple of 8, and the
// whole warp executing it together (.sync.aligned; the warpgroup rule, all
// four warps executing the same form, is the kernel's to keep).

import "math/bits"

func decSetmaxnreg(d *decoder, s *astStmt, m *mods, in *inst) {
	dir := m.oneOf("inc", "dec")
	m.word("sync")
	m.word("aligned")
	if dir == "" || len(m.words) > 0 {
		d.errorf("%s: want setmaxnreg.inc or .dec .sync.aligned.u32", s.op)
		m.words = nil
		return
	}
	if t := d.oneType(s, m); t != tU32 {
		d.errorf("%s: want type .u32", s.op)
	}
	m.types = nil
	if !d.want(s, 1) {
		return
	}
	in.ops[0] = d.src(s.args[0], tU32)
	if in.ops[0].kind != oImm {
		d.errorf("%s: the register count must be a constant", s.op)
		return
	}
	if n := in.ops[0].imm; n < 24 || n > 256 || n%8 != 0 {
		d.errorf("%s: register count %d is not a multiple of 8 in 24..256", s.op, n)
		return
	}
	in.ctl = ctlWarp
	in.fn = func(w *warp, in *inst, mask uint32) error {
		if mask != 0xffffffff || w.valid&^w.exited != 0xffffffff {
			return faultf(bits.TrailingZeros32(^mask), ErrTrap, "setmaxnreg needs all 32 lanes of the warp (.sync.aligned), have %#08x", mask)
		}
		return nil
	}
}
