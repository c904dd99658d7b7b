package compiler

// A slice held in a struct kept in registers keeps its space and the
// parameters it may address (structptr.go): what gpu/tile's partitions
// need for st.global and for the parameters they do not write to stay
// read-only.

import (
	"strings"
	"testing"
)

const structPtrSrc = `package k

import "github.com/gokern/kern/gpu"

type part struct {
	s    []float32
	rows int
}

func mk(t gpu.Thread, out []float32, n int) part {
	p := part{s: out, rows: n}
	if t.BlockIdx().X > 3 {
		p.rows = 0
	}
	return p
}

func (p part) store(t gpu.Thread, v float32) {
	if i := t.ThreadIdx().X; i < p.rows {
		p.s[i] = v
	}
}

// One writes out through a struct built by a helper.
//
//kern:kernel block=32
func One(t gpu.Thread, in, out []float32, n int) {
	p := mk(t, out, n)
	p.store(t, in[t.ThreadIdx().X])
}

// Either writes a or b, chosen per block: both may be written.
//
//kern:kernel block=32
func Either(t gpu.Thread, in, a, b []float32, n int) {
	p := part{s: a, rows: n}
	if t.BlockIdx().X&1 == 1 {
		p.s = b
	}
	p.store(t, in[t.ThreadIdx().X])
}

// Mixed may point at shared memory or at out: generic, as before.
//
//kern:kernel block=32
func Mixed(t gpu.Thread, in, out []float32, n int) {
	sh := gpu.Shared[float32](t, 32)
	p := part{s: out, rows: n}
	if t.BlockIdx().X&1 == 1 {
		p.s = sh[:]
	}
	p.store(t, in[t.ThreadIdx().X])
	t.Sync()
}
`

func TestStructHeldSlices(t *testing.T) {
	p, err := CompileSource(Config{Arch: "sm_80"}, "k.go", []byte(structPtrSrc))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"One": "out", "Either": "a b", "Mixed": "in out n"}
	for _, k := range p.Kernels {
		var w []string
		for _, prm := range k.Params {
			if prm.Writes {
				w = append(w, prm.Name)
			}
		}
		if got := strings.Join(w, " "); got != want[k.Name] {
			t.Errorf("%s: written parameters %q, want %q", k.Name, got, want[k.Name])
		}
		var stores []string
		for _, l := range pdlEntryLines(t, p.PTX, k.Name) {
			if strings.HasPrefix(l, "st.") && !strings.Contains(l, "kern_error") {
				stores = append(stores, strings.Fields(l)[0])
			}
		}
		wantSt := "st.global.f32"
		if k.Name == "Mixed" {
			wantSt = "st.f32" // shared or global: generic
		}
		if got := strings.Join(stores, " "); got != wantSt {
			t.Errorf("%s: stores %q, want %q", k.Name, got, wantSt)
		}
	}
	if !strings.Contains(p.PTX, "ld.global.nc.f32") {
		t.Error("One's and Either's input is not read through the read-only path")
	}
}

// An array of slices in a struct, written through an element: the
// struct's slots are unknown (generic), never a stale guess.
func TestStructHeldSliceArrays(t *testing.T) {
	src := `package k

import "github.com/gokern/kern/gpu"

type two struct {
	s [2][]float32
}

//kern:kernel block=32
func K(t gpu.Thread, in, a, b []float32) {
	p := two{s: [2][]float32{a, a}}
	p.s[1] = b
	v := p
	v.s[t.BlockIdx().X&1][t.ThreadIdx().X] = in[t.ThreadIdx().X]
}
`
	p, err := CompileSource(Config{Arch: "sm_80"}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, prm := range p.Kernels[0].Params {
		if prm.Name == "b" && !prm.Writes {
			t.Errorf("b is written through p.s[1] but not marked written")
		}
	}
}
