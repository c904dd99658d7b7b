package compiler

// Programmatic dependent launch (lower_pdl.go): where the griddepcontrol
// instructions go, their comment form below sm_90, and that both forms
// assemble and run.

import (
	"encoding/binary"
	"errors"
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

const pdlCheckSrc = `package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=32
func Produce(t gpu.Thread, y []float32) {
	if i := t.GlobalX(); i < len(y) {
		y[i] = float32(i)
	}
}

// ReadEarly reads y, which Produce wrote, before it waits.
//
//kern:kernel block=32
func ReadEarly(t gpu.Thread, y, z []float32) {
	i := t.GlobalX()
	v := y[i]
	gpu.WaitPriorGrids(t)
	z[i] = v
}

// WriteEarly writes z before it waits.
//
//kern:kernel block=32
func WriteEarly(t gpu.Thread, y, z []float32) {
	i := t.GlobalX()
	z[i] = 1
	gpu.WaitPriorGrids(t)
	z[i] = y[i]
}

// Good reads w (nobody's output) early and y after the wait.
//
//kern:kernel block=32
func Good(t gpu.Thread, w, y, z []float32) {
	i := t.GlobalX()
	a := w[i]
	gpu.WaitPriorGrids(t)
	z[i] = a * y[i]
}
`

// TestPDLCheck: the emulator's pdlcheck reports a pdl kernel's read,
// before its wait, of what the launch before it wrote, and any write
// before the wait, naming the writer; a kernel that keeps the contract,
// and a launch without PDL, are clean.
func TestPDLCheck(t *testing.T) {
	p, err := CompileSource(Config{Arch: "sm_80"}, "k.go", []byte(pdlCheckSrc))
	if err != nil {
		t.Fatal(err)
	}
	const n = 32
	for _, c := range []struct {
		kernel string
		pdl    bool
		want   string // "" for no finding
	}{
		{"ReadEarly", true, "global read of 4 bytes before griddepcontrol.wait"},
		{"WriteEarly", true, "global store of 4 bytes before griddepcontrol.wait"},
		{"Good", true, ""},
		{"ReadEarly", false, ""},
	} {
		dev := emu.NewDevice(emu.Options{PDLcheck: true})
		on, _ := ptxpatch.EnableSM90(p.PTX) // as an H100 runs it: the waits are instructions
		m, err := emu.Load([]byte(on))
		if err != nil {
			t.Fatal(err)
		}
		buf := func() uint64 {
			a, _ := dev.Alloc(4 * n)
			return a
		}
		w, y, z := buf(), buf(), buf()
		params := func(bufs ...uint64) []byte {
			b := make([]byte, 16*len(bufs))
			for i, a := range bufs {
				binary.LittleEndian.PutUint64(b[16*i:], a)
				binary.LittleEndian.PutUint64(b[16*i+8:], n)
			}
			return b
		}
		cfg := emu.LaunchConfig{Grid: [3]int{1, 1, 1}, Block: [3]int{32, 1, 1}, Params: params(y)}
		if err := dev.Launch(m, "Produce", cfg); err != nil {
			t.Fatal(err)
		}
		args := params(y, z)
		if c.kernel == "Good" {
			args = params(w, y, z)
		}
		err = dev.Launch(m, c.kernel, emu.LaunchConfig{Grid: [3]int{1, 1, 1}, Block: [3]int{32, 1, 1}, Params: args, PDL: c.pdl})
		var rep *emu.Report
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s (pdl %v): %v", c.kernel, c.pdl, err)
		case c.want != "" && !errors.As(err, &rep):
			t.Errorf("%s (pdl %v): %v, want a pdlcheck report", c.kernel, c.pdl, err)
		case c.want != "":
			f := rep.Findings[0]
			if f.Tool != "pdlcheck" || f.What != c.want || f.Line == 0 {
				t.Errorf("%s: finding %v, want pdlcheck %q with its Go line", c.kernel, f.String(), c.want)
			}
			if c.kernel == "ReadEarly" && !strings.Contains(f.Detail, "Produce wrote them") {
				t.Errorf("%s: detail %q does not name Produce", c.kernel, f.Detail)
			}
		}
	}
}
