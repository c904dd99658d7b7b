package compiler

import (
	"fmt"
	"go/token"
	"sort"
	"strings"
)

// Diagnostic is one compile error at a source position.
type Diagnostic struct {
	Pos  token.Position
	Code Code
	Msg  string
}

func (d Diagnostic) Error() string {
	return fmt.Sprintf("%s: %s [%s]", d.Pos, d.Msg, d.Code)
}

// ErrorList is every diagnostic of a compilation, sorted by position. The
// compiler keeps going after an error so that one run reports them all.
type ErrorList []Diagnostic

func (l ErrorList) Error() string {
	var b strings.Builder
	for i, d := range l {
		if i > 0 {
			b.WriteString("\n")
		}
		if i == 20 {
			fmt.Fprintf(&b, "(and %d more errors)", len(l)-i)
			break
		}
		b.WriteString(d.Error())
	}
	return b.String()
}

func (l ErrorList) sorted() ErrorList {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Pos, l[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	// Drop exact duplicates (the same construct reached twice, e.g. a
	// helper inlined into two kernels).
	out := l[:0]
	for i, d := range l {
		if i > 0 && d == l[i-1] {
			continue
		}
		out = append(out, d)
	}
	return out
}

// diags collects diagnostics for one compilation.
type diags struct {
	fset *token.FileSet
	list ErrorList
}

func (d *diags) errorf(pos token.Pos, code Code, format string, args ...any) {
	d.list = append(d.list, Diagnostic{Pos: d.fset.Position(pos), Code: code, Msg: fmt.Sprintf(format, args...)})
}
