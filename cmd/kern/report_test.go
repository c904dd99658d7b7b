package main

import (
	"testing"

	"github.com/gokern/kern/compiler"
)

func TestFactText(t *testing.T) {
	params := []compiler.Param{{Name: "in"}, {Name: "out"}, {Name: "rows"}, {Name: "cols"}}
	got := factText("(>= l0 (+ (+ 1 (* (- p2 1) p3)) (- p3 1)))", params)
	if want := "(>= len(in) (+ (+ 1 (* (- rows 1) cols)) (- cols 1)))"; got != want {
		t.Errorf("factText = %q, want %q", got, want)
	}
}
