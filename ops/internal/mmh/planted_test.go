package mmh

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/compiler"
	"github.com/gokern/kern/gpu"
	epi "github.com/gokern/kern/ops/internal/epilogue"
)

// The planted bugs: each is a text edit of the kernel's source that a GPU
// would punish with wrong results or a hang; the emulator must catch each
// one (a launch error, or results that differ from float64), while the
// unedited source, compiled and run the same way, must be exact.
var plantedBugs = []struct{ name, old, new string }{
	{"none", "", ""},
	{"skipped full wait", "for !gpu.MbarrierTryWait(t, &full[s], phase) {\n\t\t\t}", ""},
	{"skipped empty wait", "for !gpu.MbarrierTryWait(t, &empty[s], phase^1) {\n\t\t\t\t}", ""},
	{"wrong A swizzle", "&sm[(wg-1)*64*BK], 0, 1024, gpu.Swizzle128B)", "&sm[(wg-1)*64*BK], 0, 1024, gpu.Swizzle64B)"},
	{"wrong B swizzle", "&sm[stages*boxA], 0, 1024, gpu.Swizzle128B)", "&sm[stages*boxA], 0, 512, gpu.Swizzle64B)"},
	{"missing wait_group", "\t\tgpu.WGMMAWaitGroup(t, 0)\n", "\n"},
	{"last stage not released", "if ktiles > 0 && lane0 {", "if false {"},
}

// TestPlantedBugs compiles the package's kernel source with each planted
// bug and runs GemmF16F32 on the emulator: 150×136×328, so there are
// ragged tiles in m and n, more k tiles (6) than stages (2), and two
// persistent blocks of two tiles each.
func TestPlantedBugs(t *testing.T) {
	src := kernelSource(t)
	const m, n, k = 150, 136, 328
	dev := kern.OpenEmulator()
	defer dev.Close()
	r := rand.New(rand.NewPCG(1, 2))
	// Multiples of 1/4 in [-1, 1]: every product is a multiple of 1/16
	// and every sum of 328 of them is exact in float32.
	av, wv := make([]gpu.Half, m*k), make([]gpu.Half, n*k)
	af, wf := make([]float64, m*k), make([]float64, n*k)
	for i := range av {
		af[i] = float64(r.IntN(9)-4) / 4
		av[i] = gpu.ToHalf(float32(af[i]))
	}
	for i := range wv {
		wf[i] = float64(r.IntN(9)-4) / 4
		wv[i] = gpu.ToHalf(float32(wf[i]))
	}
	a, err := kern.Upload(dev, av)
	if err != nil {
		t.Fatal(err)
	}
	w, err := kern.Upload(dev, wv)
	if err != nil {
		t.Fatal(err)
	}
	box := [2]int{BoxK, BoxRows}
	amap, err := dev.TensorMap(a, kern.TensorMapSpec{Dims: [2]int{k, m}, Box: box, Swizzle: gpu.Swizzle128B})
	if err != nil {
		t.Fatal(err)
	}
	wmap, err := dev.TensorMap(w, kern.TensorMapSpec{Dims: [2]int{k, n}, Box: box, Swizzle: gpu.Swizzle128B})
	if err != nil {
		t.Fatal(err)
	}
	empty, _ := kern.Alloc[float32](dev, 0)
	for _, bug := range plantedBugs {
		t.Run(bug.name, func(t *testing.T) {
			s := src
			if bug.old != "" {
				if !strings.Contains(s, bug.old) {
					t.Fatalf("the source no longer contains %q: update the planted bug", bug.old)
				}
				s = strings.Replace(s, bug.old, bug.new, 1)
			}
			kernel := compileGemm(t, s)
			c, err := kern.Alloc[float32](dev, m*n)
			if err != nil {
				t.Fatal(err)
			}
			// Two persistent blocks for the four tiles: each walks two.
			grid := kern.Blocks(gpu.Dim3{X: 2, Y: 1, Z: 1}, gpu.Dim3{X: Threads, Y: 1, Z: 1}).WithShared(SharedBytes(2))
			err = kernel.Launch(dev, grid, c, amap, wmap, empty, empty, kern.ScalarArg(m), kern.ScalarArg(n), kern.ScalarArg(k), kern.ScalarArg(epi.None), kern.ScalarArg(2))
			var wrong int
			var first string
			if err == nil {
				got, derr := c.Download()
				if derr != nil {
					t.Fatal(derr)
				}
				for i := range m {
					for j := range n {
						var want float64
						for l := range k {
							want += af[i*k+l] * wf[j*k+l]
						}
						if g := float64(got[i*n+j]); g != want || math.IsNaN(g) {
							if wrong == 0 {
								first = fmt.Sprintf("C[%d][%d] = %v, want %v", i, j, g, want)
							}
							wrong++
						}
					}
				}
			}
			switch {
			case bug.old == "" && (err != nil || wrong > 0):
				t.Fatalf("the kernel as written: %v; %d wrong, first %s", err, wrong, first)
			case bug.old != "" && err == nil && wrong == 0:
				t.Fatalf("planted bug %q: every value right and no error", bug.name)
			case bug.old != "":
				t.Logf("caught: error %v; %d of %d wrong (%s)", err, wrong, m*n, first)
			}
		})
	}
}

// kernelSource is gemm.go and epilogue.go as one file (CompileSource
// takes one).
func kernelSource(t *testing.T) string {
	t.Helper()
	g, err := os.ReadFile("gemm.go")
	if err != nil {
		t.Fatal(err)
	}
	e, err := os.ReadFile("epilogue.go")
	if err != nil {
		t.Fatal(err)
	}
	// One file for compiler.CompileSource: gemm.go, then epilogue.go and
	// the epilogue library it calls (ops/internal/epilogue) after their
	// imports, the library's names unqualified.
	lib, err := os.ReadFile(filepath.Join("..", "epilogue", "epilogue.go"))
	if err != nil {
		t.Fatal(err)
	}
	const imp = "import \"github.com/gokern/kern/gpu\"\n"
	const impEpi = "import (\n\t\"github.com/gokern/kern/gpu\"\n\tepi \"github.com/gokern/kern/ops/internal/epilogue\"\n)\n"
	body, lb := string(e), string(lib)
	i, j := strings.Index(body, impEpi), strings.Index(lb, imp)
	if i < 0 || j < 0 || !strings.Contains(string(g), imp) {
		t.Fatalf("gemm.go and the epilogue library must each import only package gpu, as %q, and epilogue.go gpu and the library, as %q", imp, impEpi)
	}
	return string(g) + strings.ReplaceAll(body[i+len(impEpi):], "epi.", "") + lb[j+len(imp):]
}

// compileGemm compiles src for sm_90a and returns its GemmF16F32 as a
// kernel with the generated launcher's parameters.
func compileGemm(t *testing.T, src string) *kern.Kernel {
	t.Helper()
	p, err := compiler.CompileSource(compiler.Config{Arch: "sm_90a"}, "gemm.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	spec := *GemmF16F32Kernel.Kernel().Spec()
	spec.Module = &kern.Module{Pkg: "planted/mmh", Arch: "sm_90a", PTX: p.PTX}
	spec.Native, spec.Source, spec.SourceHash = nil, nil, ""
	return kern.NewKernel(spec)
}
