package compiler

// Directives that would otherwise be ignored in silence: a misspelt
// //kern: name, "// kern:kernel" (a space makes it a plain comment), and
// //kern:kernel anywhere but directly above a func. Each would leave the
// package with fewer kernels than its author wrote, and kern gen would
// say only "no kernels" (or nothing), so each is a BadDirective.

import (
	"go/ast"
	"regexp"
	"strings"
)

// knownDirectives are the //kern: directives the compiler reads.
var knownDirectives = []string{"kernel", "unroll", "nounroll", "arch", "library"}

// spacedDirective matches a comment that looks like a kern directive with
// a space after the slashes.
var spacedDirective = regexp.MustCompile(`^//\s+kern:(\w+)`)

// checkDirectives reports the misplaced and misspelt directives of f.
func (c *pkgCtx) checkDirectives(f *ast.File) {
	attached := map[*ast.Comment]bool{}
	declOf := map[*ast.CommentGroup]string{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Doc != nil {
				for _, cm := range d.Doc.List {
					attached[cm] = true
				}
			}
		case *ast.GenDecl:
			if d.Doc != nil {
				declOf[d.Doc] = d.Tok.String()
			}
			for _, s := range d.Specs {
				if vs, ok := s.(*ast.ValueSpec); ok && vs.Doc != nil {
					declOf[vs.Doc] = d.Tok.String()
				}
				if ts, ok := s.(*ast.TypeSpec); ok && ts.Doc != nil {
					declOf[ts.Doc] = "type"
				}
			}
		}
	}
	for _, cg := range f.Comments {
		for _, cm := range cg.List {
			text := cm.Text
			if m := spacedDirective.FindStringSubmatch(text); m != nil && isKnownDirective(m[1]) {
				c.d.errorf(cm.Pos(), BadDirective, "%q is a comment, not a directive: write //kern:%s with no space after //", firstLine(text), m[1])
				continue
			}
			if !strings.HasPrefix(text, "//kern:") {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimPrefix(text, "//kern:"), " ")
			switch {
			case !isKnownDirective(name):
				hint := ""
				if near := nearestDirective(name); near != "" {
					hint = ": did you mean //kern:" + near + "?"
				}
				c.d.errorf(cm.Pos(), BadDirective, "unknown directive //kern:%s%s (kern knows //kern:kernel, //kern:unroll, //kern:nounroll, //kern:arch and //kern:library)", name, hint)
			case name == "kernel" && !attached[cm]:
				if tok, ok := declOf[cg]; ok {
					c.d.errorf(cm.Pos(), BadDirective, "//kern:kernel is on a %s declaration; it marks a func", tok)
				} else {
					c.d.errorf(cm.Pos(), BadDirective, "//kern:kernel is not attached to a func: put it in the func's doc comment, directly above func with no blank line")
				}
			}
		}
	}
}

func isKnownDirective(name string) bool {
	for _, k := range knownDirectives {
		if name == k {
			return true
		}
	}
	return false
}

// nearestDirective returns the known directive within edit distance 2 of
// name, or "".
func nearestDirective(name string) string {
	for _, k := range knownDirectives {
		if editDistance(name, k) <= 2 {
			return k
		}
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
