//go:build gpu

package kern_test

// Run on a machine with an NVIDIA GPU: go test -tags gpu -run GPUPDL .

import (
	"testing"

	"github.com/gokern/kern"
	tk "github.com/gokern/kern/internal/testkernels"
)

// TestGPUPDLChainKeepsItsOrder runs a chain of pdl kernels in which each
// reads what the one before it wrote (u and v in turn, several waves of
// blocks each), on a stream and replayed as a graph: with programmatic
// dependent launch on (compute capability 9.0+) each must still see its
// predecessor's every write, so the result is the host's, exactly.
func TestGPUPDLChainKeepsItsOrder(t *testing.T) {
	dev, err := kern.OpenCUDA(0)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	t.Logf("%s: PDL %v", dev, dev.PDL())
	const n, steps = 1 << 21, 64
	u0, v0 := make([]float32, n), make([]float32, n)
	for i := range n {
		u0[i], v0[i] = float32(i%13)-6, float32(i%5)
	}
	// chain: v = u + v, then u = u - v, steps times: two steps map
	// (u, v) to (-v, u+v), a map of period 6, so every value stays a
	// small integer, exact in float32.
	want := func(reps int) (u, v []float32) {
		u, v = append([]float32(nil), u0...), append([]float32(nil), v0...)
		for range reps {
			for s := range steps {
				a := float32(1 - 2*(s%2))
				if s%2 == 0 {
					for i := range v {
						v[i] = a*u[i] + v[i]
					}
				} else {
					for i := range u {
						u[i] = a*v[i] + u[i]
					}
				}
			}
		}
		return u, v
	}
	u, _ := kern.Upload(dev, u0)
	v, _ := kern.Upload(dev, v0)
	s, err := dev.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	chain := func(s *kern.Stream) error {
		for st := range steps {
			a := float32(1 - 2*(st%2))
			x, y := u, v
			if st%2 == 1 {
				x, y = v, u
			}
			if err := tk.AxpyPDLKernel.Launch(s, kern.Cover(n), a, x, y); err != nil {
				return err
			}
		}
		return nil
	}
	check := func(what string, reps int) {
		t.Helper()
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
		wu, wv := want(reps)
		gu, _ := u.Download()
		gv, _ := v.Download()
		for i := range n {
			if gu[i] != wu[i] || gv[i] != wv[i] {
				t.Fatalf("%s: element %d: u %v v %v, want %v %v", what, i, gu[i], gv[i], wu[i], wv[i])
			}
		}
	}
	if err := chain(s); err != nil {
		t.Fatal(err)
	}
	check("stream", 1)
	g, err := s.Capture(chain)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for range 3 {
		if err := g.Launch(s); err != nil {
			t.Fatal(err)
		}
	}
	check("graph", 4)
}
