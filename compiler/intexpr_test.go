package compiler

// Differential test of integer semantics: random expression trees over
// every integer type (wrapping arithmetic, division, remainder, bit ops,
// shifts of every width, conversions) are compiled into a kernel, run on
// the PTX emulator, and compared with the same trees evaluated here with
// Go's rules. A mismatch is a compiler (or emulator) bug in Go semantics.

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gokern/kern/emu"
)

type ity struct {
	name   string
	bits   uint
	signed bool
}

var itys = []ity{
	{"int8", 8, true}, {"uint8", 8, false}, {"int16", 16, true}, {"uint16", 16, false},
	{"int32", 32, true}, {"uint32", 32, false}, {"int64", 64, true}, {"uint64", 64, false},
}

// norm truncates v to t's width and extends it back to 64 bits.
func (t ity) norm(v uint64) uint64 {
	if t.bits == 64 {
		return v
	}
	v &= 1<<t.bits - 1
	if t.signed && v>>(t.bits-1)&1 == 1 {
		v |= ^uint64(0) << t.bits
	}
	return v
}

type iexpr struct {
	src string
	t   ity
	val uint64 // normalised value
}

type exprGen struct {
	r    *rand.Rand
	vars []iexpr // the kernel's inputs, one per type
}

// leaf is the kernel's input of type t: every expression involves one,
// so none is a Go constant expression (which the type checker folds, and
// rejects on overflow).
func (g *exprGen) leaf(t ity) iexpr {
	for _, v := range g.vars {
		if v.t == t {
			return v
		}
	}
	panic("no var")
}

// constant is a literal of type t, written so that it is in range.
func (g *exprGen) constant(t ity) iexpr {
	v := t.norm(g.r.Uint64() >> g.r.IntN(64))
	if t.signed {
		return iexpr{fmt.Sprintf("%s(%d)", t.name, int64(v)), t, v}
	}
	return iexpr{fmt.Sprintf("%s(%d)", t.name, v&t.mask()), t, v}
}

func (g *exprGen) expr(t ity, depth int) iexpr {
	if depth == 0 {
		return g.leaf(t)
	}
	switch g.r.IntN(7) {
	case 0: // conversion from another type
		u := itys[g.r.IntN(len(itys))]
		x := g.expr(u, depth-1)
		return iexpr{fmt.Sprintf("%s(%s)", t.name, x.src), t, t.norm(x.val)}
	case 1: // unary
		x := g.expr(t, depth-1)
		if g.r.IntN(2) == 0 {
			return iexpr{"(-" + x.src + ")", t, t.norm(-x.val)}
		}
		return iexpr{"(^" + x.src + ")", t, t.norm(^x.val)}
	case 2: // shift by an unsigned amount that may exceed the width
		x := g.expr(t, depth-1)
		s := g.expr(itys[1+2*g.r.IntN(4)], depth-1) // an unsigned type
		amt := uint64(s.val)
		if g.r.IntN(2) == 0 {
			v := uint64(0)
			if amt < 64 {
				v = x.val << amt
			}
			return iexpr{fmt.Sprintf("(%s << %s)", x.src, s.src), t, t.norm(v)}
		}
		var v uint64
		switch {
		case t.signed && amt >= 64:
			v = uint64(int64(x.val) >> 63)
		case t.signed:
			v = uint64(int64(x.val) >> amt)
		case amt >= 64:
			v = 0
		default:
			v = (x.val & t.mask()) >> amt
		}
		return iexpr{fmt.Sprintf("(%s >> %s)", x.src, s.src), t, t.norm(v)}
	case 3: // division and remainder by a divisor made positive and non-zero
		x, d := g.expr(t, depth-1), g.expr(t, depth-1)
		dv := t.norm((d.val & 0x3f) | 1)
		ds := fmt.Sprintf("((%s & 63) | 1)", d.src)
		var q, r uint64
		if t.signed {
			q, r = uint64(int64(x.val)/int64(dv)), uint64(int64(x.val)%int64(dv))
		} else {
			q, r = (x.val&t.mask())/dv, (x.val&t.mask())%dv
		}
		if g.r.IntN(2) == 0 {
			return iexpr{fmt.Sprintf("(%s / %s)", x.src, ds), t, t.norm(q)}
		}
		return iexpr{fmt.Sprintf("(%s %% %s)", x.src, ds), t, t.norm(r)}
	}
	x, y := g.expr(t, depth-1), g.expr(t, depth-1)
	if g.r.IntN(3) == 0 {
		y = g.constant(t)
	}
	ops := []string{"+", "-", "*", "&", "|", "^", "&^"}
	op := ops[g.r.IntN(len(ops))]
	var v uint64
	switch op {
	case "+":
		v = x.val + y.val
	case "-":
		v = x.val - y.val
	case "*":
		v = x.val * y.val
	case "&":
		v = x.val & y.val
	case "|":
		v = x.val | y.val
	case "^":
		v = x.val ^ y.val
	case "&^":
		v = x.val &^ y.val
	}
	return iexpr{fmt.Sprintf("(%s %s %s)", x.src, op, y.src), t, t.norm(v)}
}

