package mmhw

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
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
	epi "github.com/gokern/kern/ops/internal/epilogue"
)

// TestTileAt: for every group, the grouped order visits each tile of the
// grid exactly once, keeps each strip's tiles together (a strip is group
// whole tile rows, the last what is left), walks rows fastest inside a
// strip, and is the row-major order with group 1.
func TestTileAt(t *testing.T) {
	for _, tm := range []int32{1, 3, 7, 17} {
		for _, tn := range []int32{1, 2, 5, 16} {
			for _, g := range []int32{1, 2, 4, 8, 16} {
				seen := map[[2]int32]bool{}
				for i := range tm * tn {
					r, c := tileAt(i, tm, tn, g)
					if r < 0 || r >= tm || c < 0 || c >= tn || seen[[2]int32{r, c}] {
						t.Fatalf("%d×%d tiles, group %d: tile %d is (%d, %d): outside or seen", tm, tn, g, i, r, c)
					}
					seen[[2]int32{r, c}] = true
					if r/g != i/(g*tn) {
						t.Errorf("%d×%d tiles, group %d: tile %d at row %d, outside strip %d", tm, tn, g, i, r, i/(g*tn))
					}
					if g == 1 && (r != i/tn || c != i%tn) {
						t.Errorf("%d×%d tiles, group 1: tile %d is (%d, %d), row-major is (%d, %d)", tm, tn, i, r, c, i/tn, i%tn)
					}
					if i > 0 {
						pr, pc := tileAt(i-1, tm, tn, g)
						if pr/g == r/g && !(pc == c && pr+1 == r || pc+1 == c && r == g*(r/g)) {
							t.Errorf("%d×%d tiles, group %d: tile %d (%d, %d) does not follow (%d, %d) rows first", tm, tn, g, i, r, c, pr, pc)
						}
					}
				}
			}
		}
	}
}

// gemmCase is the test problem of TestGemm and TestPlantedBugs: 300 ×
// 520 × 200 is 3 × 3 tiles of 128 × 256, the last tile row 44 rows and
// the last tile column 8 columns (its second W box wholly past N), with
// 4 k tiles, the last 8 wide. Elements are multiples of 1/4 in [-1, 1]:
// every product is a multiple of 1/16 and every sum of 200 exact in
// float32, so results compare exactly.
type gemmCase struct {
	dev        *kern.Device
	m, n, k    int
	af, wf     []float64
	amap, wmap *kern.TensorMap
	empty      *kern.Buffer[float32]
}

func newGemmCase(t *testing.T, checks bool) *gemmCase {
	t.Helper()
	g := &gemmCase{m: 300, n: 520, k: 200}
	// An H100's shared memory: two stages and the staging are 128 KiB.
	g.dev = kern.OpenEmulator(emu.Options{MaxSharedPerBlock: emu.MaxSharedPerBlockSM90, Memcheck: checks, Racecheck: checks, Synccheck: checks})
	t.Cleanup(func() { g.dev.Close() })
	r := rand.New(rand.NewPCG(3, 4))
	up := func(rows int) ([]float64, *kern.TensorMap) {
		f, h := make([]float64, rows*g.k), make([]gpu.Half, rows*g.k)
		for i := range f {
			f[i] = float64(r.IntN(9)-4) / 4
			h[i] = gpu.ToHalf(float32(f[i]))
		}
		b, err := kern.Upload(g.dev, h)
		if err != nil {
			t.Fatal(err)
		}
		tm, err := g.dev.TensorMap(b, kern.TensorMapSpec{Dims: [2]int{g.k, rows}, Box: [2]int{BoxK, BoxRows}, Swizzle: gpu.Swizzle128B})
		if err != nil {
			t.Fatal(err)
		}
		return f, tm
	}
	g.af, g.amap = up(g.m)
	g.wf, g.wmap = up(g.n)
	g.empty, _ = kern.Alloc[float32](g.dev, 0)
	return g
}

// run launches kernel (GemmF16F32's parameters) on blocks persistent
// blocks and returns the launch error, the number of wrong outputs and
// the first.
func (g *gemmCase) run(t *testing.T, kernel *kern.Kernel, blocks, stages, group int) (error, int, string) {
	t.Helper()
	c, err := kern.Alloc[float32](g.dev, g.m*g.n)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free()
	grid := kern.Blocks(gpu.Dim3{X: blocks, Y: 1, Z: 1}, gpu.Dim3{X: Threads, Y: 1, Z: 1}).WithShared(SharedBytes(stages))
	err = kernel.Launch(g.dev, grid, kern.BufferArg(c), g.amap, g.wmap, kern.BufferArg(g.empty), kern.BufferArg(g.empty),
		kern.ScalarArg(g.m), kern.ScalarArg(g.n), kern.ScalarArg(g.k), kern.ScalarArg(epi.None), kern.ScalarArg(stages), kern.ScalarArg(group))
	if err != nil {
		return err, 0, ""
	}
	got, err := c.Download()
	if err != nil {
		t.Fatal(err)
	}
	wrong, first := 0, ""
	for i := range g.m {
		for j := range g.n {
			var want float64
			for l := range g.k {
				want += g.af[i*g.k+l] * g.wf[j*g.k+l]
			}
			if v := float64(got[i*g.n+j]); v != want || math.IsNaN(v) {
				if wrong == 0 {
					first = fmt.Sprintf("C[%d][%d] = %v, want %v", i, j, v, want)
				}
				wrong++
			}
		}
	}
	return nil, wrong, first
}

