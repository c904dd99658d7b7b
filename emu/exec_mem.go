package emu

// Loads, stores and address conversion (PTX ISA §9.7.9.8 ld, §9.7.9.10
// st, §9.7.9.18 cvta) and the state-space resolution every memory
// instruction uses (PTX ISA §5.1, §6.4.1 generic addressing).

import (
	"fmt"
	"math/bits"
)

// addrOf computes the address operand o for lane l.
func (w *warp) addrOf(o *opnd, l int) uint64 {
	switch o.kind {
	case oReg:
		return w.regs[int(o.r)+l] + o.imm
	case oGsym:
		return w.l.gaddr[o.sym] + o.imm
	}
	return o.imm
}

// resolve maps an address in state space sp to the space it really lies
// in: generic addresses in the shared or local window become offsets in
// those spaces, the rest are global.
func resolve(sp space, addr uint64) (space, uint64) {
	switch sp {
	case spGeneric:
		switch {
		case addr-sharedWindow < windowSize:
			return spShared, addr - sharedWindow
		case addr-localWindow < windowSize:
			return spLocal, addr - localWindow
		case addr-paramWindow < windowSize:
			return spParam, addr - paramWindow
		}
		return spGlobal, addr
	case spConst:
		return spGlobal, addr
	}
	return sp, addr
}

// access returns the n bytes at addr of space sp for lane l, checking
// bounds and alignment (align is the required alignment, a power of two).
// With a sanitizer on, faults become findings (sanitize.go).
func (w *warp) access(sp space, addr uint64, n, align, l int, kind AccessKind) ([]byte, error) {
	buf, err := w.accessRaw(sp, addr, n, align, l, kind)
	if w.san == nil {
		return buf, err
	}
	return w.sanitize(sp, addr, n, l, kind, buf, err)
}

func (w *warp) accessRaw(sp space, addr uint64, n, align, l int, kind AccessKind) ([]byte, error) {
	rs, a := resolve(sp, addr)
	if a&uint64(align-1) != 0 {
		return nil, faultf(l, ErrMisaligned, "%d-byte %s at %s address %#x is not %d-byte aligned", n, kind, sp, addr, align)
	}
	switch rs {
	case spGlobal:
		c := w.lookup(a, n)
		if c == nil {
			return nil, faultf(l, ErrOutOfBounds, "%d-byte %s of global memory: %s", n, kind, w.l.dev.describe(a, n))
		}
		off := a - c.base
		return c.data[off : off+uint64(n) : off+uint64(n)], nil
	case spShared:
		sh := w.b.shared
		if a >= uint64(len(sh)) || a+uint64(n) > uint64(len(sh)) {
			return nil, faultf(l, ErrOutOfBounds, "%d-byte %s at shared offset %#x is outside the block's %d bytes of shared memory", n, kind, a, len(sh))
		}
		return sh[a : a+uint64(n) : a+uint64(n)], nil
	case spLocal:
		size := uint64(w.k.localSize)
		if a >= size || a+uint64(n) > size {
			return nil, faultf(l, ErrOutOfBounds, "%d-byte %s at local offset %#x is outside the thread's %d bytes of local memory", n, kind, a, w.k.info.LocalBytes)
		}
		base := uint64(l) * size
		return w.local[base+a : base+a+uint64(n) : base+a+uint64(n)], nil
	case spParam:
		p := w.l.params
		if kind != AccessLoad {
			return nil, faultf(l, ErrReadOnly, "%s to kernel parameter space", kind)
		}
		if a >= uint64(len(p)) || a+uint64(n) > uint64(len(p)) {
			return nil, faultf(l, ErrOutOfBounds, "%d-byte load at parameter offset %#x is outside the %d bytes of parameters", n, a, len(p))
		}
		return p[a : a+uint64(n) : a+uint64(n)], nil
	}
	return nil, faultf(l, ErrOutOfBounds, "unsupported state space %s", rs)
}

