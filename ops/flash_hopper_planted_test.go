package ops

// Planted bugs in the Hopper attention kernel: its source with one
// mistake, compiled for sm_90a and run on the emulator in place of the
// real kernel, must fail there as it would on a GPU: wrong results (a
// wrong swizzle, a wgmma result read before wgmma.wait_group), or a
// sanitizer finding or error (a skipped or wrong-phase mbarrier wait); a
// skipped wait must be named by racecheck.

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/compiler"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/attnh"
)

func TestFlashAttentionHopperPlantedBugs(t *testing.T) {
	needGoCommand(t)
	src, err := os.ReadFile("internal/attnh/flash.go")
	if err != nil {
		t.Fatal(err)
	}
	// Each bug must give wrong results or an error; hazard also wants a
	// racecheck finding naming it.
	bugs := []struct {
		name, old, new string
		hazard         bool
	}{
		{"wrong swizzle on V", "\n\tvd := gpu.WGMMADesc(t, &sm[qTile+kvTile*(Stages+sv)], FlashN*Chunk*2, 1024, gpu.Swizzle128B)", "\n\tvd := gpu.WGMMADesc(t, &sm[qTile+kvTile*(Stages+sv)], FlashN*Chunk*2, 1024, gpu.Swizzle64B)", false},
		{"wrong swizzle on K", "kd := gpu.WGMMADesc(t, &sm[qTile+kvTile*s], 0, 1024, gpu.Swizzle128B)", "kd := gpu.WGMMADesc(t, &sm[qTile+kvTile*s], 0, 1024, gpu.SwizzleNone)", false},
		{"missing wgmma.wait_group before the mask", "\t\tgpu.WGMMAWaitGroup(t, 0) // S_j and P·V_{j-1} are complete\n", "", false},
		{"missing wgmma.wait_group before the softmax", "\t\tgpu.WGMMAWaitGroup(t, 1) // S_j is complete; P·V_{j-1} may run on\n", "", false},
		{"V released under a running P·V", "\tgpu.WGMMAWaitGroup(t, 0)                // P·V_{j-1} is complete\n", "", false},
		{"skipped wait on full K", "for !gpu.MbarrierTryWait(t, &bars[fullK+s], ph) {", "for false && !gpu.MbarrierTryWait(t, &bars[fullK+s], ph) {", true},
		{"skipped wait on full V", "for !gpu.MbarrierTryWait(t, &bars[fullV+sv], phv) {", "for false && !gpu.MbarrierTryWait(t, &bars[fullV+sv], phv) {", true},
		{"skipped wait on the ragged V tile", "for !gpu.MbarrierTryWait(t, &bars[ragged], 0) {", "for false && !gpu.MbarrierTryWait(t, &bars[ragged], 0) {", true},
		{"wrong phase on full K", "for !gpu.MbarrierTryWait(t, &bars[fullK+s], ph) {", "for !gpu.MbarrierTryWait(t, &bars[fullK+s], ph^1) {", false},
	}
	for _, b := range bugs {
		t.Run(b.name, func(t *testing.T) {
			if strings.Count(string(src), b.old) != 1 {
				t.Fatalf("the kernel source no longer has %q once", b.old)
			}
			planted := strings.Replace(string(src), b.old, b.new, 1)
			p, err := compiler.CompileSource(compiler.Config{Arch: "sm_90a"}, "flash.go", []byte(planted))
			if err != nil {
				t.Fatal(err)
			}
			spec := *attnh.FlashF16D128Kernel.Kernel().Spec()
			spec.Module = &kern.Module{Pkg: spec.Pkg + "_planted", Arch: "sm_90a", PTX: p.PTX}
			spec.Source, spec.SourceHash = nil, ""
			hopperKernelForTest = kern.NewKernel(spec)
			defer func() { hopperKernelForTest = nil }()
			wrong, err := runPlanted(t, emu.Options{Racecheck: true, Synccheck: true})
			t.Logf("%d wrong outputs, err %v", wrong, firstLine(err))
			if wrong == 0 && err == nil {
				t.Errorf("%s: right results and no error", b.name)
			}
			var rep *emu.Report
			if b.hazard && !(errors.As(err, &rep) && strings.Contains(rep.Error(), "racecheck: read-after-write hazard")) {
				t.Errorf("%s: no racecheck hazard in %v", b.name, err)
			}
		})
	}
}

func firstLine(err error) string {
	if err == nil {
		return "<nil>"
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// runPlanted runs a headDim-128 f16 causal case of up to 6 key tiles per
// block (128 keys each: each stage of the rings used three times) through the
// kernel under test and counts outputs far from float64 (a loose bound:
// the real kernel's errors are 100 times smaller).
func runPlanted(t *testing.T, opts emu.Options) (wrong int, err error) {
	forceHopper = true
	defer func() { forceHopper = false }()
	dev := kern.OpenEmulator(opts)
	defer dev.Close()
	c := attnCase{lq: []int{150}, lk: []int{650}, heads: 2, kvHeads: 1, hd: 128, causal: true}
	rng := rand.New(rand.NewPCG(5, 6))
	q, qw := upload[gpu.Half](t, dev, randn(rng, 150*2*128, 1))
	k, kw := upload[gpu.Half](t, dev, randn(rng, 650*128, 1))
	v, vw := upload[gpu.Half](t, dev, randn(rng, 650*128, 1))
	out := alloc[gpu.Half](t, dev, 150*2*128)
	cuQ, cuK := uploadT(t, dev, SeqOffsets(150)), uploadT(t, dev, SeqOffsets(650))
	a := Attention{Heads: 2, KVHeads: 1, HeadDim: 128, Causal: true, MaxSeqQ: 150}
	err = FlashAttention(dev, out, q, k, v, nil, cuQ, cuK, a)
	var rep *emu.Report
	if err != nil && !errors.As(err, &rep) && !errors.Is(err, emu.ErrDeadlock) && !errors.Is(err, emu.ErrMbarrier) {
		return 0, err
	}
	want, _, _, _ := attnRef(c, qw, kw, vw, float64(a.scale()))
	got := download(t, out)
	for i := range want {
		if d := math.Abs(got[i] - want[i]); !(d <= 0.05+0.05*math.Abs(want[i])) {
			wrong++
		}
	}
	return wrong, err
}

// needGoCommand skips a test that compiles kernel source (go/packages runs
// the go command) where there is none: a test binary carried to a GPU
// machine without a Go toolchain. CI has one and never skips.
func needGoCommand(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil && os.Getenv("CI") != "true" {
		t.Skipf("compiling planted kernels needs the go command: %v", err)
	}
}