// TestGemm runs GemmF16F32 on the emulator with an H100's shared memory
// over the 3 × 3 tiles of gemmCase, exact against float64: one block
// walking all nine tiles and two and four persistent blocks (each
// walking several, in strips of one, two and sixteen tile rows: the
// last strip of two is one row), two and four stages. ops' Matmul tests
// cover the other types, the epilogues and ragged shapes.
func TestGemm(t *testing.T) {
	g := newGemmCase(t, false)
	for _, c := range [][3]int{{1, 2, 1}, {2, 4, 2}, {4, 2, 16}, {2, 4, 1}, {4, 4, 2}} {
		t.Run(fmt.Sprintf("blocks=%d/stages=%d/group=%d", c[0], c[1], c[2]), func(t *testing.T) {
			if err, wrong, first := g.run(t, GemmF16F32Kernel.Kernel(), c[0], c[1], c[2]); err != nil || wrong > 0 {
				t.Fatalf("launch: %v; %d of %d wrong, first %s", err, wrong, g.m*g.n, first)
			}
		})
	}
	// The same with memcheck, racecheck (mbarrier-aware) and synccheck:
	// the stages reused across tiles, the staging reused across rounds
	// and tiles, the fast and the general epilogue paths.
	t.Run("sanitizers", func(t *testing.T) {
		g := newGemmCase(t, true)
		if err, wrong, first := g.run(t, GemmF16F32Kernel.Kernel(), 2, 2, 2); err != nil || wrong > 0 {
			t.Fatalf("launch: %v; %d of %d wrong, first %s", err, wrong, g.m*g.n, first)
		}
	})
}

// plantedBugs are text edits of gemm.go that a GPU would punish with
// wrong results; the emulator must show each (the unedited source,
// compiled the same way, must be exact). They are the parts the wide tile
// adds to mmh's pipeline (whose own planted bugs cover the barriers and
// swizzles).
var plantedBugs = []struct{ name, old, new string }{
	{"none", "", ""},
	{"one W box's bytes expected", "gpu.MbarrierArriveExpectTx(t, &full[s], StageBytes)", "gpu.MbarrierArriveExpectTx(t, &full[s], (boxA+BoxRows*BK)*2)"},
	{"second W box from rows n0", "int(kt)*BK, n0+BoxRows, &full[s])", "int(kt)*BK, n0, &full[s])"},
	{"W stages spaced as A's", "sa, sb := uint32(s)*(boxA*2/16), uint32(s)*(boxB*2/16)", "sa, sb := uint32(s)*(boxA*2/16), uint32(s)*(boxA*2/16)"},
	{"consumers in row-major order", "tm, tn := tileAt(tile, tilesM, tilesN, grp)\n\t\tepilogue", "tm, tn := tile/tilesN, tile%tilesN\n\t\tepilogue"},
}

// TestPlantedBugs compiles gemm.go with each planted bug and runs its
// GemmF16F32 on gemmCase with one block, 2 stages and strips of two tile
// rows.
func TestPlantedBugs(t *testing.T) {
	g := newGemmCase(t, false)
	src := kernelSource(t)
	for _, bug := range plantedBugs {
		t.Run(bug.name, func(t *testing.T) {
			s := src
			if bug.old != "" {
				if !strings.Contains(s, bug.old) {
					t.Fatalf("the source no longer contains %q: update the planted bug", bug.old)
				}
				s = strings.Replace(s, bug.old, bug.new, 1)
			}
			p, err := compiler.CompileSource(compiler.Config{Arch: "sm_90a"}, "gemm.go", []byte(s))
			if err != nil {
				t.Fatal(err)
			}
			spec := *GemmF16F32Kernel.Kernel().Spec()
			spec.Module = &kern.Module{Pkg: "planted/mmhw", Arch: "sm_90a", PTX: p.PTX}
			spec.Native, spec.Source, spec.SourceHash = nil, nil, ""
			err, wrong, first := g.run(t, kern.NewKernel(spec), 1, 2, 2)
			switch {
			case bug.old == "" && (err != nil || wrong > 0):
				t.Fatalf("the kernel as written: %v; %d wrong, first %s", err, wrong, first)
			case bug.old != "" && err == nil && wrong == 0:
				t.Fatalf("planted bug %q: every value right and no error", bug.name)
			case bug.old != "":
				t.Logf("caught: error %v; %d of %d wrong (%s)", err, wrong, g.m*g.n, first)
			}
		})
	}
}

// kernelSource is gemm.go and epilogue.go as one file (CompileSource
// takes one).
func kernelSource(t *testing.T) string {
	t.Helper()
	gs, err := os.ReadFile("gemm.go")
	if err != nil {
		t.Fatal(err)
	}
	e, err := os.ReadFile("epilogue.go")
	if err != nil {
		t.Fatal(err)
	}
	// One file for compiler.CompileSource: gemm.go, then epilogue.go and
	// the epilogue library it calls (ops/internal/epilogue) after their
	// imports, the library's names unqualified (as mmh's planted test).
	lib, err := os.ReadFile(filepath.Join("..", "epilogue", "epilogue.go"))
	if err != nil {
		t.Fatal(err)
	}
	const imp = "import \"github.com/gokern/kern/gpu\"\n"
	const impEpi = "import (\n\t\"github.com/gokern/kern/gpu\"\n\tepi \"github.com/gokern/kern/ops/internal/epilogue\"\n)\n"
	body, lb := string(e), string(lib)
	i, j := strings.Index(body, impEpi), strings.Index(lb, imp)
	if i < 0 || j < 0 || !strings.Contains(string(gs), imp) {
		t.Fatalf("gemm.go and the epilogue library must each import only package gpu, as %q, and epilogue.go gpu and the library, as %q", imp, impEpi)
	}
	return string(gs) + strings.ReplaceAll(body[i+len(impEpi):], "epi.", "") + lb[j+len(imp):]
}
