package compiler

// Each interval operation, followed by fit to the result type as the
// analysis applies it, must contain every result Go computes for operands
// drawn from its input intervals, wrap-around included. Checked
// exhaustively over random small intervals of int8 and uint8 operands.

import (
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern/compiler/ir"
)

// nz is y, or 1 for 0 (where Go's division is not defined).
func nz(y int8) int8 {
	if y == 0 {
		return 1
	}
	return y
}

func TestIntervalOpsContainGoResults(t *testing.T) {
	type op struct {
		name string
		iv   func(a, b interval) interval
		s8   func(x, y int8) (int8, bool) // false: not defined (division by zero, negative shift)
		u8   func(x, y uint8) (uint8, bool)
	}
	ops := []op{
		{"+", addI, func(x, y int8) (int8, bool) { return x + y, true }, func(x, y uint8) (uint8, bool) { return x + y, true }},
		{"-", subI, func(x, y int8) (int8, bool) { return x - y, true }, func(x, y uint8) (uint8, bool) { return x - y, true }},
		{"*", mulI, func(x, y int8) (int8, bool) { return x * y, true }, func(x, y uint8) (uint8, bool) { return x * y, true }},
		{"/", quoI, func(x, y int8) (int8, bool) { return x / nz(y), y != 0 }, func(x, y uint8) (uint8, bool) { return x / max(y, 1), y > 0 }},
		{"%", remI, func(x, y int8) (int8, bool) { return x % nz(y), y != 0 }, func(x, y uint8) (uint8, bool) { return x % max(y, 1), y > 0 }},
		{"&", andI, func(x, y int8) (int8, bool) { return x & y, true }, func(x, y uint8) (uint8, bool) { return x & y, true }},
		{"|", orI, func(x, y int8) (int8, bool) { return x | y, true }, func(x, y uint8) (uint8, bool) { return x | y, true }},
		{"<<", shlI, func(x, y int8) (int8, bool) { return x << max(y, 0), y >= 0 }, func(x, y uint8) (uint8, bool) { return x << y, true }},
		{">>", shrI, func(x, y int8) (int8, bool) { return x >> max(y, 0), y >= 0 }, func(x, y uint8) (uint8, bool) { return x >> y, true }},
	}
	r := rand.New(rand.NewPCG(1, 2))
	randIv := func(lo, hi int) interval {
		a, b := lo+r.IntN(hi-lo+1), lo+r.IntN(hi-lo+1)
		return span(int64(min(a, b)), int64(max(a, b)))
	}
	for _, o := range ops {
		for range 300 {
			a, b := randIv(-128, 127), randIv(-128, 127)
			if r.IntN(2) == 0 {
				a, b = randIv(-20, 20), randIv(-3, 12)
			}
			got := fit(o.iv(a, b), ir.S8)
			for x := a.lo; x <= a.hi; x++ {
				for y := b.lo; y <= b.hi; y++ {
					v, ok := o.s8(int8(x), int8(y))
					if ok && got.ok && (int64(v) < got.lo || int64(v) > got.hi) {
						t.Fatalf("int8 %d %s %d = %d, outside %s(%v, %v) = %v", x, o.name, y, v, o.name, a, b, got)
					}
				}
			}
			a, b = randIv(0, 255), randIv(0, 255)
			if r.IntN(2) == 0 {
				a, b = randIv(0, 40), randIv(0, 9)
			}
			got = fit(o.iv(a, b), ir.U8)
			for x := a.lo; x <= a.hi; x++ {
				for y := b.lo; y <= b.hi; y++ {
					v, ok := o.u8(uint8(x), uint8(y))
					if ok && got.ok && (int64(v) < got.lo || int64(v) > got.hi) {
						t.Fatalf("uint8 %d %s %d = %d, outside %s(%v, %v) = %v", x, o.name, y, v, o.name, a, b, got)
					}
				}
			}
		}
	}
}

func TestIntervalOverflowIsUnknown(t *testing.T) {
	big := span(1<<62, 1<<62+5)
	if r := addI(big, big); r.ok {
		t.Errorf("2^62+2^62 overflows int64, got %v", r)
	}
	if r := mulI(big, exactly(4)); r.ok {
		t.Errorf("2^62*4 overflows int64, got %v", r)
	}
	if r := fit(span(-1, 3), ir.U64); r.ok {
		t.Errorf("a negative value does not fit uint64, got %v", r)
	}
	if r := fit(span(0, 300), ir.U8); r != span(0, 255) {
		t.Errorf("fit([0,300], uint8) = %v, want [0,255]", r)
	}
}
