package compiler

// Tests of vecmerge.go: which accesses merge (golden file
// testdata/vecmerge.go), and that a merged group reads, writes and fails
// as the element-by-element Go code does, on the emulator.

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/gokern/kern/emu"
)

func init() {
	goldenChecks["vecmerge"] = func(t *testing.T, p *Package) {
		mustContain(t, p, "Quad", `^ld\.global\.nc\.v4\.f32 \{%f\d+, %f\d+, %f\d+, %f\d+\}, \[%rd\d+\];`)
		mustContain(t, p, "Quad", `^st\.global\.v4\.f32 \[%rd\d+\], \{%f\d+, %f\d+, %f\d+, %f\d+\};`)
		mustContain(t, p, "Pair", `^ld\.global\.nc\.v2\.f64 `)
		// (the error slot's own vector stores, to [kern_error+n], aside)
		mustNotContain(t, p, "Pair", `^st\.global\.v2\.\S+ \[%`) // its stores' checks stay
		mustNotContain(t, p, "Scalar", `\.v[24]\.\S+ (\{|\[%)`)
		mustContain(t, p, "Shared", `^ld\.shared\.v2\.f32 `)
		mustContain(t, p, "Shared", `^ld\.shared\.v4\.f32 `)
		mustNotContain(t, p, "Shared", `^and\.b64 %rd\d+, %rd\d+, 15;`)
	}
}

const vecMergeSrc = `package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=1
func Pair(t gpu.Thread, x, y []float32, off int) {
	i := 2 * off
	a, b := x[i], x[i+1]
	y[0] = b - a
}

//kern:kernel block=1
func Quad(t gpu.Thread, x, y []float32, off int) {
	i := 4 * off
	if i >= 0 && i+4 <= len(x) && i+4 <= len(y) {
		xs, ys := x[i:i+4], y[i:i+4]
		a, b, c, d := xs[0], xs[1], xs[2], xs[3]
		ys[0], ys[1], ys[2], ys[3] = d, c, b, a
	}
}
`

func TestVecMergeMatchesGo(t *testing.T) {
	p, err := CompileSource(Config{}, "k.go", []byte(vecMergeSrc))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"Pair", "Quad"} {
		if countLines(entryBody(t, p, kernelOf(t, p, k).Entry), `\.v[24]\.f32`) == 0 {
			t.Fatalf("%s: nothing merged", k)
		}
	}
	m, err := emu.Load([]byte(p.PTX))
	if err != nil {
		t.Fatal(err)
	}
	run := func(k string, nx, ny, off int) (y []float32, failed string) {
		dev := emu.NewDevice(emu.Options{})
		xb, _ := dev.Alloc(4*nx + 4)
		yb, _ := dev.Alloc(4*ny + 4)
		raw := make([]byte, 4*nx)
		for j := range nx {
			binary.LittleEndian.PutUint32(raw[4*j:], math.Float32bits(float32(j*j+1)))
		}
		if err := dev.Write(xb, raw); err != nil {
			t.Fatal(err)
		}
		params := make([]byte, 40)
		binary.LittleEndian.PutUint64(params[0:], xb)
		binary.LittleEndian.PutUint64(params[8:], uint64(nx))
		binary.LittleEndian.PutUint64(params[16:], yb)
		binary.LittleEndian.PutUint64(params[24:], uint64(ny))
		binary.LittleEndian.PutUint64(params[32:], uint64(int64(off)))
		_ = dev.Launch(m, k, emu.LaunchConfig{Grid: [3]int{1, 1, 1}, Block: [3]int{1, 1, 1}, Params: params})
		if rec := readSlot(t, dev, m); rec.code != 0 {
			failed = fmt.Sprintf("index %d", int64(rec.index))
		}
		got := make([]byte, 4*ny)
		if err := dev.Read(yb, got); err != nil {
			t.Fatal(err)
		}
		for j := range ny {
			y = append(y, math.Float32frombits(binary.LittleEndian.Uint32(got[4*j:])))
		}
		return y, failed
	}
	xv := func(j int) float32 { return float32(j*j + 1) }
	for _, nx := range []int{0, 1, 2, 3, 4, 5, 8, 9} {
		for _, off := range []int{-1, 0, 1, 2} {
			// Pair: Go checks x[i], then x[i+1], then y[0].
			ny := 1
			want, wantFail := make([]float32, ny), ""
			i := 2 * off
			switch {
			case i < 0 || i >= nx:
				wantFail = fmt.Sprintf("index %d", i)
			case i+1 >= nx:
				wantFail = fmt.Sprintf("index %d", i+1)
			default:
				want[0] = xv(i+1) - xv(i)
			}
			if got, fail := run("Pair", nx, ny, off); fmt.Sprint(got, fail) != fmt.Sprint(want, wantFail) {
				t.Errorf("Pair len(x)=%d off=%d: got %v %q, want %v %q", nx, off, got, fail, want, wantFail)
			}
			for _, ny := range []int{3, 4, 8} {
				want := make([]float32, ny)
				if i := 4 * off; i >= 0 && i+4 <= nx && i+4 <= ny {
					for j := range 4 {
						want[i+j] = xv(i + 3 - j)
					}
				}
				if got, fail := run("Quad", nx, ny, off); fail != "" || fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("Quad len(x)=%d len(y)=%d off=%d: got %v %q, want %v", nx, ny, off, got, fail, want)
				}
			}
		}
	}
}