// lookup finds the allocation holding [a, a+n), trying the warp's few
// most recently used allocations first: a kernel streams through a handful
// of buffers, so most lookups never reach the binary search.
func (w *warp) lookup(a uint64, n int) *alloc {
	for i, c := range w.cache {
		if c != nil && a >= c.base && a+uint64(n) <= c.end() {
			if i > 0 {
				copy(w.cache[1:i+1], w.cache[:i])
				w.cache[0] = c
			}
			return c
		}
	}
	c := find(w.l.allocs, a, n)
	if c != nil {
		copy(w.cache[1:], w.cache[:3])
		w.cache[0] = c
	}
	return c
}

// observe reports a warp's memory access to the observer.
func (w *warp) observe(in *inst, o *opnd, m uint32, kind AccessKind, size int) {
	w.observeIn(in, in.space, o, m, kind, size)
}

// observed is an Access of kind by the warp at in, its addresses to fill.
func (w *warp) observed(in *inst, kind AccessKind) *Access {
	a := &Access{Kernel: w.k.info.Name, Block: w.b.idx, Warp: w.id, PC: int(in.pc), Line: int(in.line), Instr: in.text, Kind: kind}
	if in.loc.file != 0 {
		a.File, a.GoLine = w.k.files[in.loc.file], in.loc.line
	}
	return a
}

// observeIn is observe with the operand's state space given (cp.async has
// two: its destination's, in.space, and global for its source).
func (w *warp) observeIn(in *inst, sp space, o *opnd, m uint32, kind AccessKind, size int) {
	a := w.observed(in, kind)
	a.Size, a.Mask = size, m
	for mm := m; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm)
		rs, addr := resolve(sp, w.addrOf(o, l))
		a.Space = Space([...]Space{spGlobal: Global, spShared: Shared, spLocal: Local, spParam: ParamSpace}[rs])
		a.Addr[l] = addr
	}
	w.obs.Access(a)
}

// decLd decodes ld{.space}{.cop}{.vec}.type d, [a] (also ldu and ld.nc).
// Sub-word loads into wider registers zero- or sign-extend by type.
func decLd(d *decoder, s *astStmt, m *mods, in *inst) {
	t := d.oneType(s, m)
	if !d.want(s, 2) {
		return
	}
	in.t, in.space, in.vec = t, m.space, uint8(m.vec)
	if t == tB128 || t == tPred {
		d.errorf("%s: type .%s is not supported", s.op, t)
		return
	}
	if m.vec > 1 {
		in.ops[0] = d.vecRegs(s.args[0], m.vec, t, false)
	} else {
		in.ops[0] = d.dst(s.args[0])
	}
	in.ops[1] = d.addr(s.args[1], m.space)
	in.space = d.paramSpace(in.space)
	in.fn = execLd
}

func execLd(w *warp, in *inst, m uint32) error {
	if in.vec == 1 && w.obs == nil && w.san == nil {
		switch {
		case in.ops[1].kind == oImm && in.space == spParam:
			return w.ldUniform(in, m)
		case (in.space == spGlobal || in.space == spGeneric) && !in.t.isSigned() && w.ldGlobalFast(in, m):
			return nil
		}
	}
	t := in.t
	size := t.size()
	nv := int(in.vec)
	total := size * nv
	dst, src := &in.ops[0], &in.ops[1]
	for mm := m; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm)
		buf, err := w.access(in.space, w.addrOf(src, l), total, total, l, AccessLoad)
		if err != nil {
			return err
		}
		if nv == 1 {
			w.regs[int(dst.r)+l] = t.ext(loadLE(buf, size))
			continue
		}
		for i, r := range dst.vec {
			w.regs[int(r)+l] = t.ext(loadLE(buf[i*size:], size))
		}
	}
	if w.obs != nil {
		w.observe(in, src, m, AccessLoad, total)
	}
	return nil
}

