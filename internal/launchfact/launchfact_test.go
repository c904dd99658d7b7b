package launchfact

import (
	"math"
	"testing"
)

type args struct{ vals, lens map[int]int64 }

func (a args) Value(i int) (int64, bool) { v, ok := a.vals[i]; return v, ok }
func (a args) Len(i int) (int64, bool)   { v, ok := a.lens[i]; return v, ok }

func TestHolds(t *testing.T) {
	a := args{vals: map[int]int64{2: 32, 3: 48, 4: -5, 5: math.MaxInt64, 6: math.MinInt64}, lens: map[int]int64{0: 1536, 1: 0}}
	var all []*Expr
	allHold := true
	for _, c := range []struct {
		fact string
		want bool
	}{
		{"(>= l0 (* p2 p3))", true},        // 1536 ≥ 32·48
		{"(>= l0 (+ (* p2 p3) 1))", false}, // one past
		{"(>= l0 (+ (+ 1 (* (- p2 1) p3)) (- p3 1)))", true},
		{"(>= p4 0)", false},
		{"(>= (/ p4 2) -2)", true},                   // Go truncates: −5/2 = −2
		{"(>= (/ p2 0) 0)", false},                   // division by zero
		{"(>= (/ p6 -1) 0)", false},                  // MinInt64 / −1 overflows
		{"(>= (+ p5 1) 0)", false},                   // overflow
		{"(>= (- p6 1) -9)", false},                  // overflow
		{"(>= (* p5 2) 0)", false},                   // overflow
		{"(>= (* p6 1) p6)", true},                   // MinInt64 itself
		{"(>= (* -4611686018427387904 2) p6)", true}, // −2⁶³ exactly
		{"(>= l1 0)", true},
		{"(>= l7 0)", false}, // no such argument
		{"(>= p9 0)", false},
	} {
		e, err := Parse(c.fact)
		if err != nil {
			t.Fatalf("%s: %v", c.fact, err)
		}
		if got := e.Holds(a); got != c.want {
			t.Errorf("%s = %v, want %v", c.fact, got, c.want)
		}
		if got := Compile([]*Expr{e}).Holds(a); got != c.want {
			t.Errorf("%s compiled = %v, want %v", c.fact, got, c.want)
		}
		all = append(all, e)
		if got := Compile(all).Holds(a); got != (allHold && c.want) {
			t.Errorf("the first %d facts compiled = %v, want %v", len(all), got, allHold && c.want)
		}
		allHold = allHold && c.want
		if e.String() != c.fact {
			t.Errorf("%s prints as %s", c.fact, e.String())
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, s := range []string{"", "p1", "(+ p1 2)", "(>= p1)", "(>= p1 2", "(>= p1 2) x", "(% p1 2)", "(>= (>= p1 2) 1)", "(>= q1 2)", "(>= p-1 2)", "(>= 1.5 2)"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) succeeded", s)
		}
	}
}

// A fact deeper than the fixed stack never holds, rather than overflow it.
func TestCompileTooDeep(t *testing.T) {
	e := Const(1)
	for range maxStack + 1 {
		e = Op('+', Const(0), e)
	}
	if Compile([]*Expr{GE(e, Const(0))}).Holds(args{}) {
		t.Errorf("a fact deeper than the stack held")
	}
	if !Compile([]*Expr{GE(Op('+', Const(0), Const(1)), Const(0))}).Holds(args{}) {
		t.Errorf("a shallow fact did not hold")
	}
}
