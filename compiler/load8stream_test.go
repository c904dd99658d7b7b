package compiler

import (
	"strings"
	"testing"
)

// gpu.Load8Stream: Load8's 128-bit load with the streaming hints, .nc
// first where the slice is read-only (the grammar of ld.global.nc), and
// PTX 7.4 for the qualifiers; a shared slice is an error.
func TestLoad8StreamQualifiers(t *testing.T) {
	src := `package k

import "github.com/gokern/kern/gpu"

//kern:kernel nobounds
func K(t gpu.Thread, w []gpu.BFloat16, rw []gpu.BFloat16, out []float32) {
	i := t.GlobalX() * 8
	v := gpu.Load8Stream(w, i)
	u := gpu.Load8Stream(rw, i)
	rw[i] = v[0]
	out[t.GlobalX()] = v[7].Float32() + u[3].Float32()
}
`
	p, err := CompileSource(Config{}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"ld.global.nc.L1::no_allocate.L2::256B.v4.u32", // w: read-only
		"ld.global.L1::no_allocate.L2::256B.v4.u32",    // rw: written too
		".version 7.4",
	} {
		if !strings.Contains(p.PTX, want) {
			t.Errorf("the PTX lacks %q", want)
		}
	}
	bad := strings.Replace(src, "func K(t gpu.Thread", "func K(t gpu.Thread, _ int", 1)
	bad = strings.Replace(bad, "u := gpu.Load8Stream(rw, i)", "sh := gpu.DynShared[gpu.BFloat16](t)\n\tu := gpu.Load8Stream(sh, i)", 1)
	if _, err := CompileSource(Config{}, "k.go", []byte(bad)); err == nil || !strings.Contains(err.Error(), "gpu.Load8Stream needs a slice in global memory") {
		t.Errorf("Load8Stream of shared memory: %v, want the global-memory error", err)
	}
}
