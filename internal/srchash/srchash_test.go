package srchash

import (
	"strings"
	"testing"
)

const src = `package p

// helper doubles.
func helper(x float32) float32 {
	return 2 * x
}

//kern:kernel block=256
func K(t gpu.Thread, x []float32) {
	x[0] = helper(x[0])
}

func one() int { return 1 }

func (s *scaler[T]) Scale(v T) T {
	return v
}

func after() {}

const tile = 16

const (
	modeA = iota
	modeB
)

type pair struct {
	a, b float32
}

type (
	idx  int32
	span [2]int
)
`

func TestFuncTextFindsEachFormWithItsComments(t *testing.T) {
	for _, tc := range []struct{ key, first, last string }{
		{"helper", "// helper doubles.", "}"},
		{"K", "//kern:kernel block=256", "}"},
		{"one", "func one() int { return 1 }", "func one() int { return 1 }"},
		{"scaler.Scale", "func (s *scaler[T]) Scale(v T) T {", "}"},
	} {
		text, ok := DeclText([]byte(src), tc.key)
		if !ok {
			t.Errorf("%s: not found", tc.key)
			continue
		}
		lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
		if lines[0] != tc.first || lines[len(lines)-1] != tc.last {
			t.Errorf("%s: text %q", tc.key, text)
		}
	}
	for _, tc := range []struct{ key, first, last string }{
		{"const tile", "const tile = 16", "const tile = 16"},
		{"const modeB", "const (", ")"},
		{"type pair", "type pair struct {", "}"},
		{"type span", "type (", ")"},
	} {
		text, ok := DeclText([]byte(src), tc.key)
		lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
		if !ok || lines[0] != tc.first || lines[len(lines)-1] != tc.last {
			t.Errorf("%s: %v %q", tc.key, ok, text)
		}
	}
	if _, ok := DeclText([]byte(src), "const mode"); ok {
		t.Error("const mode found (only modeA and modeB exist)")
	}
	if _, ok := DeclText([]byte(src), "Scale"); ok {
		t.Error("a method was found by its bare name")
	}
}

func TestSumChangesWithTheFunctionsOnly(t *testing.T) {
	read := func(s string) func(string) ([]byte, error) {
		return func(string) ([]byte, error) { return []byte(s), nil }
	}
	funcs := []string{"k.go:K", "k.go:helper", "k.go:const tile", "k.go:const modeB", "k.go:type pair"}
	base, err := Sum(funcs, read(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, from, to string
		same           bool
	}{
		{"an unrelated func", "func after() {}", "func after() { _ = 1 }", true},
		{"a blank line between funcs", "\nfunc one()", "\n\nfunc one()", true},
		{"the kernel's body", "x[0] = helper", "x[1] = helper", false},
		{"a helper", "return 2 * x", "return 3 * x", false},
		{"the directive", "block=256", "block=128", false},
		{"a constant", "tile = 16", "tile = 32", false},
		{"an iota group", "modeA = iota", "modeA = iota + 1", false},
		{"a type", "a, b float32", "a, b float64", false},
	} {
		got, err := Sum(funcs, read(strings.Replace(src, tc.from, tc.to, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if (got == base) != tc.same {
			t.Errorf("editing %s: hash %s, before %s", tc.name, got, base)
		}
	}
	if _, err := Sum([]string{"k.go:gone"}, read(src)); err == nil || !strings.Contains(err.Error(), "no gone") {
		t.Errorf("a missing func: %v", err)
	}
}