// ldGlobalFast loads a scalar from global memory for every lane of m when
// all addresses are aligned and inside the warp's cached allocation (the
// common coalesced case); it reports false, having done nothing, otherwise.
func (w *warp) ldGlobalFast(in *inst, m uint32) bool {
	size := uint64(in.t.size())
	src, dst := &in.ops[1], in.ops[0].r
	first := w.addrOf(src, bits.TrailingZeros32(m))
	if first-sharedWindow < windowSize || first-localWindow < windowSize || first-paramWindow < windowSize {
		return false // a generic address of shared, local or param memory
	}
	c := w.lookup(first, int(size))
	if c == nil {
		return false
	}
	var offs [32]uint64
	for mm := m; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm)
		a := w.addrOf(src, l)
		off := a - c.base
		if a < c.base || off+size > uint64(len(c.data)) || a&(size-1) != 0 {
			return false
		}
		offs[l] = off
	}
	for mm := m; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm)
		w.regs[int(dst)+l] = loadLE(c.data[offs[l]:], int(size))
	}
	return true
}

// stGlobalFast is ldGlobalFast for scalar stores.
func (w *warp) stGlobalFast(in *inst, m uint32) bool {
	size := uint64(in.t.size())
	dst, src := &in.ops[0], &in.ops[1]
	first := w.addrOf(dst, bits.TrailingZeros32(m))
	if first-sharedWindow < windowSize || first-localWindow < windowSize {
		return false
	}
	c := w.lookup(first, int(size))
	if c == nil {
		return false
	}
	var offs [32]uint64
	for mm := m; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm)
		a := w.addrOf(dst, l)
		off := a - c.base
		if a < c.base || off+size > uint64(len(c.data)) || a&(size-1) != 0 {
			return false
		}
		offs[l] = off
	}
	for mm := m; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm)
		storeLE(c.data[offs[l]:], int(size), w.get(src, l))
	}
	return true
}

// ldUniform loads a kernel parameter, the same for every lane: one
// bounds check, then a broadcast.
func (w *warp) ldUniform(in *inst, m uint32) error {
	t := in.t
	l := bits.TrailingZeros32(m)
	buf, err := w.access(in.space, in.ops[1].imm, t.size(), t.size(), l, AccessLoad)
	if err != nil {
		return err
	}
	v := t.ext(loadLE(buf, t.size()))
	d := in.ops[0].r
	for mm := m; mm != 0; mm &= mm - 1 {
		w.regs[int(d)+bits.TrailingZeros32(mm)] = v
	}
	return nil
}

// decSt decodes st{.space}{.cop}{.vec}.type [a], b; stores truncate the
// register to the type's width.
func decSt(d *decoder, s *astStmt, m *mods, in *inst) {
	t := d.oneType(s, m)
	if !d.want(s, 2) {
		return
	}
	in.t, in.space, in.vec = t, m.space, uint8(m.vec)
	if t == tB128 || t == tPred {
		d.errorf("%s: type .%s is not supported", s.op, t)
		return
	}
	in.ops[0] = d.addr(s.args[0], m.space)
	in.space = d.paramSpace(in.space)
	if m.vec > 1 {
		in.ops[1] = d.vecRegs(s.args[1], m.vec, t, true)
	} else {
		in.ops[1] = d.src(s.args[1], t)
	}
	in.fn = execSt
}

// storeValue puts the bytes lane l of st stores in w.pending, for
// racecheck to tell a write of the value memory already holds (sanitize.go).
func (w *warp) storeValue(in *inst, l, total int) {
	size := in.t.size()
	src := &in.ops[1]
	if len(w.pendBuf) < total {
		w.pendBuf = make([]byte, max(total, 64))
	}
	w.pending = w.pendBuf[:total:total]
	if in.vec == 1 {
		storeLE(w.pending, size, w.get(src, l))
		return
	}
	for i, r := range src.vec {
		v := uint64(0)
		if r >= 0 {
			v = w.regs[int(r)+l]
		} else {
			v = src.vimm[i]
		}
		storeLE(w.pending[i*size:], size, v)
	}
}

