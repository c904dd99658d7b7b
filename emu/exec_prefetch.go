package emu

// Cache prefetches (PTX ISA §9.7.9.15 "prefetch, prefetchu"):
//
//	prefetch{.global,.local}.{L1,L2}  [a]
//	prefetch.global.L2::evict_{last,normal} [a]
//	prefetchu.L1 [a]
//	prefetch{.const,.param}.tensormap [a]
//
// emu has no caches, so a prefetch executes as nothing: it reads no
// memory and never faults, whatever the address (kern's compiler
// predicates its prefetches on the index being in range anyway,
// gpu/prefetch.go).
// The decoder still checks the form and that the address names a declared
// register or symbol, so a malformed prefetch from the compiler is a load
// error rather than an instruction skipped in silence. The profiler
// counts it as an issued instruction and nothing else.

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
	in.fn = func(*warp, *inst, uint32) error { return nil }
}
