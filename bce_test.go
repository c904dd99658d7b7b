package kern_test

// The range analysis removes bounds checks it proves cannot fail. These
// kernels (internal/testkernels/bce.go) mix proven and kept checks; run
// at shapes and arguments that make the kept ones fail, every device must
// agree with native mode (Go's own checks): the same launches fail, the
// emulator's failures are *kern.DeviceError naming the kept check's line,
// and the launches that succeed write the same outputs.

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	tk "github.com/gokern/kern/internal/testkernels"
)

// bceCase launches one kernel on dev and returns what it wrote.
type bceCase struct {
	name string
	// line is the kept check expected to fail ("" when none may).
	line string
	run  func(dev *kern.Device) ([]float32, error)
}

func bceCases() []bceCase {
	var cases []bceCase
	for _, c := range []struct{ rows, cols, shift int }{{3, 5, 2}, {2, 64, 63}, {4, 100, 1}, {2, 7, -1}, {1, 3, -8}} {
		line := ""
		if c.shift < 0 {
			line = "bce.go:18:"
		}
		cases = append(cases, bceCase{fmt.Sprintf("RowShift rows %d cols %d shift %d", c.rows, c.cols, c.shift), line,
			func(dev *kern.Device) ([]float32, error) {
				x, _ := kern.Upload(dev, randFloats(c.rows*c.cols, 3))
				out, _ := kern.Alloc[float32](dev, c.rows*c.cols)
				err := tk.RowShiftKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: c.rows}, gpu.Dim3{X: 64}), x, out, c.cols, c.shift)
				got, _ := out.Download()
				return got, err
			}})
	}
	for _, c := range []struct {
		bx, by, pitch int
		fails         bool
	}{{16, 4, 17, false}, {16, 4, 16, false}, {16, 4, 18, true}, {1, 1, 17, false}, {8, 3, 200, true}, {16, 4, -1, true}} {
		line := ""
		if c.fails {
			line = "bce.go:38:"
		}
		cases = append(cases, bceCase{fmt.Sprintf("TilePitch block %dx%d pitch %d", c.bx, c.by, c.pitch), line,
			func(dev *kern.Device) ([]float32, error) {
				x, _ := kern.Upload(dev, randFloats(256, 4))
				out, _ := kern.Alloc[float32](dev, 256)
				err := tk.TilePitchKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: 1}, gpu.Dim3{X: c.bx, Y: c.by}), x, out, c.pitch)
				got, _ := out.Download()
				return got, err
			}})
	}
	for _, top := range []int{199, 200, 255} {
		line := ""
		if top >= 200 {
			line = "bce.go:57:"
		}
		cases = append(cases, bceCase{fmt.Sprintf("ByteBins bytes up to %d", top), line,
			func(dev *kern.Device) ([]float32, error) {
				data := make([]uint8, 1000)
				for i := range data {
					data[i] = uint8(i * 7 % (top + 1))
				}
				d, _ := kern.Upload(dev, data)
				bins, _ := kern.Alloc[uint32](dev, 256)
				err := tk.ByteBinsKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: 3}, gpu.Dim3{X: 128}), d, bins)
				got, _ := bins.Download()
				out := make([]float32, len(got))
				for i, v := range got {
					out[i] = float32(v)
				}
				return out, err
			}})
	}
	return cases
}

func TestEliminatedChecksAgreeWithNative(t *testing.T) {
	for _, c := range bceCases() {
		want, werr := c.run(kern.OpenNative())
		if (werr != nil) != (c.line != "") {
			t.Fatalf("%s: native error %v, expected a failure: %v", c.name, werr, c.line != "")
		}
		dev := kern.OpenEmulator()
		got, err := c.run(dev)
		if c.line != "" {
			var de *kern.DeviceError
			if !errors.As(err, &de) || !strings.Contains(de.Site, c.line) {
				t.Errorf("%s: emu error %v, want a *kern.DeviceError at %s (native: %v)", c.name, err, c.line, werr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: emu: %v", c.name, err)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: emu wrote %v, native %v", c.name, got, want)
		}
	}
}

// The proofs bound ThreadIdx by block= per dimension, so launch enforces
// each extent, not only the product (.maxntid's).
func TestBlockDirectiveBoundsEachDimension(t *testing.T) {
	for _, dev := range devices() {
		x, _ := kern.Upload(dev, randFloats(256, 4))
		out, _ := kern.Alloc[float32](dev, 256)
		err := tk.TilePitchKernel.Launch(dev, kern.Blocks(gpu.Dim3{X: 1}, gpu.Dim3{X: 64}), x, out, 17)
		if err == nil || !strings.Contains(err.Error(), "block=16x4x1") {
			t.Errorf("%s: a 64x1 block of a block=16x4 kernel: %v, want a launch error naming block=16x4x1", dev.Kind(), err)
		}
	}
}