func execSt(w *warp, in *inst, m uint32) error {
	if w.l.coop {
		w.l.writes.Add(1) // cooperative.go: a write may release a grid spin
	}
	if in.vec == 1 && (in.space == spGlobal || in.space == spGeneric) && w.obs == nil && w.san == nil && w.stGlobalFast(in, m) {
		return nil
	}
	size := in.t.size()
	nv := int(in.vec)
	total := size * nv
	dst, src := &in.ops[0], &in.ops[1]
	for mm := m; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm)
		if w.san != nil && w.san.race {
			w.storeValue(in, l, total)
		}
		buf, err := w.access(in.space, w.addrOf(dst, l), total, total, l, AccessStore)
		w.pending = nil
		if err != nil {
			return err
		}
		if nv == 1 {
			storeLE(buf, size, w.get(src, l))
			continue
		}
		for i, r := range src.vec {
			var v uint64
			if r >= 0 {
				v = w.regs[int(r)+l]
			} else {
				v = src.vimm[i]
			}
			storeLE(buf[i*size:], size, v)
		}
	}
	if w.obs != nil {
		w.observe(in, dst, m, AccessStore, total)
	}
	return nil
}

// decCvta decodes cvta.space.size d, a (to generic) and cvta.to.space
// (from generic). Global and const addresses are the same in both. A
// kernel parameter has a generic address too (.param, PTX ISA 7.7+: how
// a __grid_constant__ parameter such as a tensor map is passed by
// address), in a read-only window.
func decCvta(d *decoder, s *astStmt, m *mods, in *inst) {
	to := m.word("to")
	t := d.oneType(s, m)
	if !d.want(s, 2) {
		return
	}
	if !m.hasSp {
		d.errorf("%s: want .global, .shared, .local, .const or .param", s.op)
		return
	}
	in.ops[0] = d.dst(s.args[0])
	in.ops[1] = d.src(s.args[1], t)
	var base uint64
	switch m.space {
	case spShared:
		base = sharedWindow
	case spLocal:
		base = localWindow
	case spParam:
		base = paramWindow
	}
	mask := t.mask()
	if to {
		in.fn = unop(func(a uint64) uint64 { return (a - base) & mask })
	} else {
		in.fn = unop(func(a uint64) uint64 { return (a + base) & mask })
	}
}

// decMov decodes mov: register, immediate, special register or symbol
// address sources, and the vector forms that pack {a, b} into one wider
// register or unpack it (PTX ISA §9.7.9.1, §9.7.9.2).
func decMov(d *decoder, s *astStmt, m *mods, in *inst) {
	t := d.oneType(s, m)
	in.t = t
	if !d.want(s, 2) {
		return
	}
	dst, src := s.args[0], s.args[1]
	mask := t.mask()
	if t == tPred {
		mask = 1
	}
	switch {
	case src.kind == aVec: // pack
		n := len(src.elems)
		if n != 2 && n != 4 || t.size()%n != 0 {
			d.errorf("%s: cannot pack %d values into .%s", s.op, n, t)
			return
		}
		in.ops[0] = d.dst(dst)
		in.ops[1] = d.vecRegs(src, n, tNone, false)
		eb := uint(t.bits() / n)
		em := uint64(1)<<eb - 1
		in.fn = func(w *warp, in *inst, m uint32) error {
			for mm := m; mm != 0; mm &= mm - 1 {
				l := bits.TrailingZeros32(mm)
				var v uint64
				for i, r := range in.ops[1].vec {
					v |= (w.regs[int(r)+l] & em) << (eb * uint(i))
				}
				w.regs[int(in.ops[0].r)+l] = v
			}
			return nil
		}
	case dst.kind == aVec: // unpack
		n := len(dst.elems)
		if n != 2 && n != 4 || t.size()%n != 0 {
			d.errorf("%s: cannot unpack .%s into %d values", s.op, t, n)
			return
		}
		in.ops[0] = d.vecRegs(dst, n, tNone, false)
		in.ops[1] = d.src(src, t)
		eb := uint(t.bits() / n)
		em := uint64(1)<<eb - 1
		in.fn = func(w *warp, in *inst, m uint32) error {
			for mm := m; mm != 0; mm &= mm - 1 {
				l := bits.TrailingZeros32(mm)
				v := w.get(&in.ops[1], l)
				for i, r := range in.ops[0].vec {
					w.regs[int(r)+l] = v >> (eb * uint(i)) & em
				}
			}
			return nil
		}
	default:
		in.ops[0] = d.dst(dst)
		in.ops[1] = d.src(src, t)
		in.fn = unop(func(a uint64) uint64 { return a & mask })
	}
}

var _ = fmt.Sprint
