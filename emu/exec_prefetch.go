package emu

// Cache prefetches (PTX ISA §9.7.9.15 "prefetch, prefetchu"):
//
//	prefetch{.global,.local}.{L1,L2}  [a]
//	prefetch.global.L2::evict_{last,normal} [a]
//	prefetchu.L1 [a]
//	prefetch{.const,.param}.tensormap [a]
//	cp.async.bulk.prefetch.L2.global [a], size   (§9.7.9.25.4, sm_90)
//
// emu has no caches, so a prefetch executes as nothing: it reads no
// memory and never faults on where its address points (kern's compiler
// predicates its prefetches on the index being in range anyway,
// gpu/prefetch.go). Only a bulk prefetch whose address is not 16-byte
// aligned or whose size is not a multiple of 16 faults, which the ISA
// forbids (the compiler rounds both, compiler/lower_prefetch_bulk.go).
// The decoder checks the form and that the address names a declared
// register or symbol, so a malformed prefetch from the compiler is a load
// error rather than an instruction skipped in silence. The profiler
// counts a prefetch as an issued instruction and nothing else.

import "math/bits"

func decPrefetch(d *decoder, s *astStmt, m *mods, in *inst) {
	if !d.want(s, 1) {
		return
	}
	switch {
	case m.base == "prefetchu":
		if m.hasSp || !m.word("L1") {
			d.errorf("%s: want prefetchu.L1 [a] (a generic address)", s.op)
			return
		}
	case m.word("tensormap"):
		if m.hasSp && m.space != spConst && m.space != spParam {
			d.errorf("%s: a tensor map is prefetched from .const, .param or a generic address", s.op)
			return
		}
	default:
		if m.hasSp && m.space != spGlobal && m.space != spLocal {
			d.errorf("%s: prefetch takes a .global, .local or generic address", s.op)
			return
		}
		// parseMods dropped .L2::evict_* as a hint: it names the level.
		if m.oneOf("L1", "L2") == "" && !containsWord(s.op, "L2::evict_last") && !containsWord(s.op, "L2::evict_normal") {
			d.errorf("%s: want the cache level .L1 or .L2", s.op)
			return
		}
	}
	in.ops[0] = d.addr(s.args[0], m.space)
	in.fn = func(w *warp, in *inst, m uint32) error {
		if po, ok := w.obs.(PrefetchObserver); ok {
			w.observePrefetch(po, in, m, func(int) int { return 128 })
		}
		return nil
	}
}

// observePrefetch reports a prefetch's global lines to po, size(lane)
// bytes from each active lane's address; addresses outside global memory
// are left out.
func (w *warp) observePrefetch(po PrefetchObserver, in *inst, m uint32, size func(lane int) int) {
	a := w.observed(in, AccessPrefetch)
	a.Space = Global
	for mm := m; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm)
		rs, addr := resolve(in.space, w.addrOf(&in.ops[0], l))
		if rs != spGlobal {
			continue
		}
		a.Mask |= 1 << l
		a.Addr[l] = addr
		a.Size = max(a.Size, size(l))
	}
	if a.Mask != 0 {
		po.Prefetch(a)
	}
}

// decBulkPrefetch decodes cp.async.bulk.prefetch.L2.global [a], size
// (and its .L2::cache_hint form with a cache-policy operand, ignored).
func decBulkPrefetch(d *decoder, s *astStmt, in *inst) {
	hint := containsWord(s.op, "L2::cache_hint")
	if !containsWord(s.op, "L2") || !containsWord(s.op, "global") || len(s.args) != 2 && !(hint && len(s.args) == 3) {
		d.errorf("%s: want cp.async.bulk.prefetch.L2.global [a], size", s.op)
		return
	}
	in.ops[0] = d.addr(s.args[0], spGlobal)
	in.ops[1] = d.src(s.args[1], tU32)
	in.fn = func(w *warp, in *inst, m uint32) error {
		for mm := m; mm != 0; mm &= mm - 1 {
			l := bits.TrailingZeros32(mm)
			a, n := w.addrOf(&in.ops[0], l), w.get(&in.ops[1], l)
			if a%16 != 0 || n%16 != 0 {
				return faultf(l, ErrMisaligned, "cp.async.bulk.prefetch of %d bytes at %#x: the address must be 16-byte aligned and the size a multiple of 16", n, a)
			}
		}
		if po, ok := w.obs.(PrefetchObserver); ok {
			w.observePrefetch(po, in, m, func(l int) int { return int(w.get(&in.ops[1], l)) })
		}
		return nil
	}
}
