package compiler

// Differential test of float semantics: random float32/float64 expression
// trees (+ - * /, negation, conversions between the two widths and from
// integers) run on the emulator must give Go's bits exactly: kern rounds
// every operation once, with no contraction into FMA, as Go does.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gokern/kern/emu"
)

type fexpr struct {
	src string
	f64 bool
	v   float64 // the value; for float32 exactly a float32
}

type floatGen struct {
	r          *rand.Rand
	f32, f64   fexpr
	i32, u64   string
	i32v, u64v uint64
}

func (g *floatGen) leaf(f64 bool) fexpr {
	switch g.r.IntN(4) {
	case 0: // a conversion from an integer input
		if g.r.IntN(2) == 0 {
			v := float64(int32(g.i32v))
			if !f64 {
				return fexpr{"float32(" + g.i32 + ")", false, float64(float32(int32(g.i32v)))}
			}
			return fexpr{"float64(" + g.i32 + ")", true, v}
		}
		if !f64 {
			return fexpr{"float32(" + g.u64 + ")", false, float64(float32(g.u64v))}
		}
		return fexpr{"float64(" + g.u64 + ")", true, float64(g.u64v)}
	}
	if f64 {
		return g.f64
	}
	return g.f32
}

func (g *floatGen) expr(f64 bool, depth int) fexpr {
	if depth == 0 {
		return g.leaf(f64)
	}
	round := func(v float64) float64 {
		if f64 {
			return v
		}
		return float64(float32(v))
	}
	switch g.r.IntN(6) {
	case 0: // convert from the other width
		x := g.expr(!f64, depth-1)
		if f64 {
			return fexpr{"float64(" + x.src + ")", true, x.v}
		}
		return fexpr{"float32(" + x.src + ")", false, float64(float32(x.v))}
	case 1:
		x := g.expr(f64, depth-1)
		return fexpr{"(-" + x.src + ")", f64, -x.v}
	}
	x, y := g.expr(f64, depth-1), g.expr(f64, depth-1)
	op := []string{"+", "-", "*", "/"}[g.r.IntN(4)]
	var v float64
	if f64 {
		switch op {
		case "+":
			v = x.v + y.v
		case "-":
			v = x.v - y.v
		case "*":
			v = x.v * y.v
		case "/":
			v = x.v / y.v
		}
	} else {
		a, b := float32(x.v), float32(y.v)
		switch op {
		case "+":
			v = float64(a + b)
		case "-":
			v = float64(a - b)
		case "*":
			v = float64(a * b)
		case "/":
			v = float64(a / b)
		}
	}
	return fexpr{fmt.Sprintf("(%s %s %s)", x.src, op, y.src), f64, round(v)}
}

func randFloat(r *rand.Rand) float64 {
	switch r.IntN(10) {
	case 0:
		return 0
	case 1:
		return math.Inf(1 - 2*r.IntN(2))
	}
	return r.NormFloat64() * math.Pow(2, float64(r.IntN(60)-30))
}

// KERN_RANDOM=N runs N kernels instead of 12.
func TestFloatSemanticsOnTheEmulator(t *testing.T) {
	kernels, exprs := 12, 24
	if n, err := strconv.Atoi(os.Getenv("KERN_RANDOM")); err == nil {
		kernels = n
	}
	dev := emu.NewDevice(emu.Options{})
	for k := range kernels {
		r := rand.New(rand.NewPCG(uint64(k), 7))
		x32, x64 := float32(randFloat(r)), randFloat(r)
		g := &floatGen{r: r, f32: fexpr{"a", false, float64(x32)}, f64: fexpr{"b", true, x64},
			i32: "c", u64: "d", i32v: uint64(r.Uint32()), u64v: r.Uint64() >> r.IntN(64)}
		inputs := []uint64{uint64(math.Float32bits(x32)), math.Float64bits(x64), g.i32v, g.u64v}
		var src strings.Builder
		src.WriteString("package k\n\nimport (\n\t\"math\"\n\n\t\"github.com/gokern/kern/gpu\"\n)\n\n//kern:kernel\nfunc K(t gpu.Thread, in, out []uint64) {\n")
		src.WriteString("\ta := math.Float32frombits(uint32(in[0]))\n\tb := math.Float64frombits(in[1])\n\tc := int32(in[2])\n\td := in[3]\n\t_, _, _, _ = a, b, c, d\n")
		want := make([]float64, exprs)
		wide := make([]bool, exprs)
		for e := range exprs {
			wide[e] = r.IntN(2) == 0
			x := g.expr(wide[e], 1+r.IntN(4))
			want[e] = x.v
			if wide[e] {
				fmt.Fprintf(&src, "\tout[%d] = math.Float64bits(%s)\n", e, x.src)
			} else {
				fmt.Fprintf(&src, "\tout[%d] = uint64(math.Float32bits(%s))\n", e, x.src)
			}
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
		lines := strings.Split(src.String(), "\n")
		for e := range exprs {
			bits := got[e]
			var v float64
			if wide[e] {
				v = math.Float64frombits(bits)
			} else {
				v = float64(math.Float32frombits(uint32(bits)))
			}
			// NaN payloads may differ (PTX produces the canonical NaN);
			// every other value must match to the bit, signed zeros too.
			same := v == want[e] && math.Signbit(v) == math.Signbit(want[e]) || math.IsNaN(v) && math.IsNaN(want[e])
			if !same {
				t.Errorf("kernel %d: %s\n  = %v on the emulator, Go gives %v", k, strings.TrimSpace(lines[15+e]), v, want[e])
			}
		}
	}
}
