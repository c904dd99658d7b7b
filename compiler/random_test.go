package compiler

// Random kernels: a generator of well-typed kernels that mix the
// language's constructs (every scalar type, arithmetic, conversions,
// control flow, local arrays, helpers, math, shuffles, shared memory),
// compiled and assembled by ptxas. The fixed seeds make the run
// reproducible; KERN_RANDOM=N runs N more from a seed printed on failure.

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gokern/kern/internal/ptxas"
)

// genTypes are the scalar types the generator uses.
var genTypes = []string{"int", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64", "bool"}

func isFloatType(t string) bool { return t == "float32" || t == "float64" }
func isIntType(t string) bool   { return t != "bool" && !isFloatType(t) }

// kernelGen writes one random kernel.
type kernelGen struct {
	r      *rand.Rand
	b      strings.Builder
	vars   map[string][]string // type -> variable names in scope
	params map[string]string   // slice parameter -> element type
	nvar   int
	depth  int
	indent string
	// uniform is false inside thread-dependent control flow, where
	// barriers and shuffles must not go.
	uniform bool
}

func (g *kernelGen) pick(xs []string) string { return xs[g.r.Intn(len(xs))] }

func (g *kernelGen) line(format string, args ...any) {
	g.b.WriteString(g.indent)
	fmt.Fprintf(&g.b, format, args...)
	g.b.WriteString("\n")
}

// lit is a constant of type t that fits it.
func (g *kernelGen) lit(t string) string {
	switch {
	case t == "bool":
		return g.pick([]string{"true", "false"})
	case isFloatType(t):
		return g.pick([]string{"0.5", "1", "-2.25", "3e3", "1e-3"})
	case strings.HasPrefix(t, "uint"):
		return strconv.Itoa(g.r.Intn(100))
	}
	return strconv.Itoa(g.r.Intn(200) - 100)
}

// leaf is a non-constant value of type t: a variable, a guarded load, or
// a thread index.
func (g *kernelGen) leaf(t string) string {
	if vs := g.vars[t]; len(vs) > 0 && g.r.Intn(4) != 0 {
		return g.pick(vs)
	}
	for p, et := range g.params {
		if et == t && g.r.Intn(2) == 0 {
			return fmt.Sprintf("%s[i%%len(%s)]", p, p)
		}
	}
	switch t {
	case "int":
		return g.pick([]string{"i", "t.Lane()", "t.ThreadIdx().X", "n"})
	case "bool":
		return "(i%2 == 0)"
	}
	return fmt.Sprintf("%s(i)", t)
}

// expr is an expression of type t.
func (g *kernelGen) expr(t string) string {
	if g.depth > 3 {
		return g.leaf(t)
	}
	g.depth++
	defer func() { g.depth-- }()
	switch t {
	case "bool":
		switch g.r.Intn(4) {
		case 0:
			return g.expr("bool") + g.pick([]string{" && ", " || ", " == ", " != "}) + g.expr("bool")
		case 1:
			return "!" + g.leaf("bool")
		default:
			ct := g.pick(genTypes[:11])
			return "(" + g.expr(ct) + g.pick([]string{" < ", " <= ", " > ", " >= ", " == ", " != "}) + g.leaf(ct) + ")"
		}
	}
	switch g.r.Intn(9) {
	case 0, 1:
		return g.leaf(t)
	case 2: // conversion
		return t + "(" + g.expr(g.pick(genTypes[:11])) + ")"
	case 3:
		return g.pick([]string{"min", "max"}) + "(" + g.expr(t) + ", " + g.leaf(t) + ")"
	case 4:
		if isFloatType(t) {
			return "gpu." + g.pick([]string{"Sqrt", "Abs", "Floor", "Ceil", "Exp", "Log2", "Sin", "Rsqrt"}) + "(" + g.expr(t) + ")"
		}
		switch t {
		case "uint32":
			if g.r.Intn(2) == 0 {
				return "bits.RotateLeft32(" + g.expr(t) + ", 3)"
			}
			return "bits.Reverse32(" + g.expr(t) + ")"
		case "int":
			if g.r.Intn(2) == 0 {
				return "bits." + g.pick([]string{"OnesCount32", "LeadingZeros32", "TrailingZeros32", "Len32"}) + "(uint32(" + g.expr("int") + "))"
			}
			return "bits." + g.pick([]string{"OnesCount64", "LeadingZeros64", "TrailingZeros64", "Len64"}) + "(uint64(" + g.expr("int") + "))"
		}
		return "-" + g.leaf(t)
	case 5:
		return "helper" + strings.ToUpper(t[:1]) + t[1:] + "(" + g.expr(t) + ", " + g.leaf(t) + ")"
	case 6:
		if isIntType(t) {
			return "(" + g.expr(t) + g.pick([]string{" << ", " >> "}) + "(" + g.leaf("uint8") + " & 15))"
		}
		return "(" + g.expr(t) + " / (" + g.leaf(t) + " + 3))"
	case 7:
		if isIntType(t) {
			return "(" + g.expr(t) + g.pick([]string{" / ", " % "}) + "(" + g.leaf(t) + " | 1))"
		}
	}
	ops := []string{" + ", " - ", " * "}
	if isIntType(t) {
		ops = append(ops, " & ", " | ", " ^ ", " &^ ")
	}
	return "(" + g.expr(t) + g.pick(ops) + g.expr(t) + ")"
}

func (g *kernelGen) newVar(t, init string) string {
	g.nvar++
	name := fmt.Sprintf("v%d", g.nvar)
	g.line("%s := %s(%s)", name, t, init)
	g.line("_ = %s", name)
	g.vars[t] = append(g.vars[t], name)
	return name
}

// stmts writes n random statements.
func (g *kernelGen) stmts(n int) {
	for k := 0; k < n; k++ {
		g.stmt()
	}
}

func (g *kernelGen) block(body func()) {
	saved := g.indent
	scope := map[string][]string{}
	for t, vs := range g.vars {
		scope[t] = vs
	}
	g.indent += "\t"
	body()
	g.indent = saved
	g.vars = scope
}

func (g *kernelGen) stmt() {
	t := g.pick(genTypes)
	switch g.r.Intn(23) {
	case 0, 1:
		g.newVar(t, g.expr(t))
	case 2:
		if vs := g.vars[t]; len(vs) > 0 {
			v := g.pick(vs)
			if strings.HasPrefix(v, "j") {
				return // a loop counter: //kern:unroll needs it untouched
			}
			if t == "bool" {
				g.line("%s = %s", v, g.expr(t))
			} else {
				g.line("%s %s= %s", v, g.pick([]string{"+", "-", "*"}), g.expr(t))
			}
		}
	case 3:
		c := g.expr("bool")
		g.line("if %s {", c)
		wasUniform := g.uniform
		g.uniform = false
		g.block(func() { g.stmts(1 + g.r.Intn(3)) })
		g.line("} else {")
		g.block(func() { g.stmts(1 + g.r.Intn(2)) })
		g.line("}")
		g.uniform = wasUniform
	case 4:
		if g.depth > 0 || len(g.indent) > 3 {
			return
		}
		g.nvar++
		j := fmt.Sprintf("j%d", g.nvar)
		if g.r.Intn(3) == 0 {
			g.line("//kern:unroll")
		}
		g.line("for %s := 0; %s < 4; %s++ {", j, j, j)
		// A break on a thread-dependent condition makes the later
		// iterations divergent; one on the counter does not.
		brk := g.r.Intn(3)
		wasUniform := g.uniform
		if brk == 0 {
			g.uniform = false
		}
		g.block(func() {
			g.vars["int"] = append(g.vars["int"], j)
			g.stmts(1 + g.r.Intn(3))
			switch brk {
			case 0:
				g.line("if %s { break }", g.expr("bool"))
			case 1:
				g.line("if %s == n { break }", j)
			}
		})
		g.uniform = wasUniform
		g.line("}")
	case 5:
		g.line("switch %s %% 3 {", g.expr("int"))
		g.line("case 0:")
		wasUniform := g.uniform
		g.uniform = false
		g.block(func() { g.stmts(1) })
		g.line("case 1, 2:")
		g.block(func() { g.stmts(1) })
		g.line("}")
		g.uniform = wasUniform
	case 6: // local array
		g.nvar++
		a := fmt.Sprintf("arr%d", g.nvar)
		g.line("var %s [4]%s", a, t)
		g.line("%s[%d] = %s", a, g.r.Intn(4), g.expr(t))
		idx := strconv.Itoa(g.r.Intn(4))
		if g.r.Intn(2) == 0 {
			idx = "(" + g.leaf("int") + " & 3)"
		}
		g.newVar(t, a+"["+idx+"]")
	case 7: // store
		for p, et := range g.params {
			g.line("if i < len(%s) { %s[i] = %s }", p, p, g.expr(et))
			break
		}
	case 8: // warp collective, only where every lane is
		if !g.uniform {
			return
		}
		wt := g.pick([]string{"int32", "uint32", "float32", "int", "float64", "int64", "uint64"})
		v := g.newVar(wt, g.expr(wt))
		switch g.r.Intn(3) {
		case 0:
			g.line("%s = gpu.ShflXor(t, %s, %d)", v, v, 1<<g.r.Intn(5))
		case 1:
			g.line("%s = gpu.WarpSum(t, %s)", v, v)
		case 2:
			g.line("%s = gpu.ShflIdx(t, %s, %s)", v, v, g.expr("int"))
		}
	case 9: // shared memory and a barrier
		if !g.uniform {
			return
		}
		g.nvar++
		s := fmt.Sprintf("sh%d", g.nvar)
		st := g.pick(genTypes[:11])
		g.line("%s := gpu.Shared[%s](t, 64)", s, st)
		g.line("%s[t.ThreadIdx().X&63] = %s", s, g.expr(st))
		g.line("t.Sync()")
		g.newVar(st, s+"[(t.ThreadIdx().X+1)&63]")
	case 12: // atomics on a parameter
		for p, et := range g.params {
			switch et {
			case "int", "int32", "uint32", "uint64", "float32", "float64":
				g.newVar(et, fmt.Sprintf("gpu.%s(&%s[i%%len(%s)], %s)", g.pick([]string{"AtomicAdd", "AtomicExch"}), p, p, g.expr(et)))
				if !isFloatType(et) {
					g.line("gpu.%s(&%s[0], %s)", g.pick([]string{"AtomicMax", "AtomicMin"}), p, g.leaf(et))
				}
			}
			break
		}
	case 13: // range over a parameter
		for p, et := range g.params {
			g.nvar++
			k, v := fmt.Sprintf("k%d", g.nvar), fmt.Sprintf("e%d", g.nvar)
			g.line("for %s, %s := range %s {", k, v, p)
			g.block(func() {
				g.vars["int"] = append(g.vars["int"], k)
				g.vars[et] = append(g.vars[et], v)
				g.line("_ = %s", v)
				g.line("if %s > 2 { break }", k)
				g.stmts(1 + g.r.Intn(2))
			})
			g.line("}")
			break
		}
	case 14: // a struct local with an array field
		g.nvar++
		sv := fmt.Sprintf("st%d", g.nvar)
		g.line("var %s struct { a %s; b [2]%s; c bool }", sv, t, t)
		g.line("%s.a = %s", sv, g.expr(t))
		g.line("%s.b[1] = %s.a", sv, sv)
		g.line("%s.c = %s", sv, g.expr("bool"))
		g.line("if %s.c { %s.b[0] = %s.b[1] }", sv, sv, sv)
		g.newVar(t, sv+".b[0]")
	case 15: // an early return: everything after it is thread-dependent
		if len(g.indent) == 1 && g.r.Intn(3) == 0 {
			g.line("if %s { return }", g.expr("bool"))
			g.uniform = false
		}
	case 16: // block reduction
		if g.uniform {
			nt := g.pick([]string{"int", "int32", "uint32", "float32", "float64", "int64", "uint64"})
			g.newVar(nt, fmt.Sprintf("gpu.%s(t, %s)", g.pick([]string{"BlockSum", "BlockMax", "BlockMin"}), g.expr(nt)))
		}
	case 17: // two results
		g.nvar++
		q, r := fmt.Sprintf("q%d", g.nvar), fmt.Sprintf("r%d", g.nvar)
		g.line("%s, %s := divmod(%s, %s|1)", q, r, g.expr("int"), g.leaf("int"))
		g.line("_, _ = %s, %s", q, r)
		g.vars["int"] = append(g.vars["int"], q, r)
	case 18: // half and bfloat16
		h := g.newVar("float32", g.expr("float32"))
		g.newVar("float32", fmt.Sprintf("gpu.ToHalf(%s).Float32() + gpu.ToBFloat16(%s).Float32()", h, h))
	case 19: // a sub-slice of a parameter
		for p, et := range g.params {
			g.line("if len(%s) > 2 {", p)
			g.block(func() {
				g.nvar++
				sub := fmt.Sprintf("sub%d", g.nvar)
				g.line("%s := %s[1:len(%s)-1]", sub, p, p)
				g.newVar(et, sub+"[0]")
			})
			g.line("}")
			break
		}
	case 20: // a helper updating through a pointer: a local, then a parameter element
		if t == "bool" {
			return
		}
		v := g.newVar(t, g.expr(t))
		name := "bump" + strings.ToUpper(t[:1]) + t[1:]
		g.line("%s(&%s, %s)", name, v, g.leaf(t))
		for p, et := range g.params {
			if et == t {
				g.line("if i < len(%s) { %s(&%s[i], %s) }", p, name, p, v)
			}
		}
	case 21: // vector access
		for p, et := range g.params {
			if et == "float32" || et == "int32" || et == "uint32" {
				g.line("if k := 4 * i; k >= 0 && k+3 < len(%s) {", p)
				g.block(func() {
					g.nvar++
					vv := fmt.Sprintf("vec%d", g.nvar)
					g.line("%s := gpu.Load4(%s, k)", vv, p)
					g.line("%s[1] = %s", vv, g.expr(et))
					g.line("gpu.Store4(%s, k, %s)", p, vv)
				})
				g.line("}")
			}
		}
	case 22: // a warp-uniform region
		if g.uniform {
			g.line("if t.Warp() == %d {", g.r.Intn(2))
			g.block(func() {
				wt := g.pick([]string{"int32", "float32", "uint64"})
				v := g.newVar(wt, g.expr(wt))
				g.line("%s = gpu.WarpMin(t, %s)", v, v)
				g.line("_ = gpu.Ballot(t, %s)", g.expr("bool"))
			})
			g.line("}")
		}
	default:
		g.newVar(t, g.expr(t))
	}
}

// generate returns a random kernel package.
func generate(seed int64) string {
	g := &kernelGen{r: rand.New(rand.NewSource(seed)), vars: map[string][]string{}, params: map[string]string{}, uniform: true}
	np := 1 + g.r.Intn(3)
	var sig []string
	for k := 0; k < np; k++ {
		et := g.pick(genTypes)
		p := fmt.Sprintf("p%d", k)
		g.params[p] = et
		sig = append(sig, p+" []"+et)
	}
	g.b.WriteString("package random\n\nimport (\n\t\"math/bits\"\n\n\t\"github.com/gokern/kern/gpu\"\n)\n\nvar _ = bits.Len\n\n")
	for _, t := range genTypes[:11] {
		name := "helper" + strings.ToUpper(t[:1]) + t[1:]
		fmt.Fprintf(&g.b, "func %s(a, b %s) %s {\n\tif a < b {\n\t\treturn b - a\n\t}\n\treturn a + b\n}\n\n", name, t, t)
	}
	g.b.WriteString("func divmod(a, b int) (int, int) { return a / b, a % b }\n\n")
	for _, t := range genTypes[:11] {
		fmt.Fprintf(&g.b, "func bump%s%s(p *%s, d %s) { *p += d }\n\n", strings.ToUpper(t[:1]), t[1:], t, t)
	}
	fmt.Fprintf(&g.b, "//kern:kernel\nfunc K(t gpu.Thread, %s, n int) {\n", strings.Join(sig, ", "))
	g.indent = "\t"
	g.line("i := t.GlobalX()")
	g.line("_ = i")
	g.stmts(4 + g.r.Intn(8))
	g.b.WriteString("}\n")
	return g.b.String()
}

func TestRandomKernels(t *testing.T) {
	n, base := 24, int64(1)
	if s := os.Getenv("KERN_RANDOM"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatalf("KERN_RANDOM=%q: %v", s, err)
		}
		base = rand.Int63()
		t.Logf("seeds %d..%d", base, base+int64(n)-1)
	}
	compiled := 0
	type result struct {
		seed int64
		src  string
		ptx  string
	}
	var ok []result
	for k := 0; k < n; k++ {
		seed := base + int64(k)
		src := generate(seed)
		p, err := CompileSource(Config{}, fmt.Sprintf("random%d.go", seed), []byte(src))
		if err != nil {
			// The generator can write code the type checker rejects (a
			// constant overflowing, say); anything else is a bug.
			if strings.Contains(err.Error(), "[TypeError]") && !strings.Contains(err.Error(), "internal error") {
				if testing.Verbose() {
					t.Logf("seed %d does not type-check: %v", seed, strings.SplitN(err.Error(), "\n", 2)[0])
				}
				continue
			}
			t.Errorf("seed %d: %v\n%s", seed, err, src)
			continue
		}
		// The oldest target takes other paths (bf16 by hand, no min.NaN).
		if _, err := CompileSource(Config{Arch: "sm_75"}, fmt.Sprintf("random%d.go", seed), []byte(src)); err != nil {
			t.Errorf("seed %d compiles for sm_80 but not sm_75: %v", seed, err)
		}
		compiled++
		ok = append(ok, result{seed, src, p.PTX})
	}
	if compiled < n/2 {
		t.Errorf("only %d of %d random kernels type-check: the generator is broken", compiled, n)
	}
	t.Run("ptxas", func(t *testing.T) {
		for _, r := range ok {
			t.Run(strconv.FormatInt(r.seed, 10), func(t *testing.T) {
				t.Parallel()
				reps := ptxas.Check(t, fmt.Sprintf("random%d", r.seed), []byte(r.ptx), "sm_80")
				if f := reps["sm_80"].Func("K"); f != nil && f.Spills() {
					t.Errorf("seed %d spills: %s", r.seed, f)
				}
				if t.Failed() {
					t.Logf("source:\n%s", r.src)
				}
			})
		}
	})
}
