package compiler

// gpu.ThreadFence: the grid-wide hand-off it exists for (store, fence,
// arrive; the last to arrive fences and reads) keeps its order in the PTX.

import (
	"strings"
	"testing"
)

func TestThreadFenceOrdersTheHandOff(t *testing.T) {
	src := `package k

import "github.com/gokern/kern/gpu"

//kern:kernel nobounds
func K(t gpu.Thread, part, out []float32, cnt []uint32) {
	b := t.BlockIdx().X
	part[b] = float32(b)
	gpu.ThreadFence(t)
	if gpu.AtomicAdd(&cnt[0], 1) == uint32(t.GridDim().X-1) {
		gpu.ThreadFence(t)
		s := float32(0)
		for i := range t.GridDim().X {
			s += part[i]
		}
		out[0] = s
	}
}
`
	for _, arch := range []string{"sm_70", "sm_80", "sm_90"} {
		p, err := CompileSource(Config{Arch: arch}, "k.go", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		for _, line := range strings.Split(p.PTX, "\n") {
			l := strings.TrimSpace(line)
			for _, op := range []string{"st.global", "fence.acq_rel.gpu", "atom.global.add", "ld.global"} {
				if strings.HasPrefix(l, op) {
					order = append(order, op)
				}
			}
		}
		got := strings.Join(order, " ")
		// The partial's load must not be the non-coherent ld.global.nc: it
		// reads what other blocks stored during the kernel.
		if want := "st.global fence.acq_rel.gpu atom.global.add fence.acq_rel.gpu ld.global st.global"; got != want {
			t.Errorf("%s: memory operations %q, want %q", arch, got, want)
		}
		if strings.Contains(p.PTX, "ld.global.nc.f32") {
			t.Errorf("%s: the partials are read with ld.global.nc", arch)
		}
	}
}