func (t ity) mask() uint64 {
	if t.bits == 64 {
		return ^uint64(0)
	}
	return 1<<t.bits - 1
}

// KERN_RANDOM=N runs N kernels instead of 12.
func TestIntegerSemanticsOnTheEmulator(t *testing.T) {
	kernels, exprs := 12, 24
	if n, err := strconv.Atoi(os.Getenv("KERN_RANDOM")); err == nil {
		kernels = n
	}
	dev := emu.NewDevice(emu.Options{})
	for k := range kernels {
		r := rand.New(rand.NewPCG(uint64(k), 99))
		g := &exprGen{r: r}
		inputs := make([]uint64, len(itys))
		var src strings.Builder
		src.WriteString("package k\n\nimport \"github.com/gokern/kern/gpu\"\n\n//kern:kernel\nfunc K(t gpu.Thread, in, out []uint64) {\n")
		for i, ty := range itys {
			inputs[i] = r.Uint64() >> r.IntN(64)
			name := fmt.Sprintf("v%d", i)
			fmt.Fprintf(&src, "\t%s := %s(in[%d])\n\t_ = %s\n", name, ty.name, i, name)
			g.vars = append(g.vars, iexpr{name, ty, ty.norm(inputs[i])})
		}
		want := make([]uint64, exprs)
		for e := range exprs {
			ty := itys[r.IntN(len(itys))]
			x := g.expr(ty, 1+r.IntN(4))
			want[e] = x.val & ty.mask()
			fmt.Fprintf(&src, "\tout[%d] = uint64(%s(%s))\n", e, "u"+strings.TrimPrefix(ty.name, "u"), x.src)
		}
		src.WriteString("}\n")
		p, err := CompileSource(Config{}, "k.go", []byte(src.String()))
		if err != nil {
			t.Fatalf("kernel %d: %v\n%s", k, err, src.String())
		}
		got, err := runK(dev, p.PTX, inputs, exprs)
		if err != nil {
			t.Fatalf("kernel %d: %v", k, err)
		}
		for e := range exprs {
			if v := got[e]; v != want[e] {
				lines := strings.Split(src.String(), "\n")
				t.Errorf("kernel %d: %s\n  = %#x on the emulator, Go gives %#x", k, strings.TrimSpace(lines[7+2*len(itys)+e]), v, want[e])
			}
		}
	}
}

// runK runs kernel K(t, in, out []uint64) of ptx on one thread of dev with
// the given inputs and returns its n outputs.
func runK(dev *emu.Device, ptx string, inputs []uint64, n int) ([]uint64, error) {
	m, err := emu.Load([]byte(ptx))
	if err != nil {
		return nil, err
	}
	in, err := dev.Alloc(8 * len(inputs))
	if err != nil {
		return nil, err
	}
	out, err := dev.Alloc(8 * n)
	if err != nil {
		return nil, err
	}
	raw := make([]byte, 8*len(inputs))
	for i, v := range inputs {
		binary.LittleEndian.PutUint64(raw[8*i:], v)
	}
	if err := dev.Write(in, raw); err != nil {
		return nil, err
	}
	params := make([]byte, 32)
	binary.LittleEndian.PutUint64(params[0:], in)
	binary.LittleEndian.PutUint64(params[8:], uint64(len(inputs)))
	binary.LittleEndian.PutUint64(params[16:], out)
	binary.LittleEndian.PutUint64(params[24:], uint64(n))
	if err := dev.Launch(m, "K", emu.LaunchConfig{Grid: [3]int{1, 1, 1}, Block: [3]int{1, 1, 1}, Params: params}); err != nil {
		return nil, err
	}
	got := make([]byte, 8*n)
	if err := dev.Read(out, got); err != nil {
		return nil, err
	}
	vals := make([]uint64, n)
	for i := range vals {
		vals[i] = binary.LittleEndian.Uint64(got[8*i:])
	}
	return vals, nil
}
