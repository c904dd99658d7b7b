package compiler

// gpu.PrefetchL2 (lower_prefetch.go): what the golden kernels of
// testdata/prefetch.go claim, the global-memory requirement, and, on the
// emulator, that exactly the lanes whose index is in range execute the
// prefetch while the kernel's result is the one without it.

import (
	"encoding/binary"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/gokern/kern/emu"
)

func init() {
	goldenChecks["prefetch"] = func(t *testing.T, p *Package) {
		guarded := `^@%p\d+ prefetch\.global\.L2 \[%rd\d+\];$`
		plain := `^prefetch\.global\.L2 \[%rd\d+\];$`
		// next+32·i is unknown: predicated, and issued before the grid
		// barrier's arrival (its atom.global.add), which it must not
		// cross.
		body := entryBody(t, p, "NextPhase")
		if countLines(body, guarded) != 1 || countLines(body, plain) != 0 {
			t.Errorf("NextPhase: want one predicated prefetch:\n%s", body)
		}
		if pf, arrive := strings.Index(body, "prefetch.global.L2"), strings.Index(body, "atom.global.add"); pf < 0 || arrive < 0 || pf > arrive {
			t.Errorf("NextPhase: the prefetch (at %d) is not before the grid barrier (at %d)", pf, arrive)
		}
		// The guard i < len(w), the unsigned guard, and tid.x < 128 ≤
		// len(w[:256]): all three proven, none predicated.
		body = entryBody(t, p, "Proven")
		if countLines(body, plain) != 3 || countLines(body, guarded) != 0 {
			t.Errorf("Proven: want three unpredicated prefetches:\n%s", body)
		}
		// w[3] predicated (w may be shorter), w[-1] and w[:8][8] gone,
		// w[:8][7] plain, w[k] predicated.
		body = entryBody(t, p, "Consts")
		if countLines(body, guarded) != 2 || countLines(body, plain) != 1 {
			t.Errorf("Consts: want two predicated prefetches and one plain:\n%s", body)
		}
		mustContain(t, p, "Consts", `^setp\.lo\.u64 %p\d+, 3, %rd\d+;$`)
		mustContain(t, p, "Consts", `^add\.s64 %rd\d+, %rd\d+, 56;$`) // &w[7]
		// nobounds leaves out checks, not the prefetch's predicate.
		mustContain(t, p, "NoBounds", guarded)
		mustNotContain(t, p, "NoBounds", `kern_error`)
		// PrefetchL2Bulk on sm_80: one prefetch per line, in a loop that
		// is skipped for an empty range (prefetch_bulk_test.go has the
		// sm_90 form and the range).
		mustContain(t, p, "Rows", plain)
		mustContain(t, p, "Rows", `^@%p\d+ bra \$L\d+_prefetch_lines;$`)
		mustContain(t, p, "Rows", `^add\.u64 %rd\d+, %rd\d+, 128;$`)
		mustNotContain(t, p, "Rows", `cp\.async`)
		if w := writes(kernelOf(t, p, "Proven")); w != "w=false out=false" {
			t.Errorf("Proven: a prefetch is no write: %s", w)
		}
	}
}

// A slice in shared memory is an error at the call, as for the other
// global-only intrinsics.
func TestPrefetchL2NeedsGlobalMemory(t *testing.T) {
	src := `package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=64
func K(t gpu.Thread, w []float32) {
	sh := gpu.Shared[float32](t, 64)
	gpu.PrefetchL2(sh, t.ThreadIdx().X)
	gpu.PrefetchL2(w, t.GlobalX())
}
`
	_, err := CompileSource(Config{}, "k.go", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "k.go:8:16") || !strings.Contains(err.Error(), "gpu.PrefetchL2 needs a slice in global memory") {
		t.Errorf("PrefetchL2 of shared memory: %v, want the global-memory error at k.go:8:16", err)
	}
}

// prefetchSteps records, per warp, the lanes that executed a prefetch,
// and any memory access a prefetch made.
type prefetchSteps struct {
	mu       sync.Mutex
	exec     map[[2]int]uint32 // block x, warp → lanes past the guard
	accessed int
}

func (o *prefetchSteps) Step(s *emu.Step) {
	if strings.HasPrefix(s.Instr, "prefetch") {
		o.mu.Lock()
		o.exec[[2]int{s.Block[0], s.Warp}] |= s.Exec
		o.mu.Unlock()
	}
}

func (o *prefetchSteps) Access(a *emu.Access) {
	if strings.HasPrefix(a.Instr, "prefetch") {
		o.mu.Lock()
		o.accessed++
		o.mu.Unlock()
	}
}

func TestPrefetchL2PredicatedOnTheEmulator(t *testing.T) {
	src := `package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=64
func K(t gpu.Thread, w, out []float32, off int) {
	i := t.GlobalX()
	gpu.PrefetchL2(w, i+off)
	if i < len(out) && i < len(w) {
		out[i] = w[i] * 2
	}
}
`
	p, err := CompileSource(Config{}, "k.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	m, err := emu.Load([]byte(p.PTX))
	if err != nil {
		t.Fatal(err)
	}
	const blocks, threads, n = 3, 64, 150
	w := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(w[4*i:], math.Float32bits(float32(i)-7.5))
	}
	for _, off := range []int64{0, -10, 140, n, 1 << 40, -1 << 40, math.MinInt64 + 1000} {
		obs := &prefetchSteps{exec: map[[2]int]uint32{}}
		dev := emu.NewDevice(emu.Options{Observer: obs, Memcheck: true})
		pw, _ := dev.Alloc(len(w))
		pout, _ := dev.Alloc(len(w))
		if err := dev.Write(pw, w); err != nil {
			t.Fatal(err)
		}
		prm := binary.LittleEndian.AppendUint64(nil, pw)
		prm = binary.LittleEndian.AppendUint64(prm, n)
		prm = binary.LittleEndian.AppendUint64(prm, pout)
		prm = binary.LittleEndian.AppendUint64(prm, n)
		prm = binary.LittleEndian.AppendUint64(prm, uint64(off))
		if err := dev.Launch(m, "K", emu.LaunchConfig{Grid: [3]int{blocks, 1, 1}, Block: [3]int{threads, 1, 1}, Params: prm}); err != nil {
			t.Fatalf("off %d: %v", off, err)
		}
		for b := range blocks {
			for wi := range threads / 32 {
				var want uint32
				for l := range 32 {
					if j := int64(b*threads+wi*32+l) + off; j >= 0 && j < n {
						want |= 1 << l
					}
				}
				if got := obs.exec[[2]int{b, wi}]; got != want {
					t.Errorf("off %d block %d warp %d: lanes %#08x prefetched, want %#08x", off, b, wi, got, want)
				}
			}
		}
		if obs.accessed != 0 {
			t.Errorf("off %d: the prefetch made %d memory accesses", off, obs.accessed)
		}
		got := make([]byte, len(w))
		if err := dev.Read(pout, got); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			want := 2 * (float32(i) - 7.5) // exact: a multiple of 0.5 times 2
			if v := math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:])); v != want {
				t.Fatalf("off %d: out[%d] = %v, want %v", off, i, v, want)
			}
		}
	}
}
