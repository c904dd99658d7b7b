// Package launchfact evaluates the launch facts of a kernel's 32-bit entry.
//
// The compiler (compiler/launchfact.go) proves some of a 32-bit entry's
// bounds checks from a fact about the launch's arguments instead of from
// the kernel's code alone: `in[r*cols+c]` under `r < rows && c < cols` is
// in bounds whenever cols ≥ 0 and len(in) ≥ (rows−1)·cols + cols. Such a
// fact cannot be known when the kernel is compiled, but the host knows it
// before every launch, as it knows the bounds the 32-bit entry assumes
// (kern's index32.go). The generated KernelSpec lists the facts as text;
// the launch evaluates them with this package and runs the 32-bit entry
// only when every one holds, else the kernel's entry, which keeps every
// check. So a short slice still fails at the access that really fails,
// with its index and length, and a short slice that no access reaches
// reports nothing: the facts choose code, they never report.
//
// A fact is "(>= A B)" over integer expressions in prefix form:
//
//	expr := integer | pN | lN | "(" op expr expr ")"
//	op   := + | - | * | / | >=
//
// pN is the value of the kernel's N-th parameter (a 64-bit signed
// integer) and lN the length of its N-th parameter (a slice), N counting
// the parameters after gpu.Thread from 0. / is Go's division (truncated).
// Evaluation is exact: an overflow of int64 or a division by zero makes
// the fact false, which only costs the launch the faster entry.
package launchfact

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// Expr is a parsed fact or operand.
type Expr struct {
	op   byte // 'c' constant, 'p' parameter value, 'l' parameter length, or the operator
	c    int64
	i    int
	x, y *Expr
}

// Args gives a launch's arguments: the value of integer parameter i, and
// the length of slice parameter i.
type Args interface {
	Value(i int) (int64, bool)
	Len(i int) (int64, bool)
}

// Parse parses one fact, which must be a comparison.
func Parse(s string) (*Expr, error) {
	e, rest, err := parse(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("launchfact: %q: %v", s, err)
	}
	if strings.TrimSpace(rest) != "" {
		return nil, fmt.Errorf("launchfact: %q: trailing %q", s, rest)
	}
	if e.op != '>' {
		return nil, fmt.Errorf("launchfact: %q is not a comparison", s)
	}
	return e, nil
}

func parse(s string) (*Expr, string, error) {
	s = strings.TrimLeft(s, " ")
	if s == "" {
		return nil, "", fmt.Errorf("missing operand")
	}
	if s[0] == '(' {
		s = strings.TrimLeft(s[1:], " ")
		var op byte
		switch {
		case strings.HasPrefix(s, ">="):
			op, s = '>', s[2:]
		case s != "" && strings.IndexByte("+-*/", s[0]) >= 0 && len(s) > 1 && s[1] == ' ':
			op, s = s[0], s[1:]
		default:
			return nil, "", fmt.Errorf("unknown operator at %q", s)
		}
		x, s, err := parse(s)
		if err != nil {
			return nil, "", err
		}
		y, s, err := parse(s)
		if err != nil {
			return nil, "", err
		}
		s = strings.TrimLeft(s, " ")
		if s == "" || s[0] != ')' {
			return nil, "", fmt.Errorf("missing )")
		}
		if x.op == '>' || y.op == '>' {
			return nil, "", fmt.Errorf("a comparison as an operand")
		}
		return &Expr{op: op, x: x, y: y}, s[1:], nil
	}
	end := strings.IndexAny(s, " )")
	if end < 0 {
		end = len(s)
	}
	tok, rest := s[:end], s[end:]
	if tok == "" {
		return nil, "", fmt.Errorf("missing operand")
	}
	switch tok[0] {
	case 'p', 'l':
		i, err := strconv.Atoi(tok[1:])
		if err != nil || i < 0 {
			return nil, "", fmt.Errorf("bad parameter %q", tok)
		}
		return &Expr{op: tok[0], i: i}, rest, nil
	}
	c, err := strconv.ParseInt(tok, 10, 64)
	if err != nil {
		return nil, "", fmt.Errorf("bad operand %q", tok)
	}
	return &Expr{op: 'c', c: c}, rest, nil
}

// Holds reports whether the fact e holds for args; false when an operand
// is missing or its evaluation overflows.
func (e *Expr) Holds(a Args) bool {
	if e.op != '>' {
		return false
	}
	x, ok1 := e.x.eval(a)
	y, ok2 := e.y.eval(a)
	return ok1 && ok2 && x >= y
}

func (e *Expr) eval(a Args) (int64, bool) {
	switch e.op {
	case 'c':
		return e.c, true
	case 'p':
		return a.Value(e.i)
	case 'l':
		return a.Len(e.i)
	}
	x, ok := e.x.eval(a)
	if !ok {
		return 0, false
	}
	y, ok := e.y.eval(a)
	if !ok {
		return 0, false
	}
	return apply(e.op, x, y)
}

// apply is x op y, reporting whether it is defined and fits in int64.
func apply(op byte, x, y int64) (int64, bool) {
	switch op {
	case '+':
		s := x + y
		if (x >= 0) == (y >= 0) && (s >= 0) != (x >= 0) {
			return 0, false
		}
		return s, true
	case '-':
		d := x - y
		if (x >= 0) != (y >= 0) && (d >= 0) != (x >= 0) {
			return 0, false
		}
		return d, true
	case '*':
		return mul(x, y)
	case '/':
		if y == 0 || x == -1<<63 && y == -1 {
			return 0, false
		}
		return x / y, true
	}
	return 0, false
}

// mul is x·y, reporting whether it fits in int64.
func mul(x, y int64) (int64, bool) {
	neg := (x < 0) != (y < 0)
	ux, uy := abs(x), abs(y)
	hi, lo := bits.Mul64(ux, uy)
	if hi != 0 {
		return 0, false
	}
	if neg {
		if lo > 1<<63 {
			return 0, false
		}
		return int64(-lo), true
	}
	if lo >= 1<<63 {
		return 0, false
	}
	return int64(lo), true
}

func abs(x int64) uint64 {
	if x < 0 {
		return uint64(-x)
	}
	return uint64(x)
}

// String writes e back in the form Parse reads.
func (e *Expr) String() string {
	switch e.op {
	case 'c':
		return strconv.FormatInt(e.c, 10)
	case 'p', 'l':
		return string(e.op) + strconv.Itoa(e.i)
	case '>':
		return "(>= " + e.x.String() + " " + e.y.String() + ")"
	}
	return "(" + string(e.op) + " " + e.x.String() + " " + e.y.String() + ")"
}

// Const, Param, Len and Op build expressions (the compiler's side).
func Const(c int64) *Expr { return &Expr{op: 'c', c: c} }
func Param(i int) *Expr   { return &Expr{op: 'p', i: i} }
func Len(i int) *Expr     { return &Expr{op: 'l', i: i} }
func GE(x, y *Expr) *Expr { return &Expr{op: '>', x: x, y: y} }
func Op(op byte, x, y *Expr) *Expr {
	return &Expr{op: op, x: x, y: y}
}

// IsLen reports whether e is a parameter's length.
func (e *Expr) IsLen() bool { return e.op == 'l' }

// IsConst reports e's value when it is a constant.
func (e *Expr) IsConst() (int64, bool) { return e.c, e.op == 'c' }
