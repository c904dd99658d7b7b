package compiler

// Integer intervals for the range analysis (ranges.go). An interval holds
// the mathematical value of an integer, not its bits: [lo, hi] with
// lo ≤ hi, both int64. A value whose type can hold more than int64 does
// (uint, uint64, uintptr) and that is not known to be below 2⁶³ is
// unknown (ok false). Every operation detects overflow of int64 and
// wrap-around of the result's Go type, and answers the type's whole range
// (or unknown) when either may happen, so the intervals are sound for
// Go's wrapping arithmetic.

import (
	"math"
	"math/bits"

	"github.com/gokern/kern/compiler/ir"
)

type interval struct {
	lo, hi int64
	ok     bool
}

var unknown = interval{}

func span(lo, hi int64) interval { return interval{lo, hi, lo <= hi} }
func exactly(c int64) interval   { return interval{c, c, true} }

// typeRange is every value of t (an integer scalar type).
func typeRange(t ir.Type) interval {
	if t.IsFloat() || t == ir.Pred || t == ir.Invalid {
		return unknown
	}
	n := t.Bits()
	if t.IsSigned() {
		if n >= 64 {
			return span(math.MinInt64, math.MaxInt64)
		}
		return span(-1<<(n-1), 1<<(n-1)-1)
	}
	if n >= 64 {
		return unknown
	}
	return span(0, 1<<n-1)
}

// fit returns v when every value in it is representable in t, else the
// whole of t: an operation whose result may wrap says nothing more.
func fit(v interval, t ir.Type) interval {
	tr := typeRange(t)
	if !v.ok {
		return tr
	}
	if tr.ok && (v.lo < tr.lo || v.hi > tr.hi) {
		return tr
	}
	if !tr.ok && v.lo < 0 { // uint64: a negative mathematical value wrapped
		return unknown
	}
	return v
}

func (v interval) meet(w interval) interval {
	if !v.ok {
		return w
	}
	if !w.ok {
		return v
	}
	lo, hi := max(v.lo, w.lo), min(v.hi, w.hi)
	if lo > hi {
		// Contradictory facts: the point is unreachable. Keep v rather
		// than invent an empty interval that later arithmetic mishandles.
		return v
	}
	return span(lo, hi)
}

func (v interval) join(w interval) interval {
	if !v.ok || !w.ok {
		return unknown
	}
	return span(min(v.lo, w.lo), max(v.hi, w.hi))
}

func (v interval) within(w interval) bool {
	return v.ok && w.ok && w.lo <= v.lo && v.hi <= w.hi
}

func add64(a, b int64) (int64, bool) {
	s := a + b
	return s, (a >= 0) == (b >= 0) && (s >= 0) != (a >= 0)
}

func mul64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(absu(a)), uint64(absu(b)))
	neg := (a < 0) != (b < 0)
	if hi != 0 || lo > 1<<63 || (lo == 1<<63 && !neg) {
		return 0, true
	}
	if neg {
		return -int64(lo), false
	}
	return int64(lo), false
}

func absu(a int64) uint64 {
	if a < 0 {
		return uint64(-a) // -MinInt64 wraps to itself, whose uint64 is 2⁶³
	}
	return uint64(a)
}

func addI(a, b interval) interval {
	if !a.ok || !b.ok {
		return unknown
	}
	lo, o1 := add64(a.lo, b.lo)
	hi, o2 := add64(a.hi, b.hi)
	if o1 || o2 {
		return unknown
	}
	return span(lo, hi)
}

func negI(a interval) interval {
	if !a.ok || a.lo == math.MinInt64 {
		return unknown
	}
	return span(-a.hi, -a.lo)
}

func subI(a, b interval) interval { return addI(a, negI(b)) }

func mulI(a, b interval) interval {
	if !a.ok || !b.ok {
		return unknown
	}
	var out interval
	for _, x := range [2]int64{a.lo, a.hi} {
		for _, y := range [2]int64{b.lo, b.hi} {
			p, o := mul64(x, y)
			if o {
				return unknown
			}
			if !out.ok {
				out = exactly(p)
			} else {
				out = out.join(exactly(p))
			}
		}
	}
	return out
}

// quoI is Go's truncating division, for positive divisors only.
func quoI(a, b interval) interval {
	if a.ok && b.ok && b.lo < 1 {
		if b.lo >= 0 && b.hi >= 1 {
			return quoI(a, span(1, b.hi)) // a divisor of 0 faults
		}
		return magnitudeOf(a)
	}
	if !a.ok || !b.ok || b.lo < 1 {
		return unknown
	}
	lo, hi := a.lo/b.hi, a.hi/b.lo
	if a.lo < 0 {
		lo = a.lo / b.lo
	}
	if a.hi < 0 {
		hi = a.hi / b.hi
	}
	return span(lo, hi)
}

// magnitudeOf bounds a / b for a divisor b of any sign: a quotient that
// exists (b ≠ 0; a zero divisor faults) is no larger in magnitude than
// the dividend (MinInt64 / −1 wraps to MinInt64, left unknown).
func magnitudeOf(a interval) interval {
	if a.lo == math.MinInt64 {
		return unknown
	}
	m := max(-a.lo, a.hi)
	return span(-m, m)
}

// remI is Go's %, whose result has the dividend's sign and a smaller
// magnitude than the divisor.
func remI(a, b interval) interval {
	if a.ok && b.ok && b.lo < 1 {
		// The dividend's sign, no larger in magnitude than it.
		return span(min(a.lo, 0), max(a.hi, 0))
	}
	if !a.ok || !b.ok || b.lo < 1 {
		return unknown
	}
	m := b.hi - 1
	lo, hi := -m, m
	if a.lo >= 0 {
		lo, hi = 0, min(a.hi, m)
	} else if a.hi <= 0 {
		lo, hi = max(a.lo, -m), 0
	}
	return span(lo, hi)
}

func andI(a, b interval) interval {
	switch {
	case a.ok && b.ok && a.lo >= 0 && b.lo >= 0:
		return span(0, min(a.hi, b.hi))
	case a.ok && a.lo >= 0:
		return span(0, a.hi)
	case b.ok && b.lo >= 0:
		return span(0, b.hi)
	}
	return unknown
}

// orI bounds x|y and x^y of non-negative operands by the next power of two.
func orI(a, b interval) interval {
	if !a.ok || !b.ok || a.lo < 0 || b.lo < 0 {
		return unknown
	}
	n := bits.Len64(uint64(max(a.hi, b.hi)))
	if n >= 63 {
		return span(0, math.MaxInt64)
	}
	return span(0, 1<<n-1)
}

func shlI(a, s interval) interval {
	if !s.ok || s.lo < 0 || s.hi > 62 {
		return unknown
	}
	return mulI(a, span(1<<s.lo, 1<<s.hi))
}

// shrI is the arithmetic shift of a mathematical value (the logical shift
// of an unsigned one, which is never negative). Shifts past 63 act as 63.
func shrI(a, s interval) interval {
	if !a.ok || !s.ok || s.lo < 0 {
		return unknown
	}
	sl, sh := min(s.lo, 63), min(s.hi, 63)
	lo, hi := a.lo>>sh, a.hi>>sl
	if a.lo >= 0 {
		lo = a.lo >> sh
	} else {
		lo = a.lo >> sl
	}
	if a.hi < 0 {
		hi = a.hi >> sh
	}
	return span(lo, hi)
}
