package emu

// Atomic read-modify-write on global and shared memory: atom and red
// (PTX ISA §9.7.13.5 atom, §9.7.13.6 red). Lanes of a warp apply their
// operations in lane order. Shared memory belongs to one block, which runs
// on one goroutine; global atomics take a lock striped by address, since
// blocks run in parallel.

import (
	"math"
	"math/bits"
	"sync"
)

var atomOps = []string{"and", "or", "xor", "cas", "exch", "add", "inc", "dec", "min", "max"}

// atomFunc computes the new value from the old one and operands b, c.
type atomFunc func(old, b, c uint64) uint64

func atomOp(op string, t dtype) atomFunc {
	mask := t.mask()
	sx := t.ext
	switch op {
	case "and":
		return func(o, b, _ uint64) uint64 { return o & b }
	case "or":
		return func(o, b, _ uint64) uint64 { return o | b }
	case "xor":
		return func(o, b, _ uint64) uint64 { return o ^ b }
	case "exch":
		return func(_, b, _ uint64) uint64 { return b }
	case "cas":
		return func(o, b, c uint64) uint64 {
			if o&mask == b&mask {
				return c
			}
			return o
		}
	case "inc": // ((old >= b) ? 0 : old+1), unsigned
		return func(o, b, _ uint64) uint64 {
			if o&mask >= b&mask {
				return 0
			}
			return o + 1
		}
	case "dec": // ((old == 0) || (old > b)) ? b : old-1, unsigned
		return func(o, b, _ uint64) uint64 {
			if o&mask == 0 || o&mask > b&mask {
				return b
			}
			return o - 1
		}
	case "add":
		switch t {
		case tF32:
			return func(o, b, _ uint64) uint64 {
				return uint64(math.Float32bits(math.Float32frombits(uint32(o)) + math.Float32frombits(uint32(b))))
			}
		case tF64:
			return func(o, b, _ uint64) uint64 { return math.Float64bits(fb(o) + fb(b)) }
		case tF16, tBF16, tF16x2, tBF16x2:
			f, n, _ := halfFmt(t)
			h := halfOp(f, n, rnRN, 0, func(x, y, _ float64) float64 { return addOdd(x, y, rnRN) })
			return func(o, b, _ uint64) uint64 { return h(o, b, 0) }
		}
		return func(o, b, _ uint64) uint64 { return o + b }
	case "min", "max":
		isMax := op == "max"
		switch {
		case t == tF32 || t == tF64:
			get := floatReader(t, false)
			return func(o, b, _ uint64) uint64 {
				r := fminmax(get(o), get(b), isMax, false)
				if t == tF32 {
					return uint64(math.Float32bits(float32(r)))
				}
				return math.Float64bits(r)
			}
		case t.isSigned():
			return func(o, b, _ uint64) uint64 {
				if (int64(sx(o)) < int64(sx(b))) == isMax {
					return b
				}
				return o
			}
		}
		return func(o, b, _ uint64) uint64 {
			if (o&mask < b&mask) == isMax {
				return b
			}
			return o
		}
	}
	return nil
}

// decAtom decodes atom{.space}.op.type d, [a], b{, c} and
// red{.space}.op.type [a], b.
func decAtom(d *decoder, s *astStmt, m *mods, in *inst) {
	op := m.oneOf(atomOps...)
	t := d.oneType(s, m)
	if op == "" {
		d.errorf("%s: missing atomic operation", s.op)
		return
	}
	if m.hasSp && m.space != spGlobal && m.space != spShared {
		d.errorf("%s: atomics work on .global and .shared only", s.op)
		return
	}
	if m.vec > 1 {
		d.errorf("%s: vector atomics are not supported", s.op)
		return
	}
	red := m.base == "red"
	f := atomOp(op, t)
	if f == nil || t == tPred || t.size() < 2 {
		d.errorf("%s: .%s is not defined on .%s", s.op, op, t)
		return
	}
	in.t, in.space = t, m.space
	i := 0
	if !red {
		nargs := 3
		if op == "cas" {
			nargs = 4
		}
		if !d.want(s, nargs) {
			return
		}
		in.ops[0] = d.dst(s.args[0])
		i = 1
	} else {
		if op == "cas" || op == "exch" {
			d.errorf("%s: red has no .%s", s.op, op)
			return
		}
		if !d.want(s, 2) {
			return
		}
		in.ops[0] = opnd{kind: oReg, r: srSink * 32, r2: -1}
	}
	in.ops[1] = d.addr(s.args[i], m.space)
	in.ops[2] = d.src(s.args[i+1], t)
	if op == "cas" {
		in.ops[3] = d.src(s.args[i+2], t)
	}
	size := t.size()
	in.fn = func(w *warp, in *inst, m uint32) error {
		if w.l.coop {
			w.l.writes.Add(1) // cooperative.go: a write may release a grid spin
		}
		for mm := m; mm != 0; mm &= mm - 1 {
			l := bits.TrailingZeros32(mm)
			addr := w.addrOf(&in.ops[1], l)
			buf, err := w.access(in.space, addr, size, size, l, AccessAtomic)
			if err != nil {
				return err
			}
			b, c := w.get(&in.ops[2], l), w.get(&in.ops[3], l)
			var mu *sync.Mutex
			if sp, a := resolve(in.space, addr); sp == spGlobal {
				mu = &w.l.dev.atomMu[a>>3&63]
				mu.Lock()
			}
			old := loadLE(buf, size)
			storeLE(buf, size, f(old, b, c))
			if mu != nil {
				mu.Unlock()
			}
			w.regs[int(in.ops[0].r)+l] = t.ext(old)
		}
		if w.obs != nil {
			w.observe(in, &in.ops[1], m, AccessAtomic, size)
		}
		return nil
	}
}
