package compiler

// Programmatic dependent launch (lower_pdl.go): where the griddepcontrol
// instructions go, their comment form below sm_90, and that both forms
// assemble and run.

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/internal/ptxas"
	"github.com/gokern/kern/internal/ptxpatch"
)

const pdlSrc = `package k

import "github.com/gokern/kern/gpu"

// Entry waits at its entry (the option).
//
//kern:kernel block=64 pdl
func Entry(t gpu.Thread, x, y []float32) {
	if i := t.GlobalX(); i < len(y) {
		y[i] = 2 * x[i]
	}
}

// Early reads w before it waits: w is no earlier kernel's output.
//
//kern:kernel block=64 pdl
func Early(t gpu.Thread, w, x, y []float32) {
	i := t.GlobalX()
	var a float32
	if i < len(w) {
		a = w[i]
	}
	gpu.WaitPriorGrids(t)
	if i < len(y) {
		y[i] = a * x[i]
	}
}

// Own places the wait itself, without the option: no early launch.
//
//kern:kernel block=64
func Own(t gpu.Thread, x, y []float32) {
	gpu.WaitPriorGrids(t)
	if i := t.GlobalX(); i < len(y) {
		y[i] = x[i] + 1
	}
}

//kern:kernel block=64
func Plain(t gpu.Thread, x, y []float32) {
	if i := t.GlobalX(); i < len(y) {
		y[i] = x[i]
	}
}
`

// pdlEntryLines returns the lines of one .entry's body.
func pdlEntryLines(t *testing.T, ptx, name string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(ptx, ".entry "+name+"(")
	if !ok {
		t.Fatalf("no entry %s", name)
	}
	body, _, _ := strings.Cut(rest, "\n}\n")
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, ".loc") {
			out = append(out, l)
		}
	}
	return out
}

func TestPDLPlacement(t *testing.T) {
	for _, arch := range []string{"sm_80", "sm_90"} {
		p, err := CompileSource(Config{Arch: arch}, "k.go", []byte(pdlSrc))
		if err != nil {
			t.Fatal(err)
		}
		pre := ""
		if arch == "sm_80" {
			pre = ptxpatch.PDLPrefix
		}
		wait, launch := pre+"griddepcontrol.wait;", pre+"griddepcontrol.launch_dependents;"
		pdl := map[string]bool{}
		for _, k := range p.Kernels {
			pdl[k.Name] = k.PDL
		}
		if want := map[string]bool{"Entry": true, "Early": true, "Own": true, "Plain": false}; !equalMaps(pdl, want) {
			t.Errorf("%s: Kernel.PDL %v, want %v", arch, pdl, want)
		}
		// order lists where the two instructions and the global memory
		// accesses come in an entry's body.
		order := func(name string) string {
			var o []string
			for _, l := range pdlEntryLines(t, p.PTX, name) {
				switch {
				case l == wait:
					o = append(o, "wait")
				case l == launch:
					o = append(o, "launch")
				case strings.Contains(l, "kern_error"): // the failure handler
				case strings.HasPrefix(l, "ld.global"), strings.HasPrefix(l, "st.global"):
					o = append(o, l[:2])
				case strings.Contains(l, "griddepcontrol"):
					t.Errorf("%s %s: unexpected %q", arch, name, l)
				}
			}
			return strings.Join(o, " ")
		}
		for name, want := range map[string]string{
			"Entry": "launch wait ld st",
			"Early": "launch ld wait ld st",
			"Own":   "wait ld st",
			"Plain": "ld st",
		} {
			if got := order(name); got != want {
				t.Errorf("%s %s: %q, want %q", arch, name, got, want)
			}
		}
		if arch == "sm_90" && !strings.Contains(p.PTX, ".version 7.8") && !strings.Contains(p.PTX, ".version 8.") {
			t.Errorf("sm_90: griddepcontrol needs PTX ISA 7.8:\n%.200s", p.PTX)
		}
		archs := []string{"sm_80", "sm_90"} // sm_90: the sm_80 module as a 9.0 GPU loads it
		if arch == "sm_90" {
			archs = archs[1:]
		}
		ptxas.Check(t, "pdl_"+arch, []byte(p.PTX), archs...)
	}
}

func equalMaps(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestPDLRunsOnTheEmulator runs the sm_80 module as written and as a
// compute capability 9.0 GPU loads it: the same results.
func TestPDLRunsOnTheEmulator(t *testing.T) {
	p, err := CompileSource(Config{Arch: "sm_80"}, "k.go", []byte(pdlSrc))
	if err != nil {
		t.Fatal(err)
	}
	on, ok := ptxpatch.EnableSM90(p.PTX)
	if !ok {
		t.Fatal("no sm_90 lines in the module")
	}
	const n = 100
	for _, src := range []string{p.PTX, on} {
		dev := emu.NewDevice(emu.Options{})
		m, err := emu.Load([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		buf := func(f func(i int) float32) uint64 {
			b := make([]byte, 4*n)
			for i := range n {
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f(i)))
			}
			a, _ := dev.Alloc(len(b))
			if err := dev.Write(a, b); err != nil {
				t.Fatal(err)
			}
			return a
		}
		w, x, y := buf(func(i int) float32 { return float32(i%7) - 3 }), buf(func(i int) float32 { return float32(i) / 4 }), buf(func(int) float32 { return 0 })
		params := make([]byte, 48)
		for i, a := range []uint64{w, n, x, n, y, n} {
			binary.LittleEndian.PutUint64(params[8*i:], a)
		}
		if err := dev.Launch(m, "Early", emu.LaunchConfig{Grid: [3]int{2, 1, 1}, Block: [3]int{64, 1, 1}, Params: params}); err != nil {
			t.Fatal(err)
		}
		out := make([]byte, 4*n)
		if err := dev.Read(y, out); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			want := (float32(i%7) - 3) * (float32(i) / 4)
			if got := math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:])); got != want {
				t.Fatalf("y[%d] = %v, want %v", i, got, want)
			}
		}
	}
}
