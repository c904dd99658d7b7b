package kern_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	tk "github.com/gokern/kern/internal/testkernels"
)

// Bad case 5: KERN_EMU_CHECK=racechek (or ALL, or bogus) ran with no
// sanitizer, and passing emu.Options dropped the environment's checks.
func TestUnknownEmulatorCheckFailsClosed(t *testing.T) {
	for _, bad := range []string{"racechek", "bogus", "memcheck,bogus"} {
		t.Setenv("KERN_EMU_CHECK", bad)
		dev := kern.OpenEmulator()
		_, err := kern.Alloc[float32](dev, 4)
		wantErr(t, "Alloc with KERN_EMU_CHECK="+bad, err, "KERN_EMU_CHECK", "unknown emulator check", "racecheck")
		t.Setenv("KERN_DEVICE", "emu")
		_, err = kern.Open()
		wantErr(t, "Open with KERN_EMU_CHECK="+bad, err, "unknown emulator check")
	}
}

// gatherOutOfBounds launches GatherUnchecked (no device bounds checks)
// with an index past the end: only memcheck reports it as a Report.
func gatherOutOfBounds(dev *kern.Device) error {
	x, _ := kern.Upload(dev, []float32{1, 2, 3})
	idx, _ := kern.Upload(dev, []int32{0, 1, 2, 40000})
	out, _ := kern.Alloc[float32](dev, 4)
	return tk.GatherUncheckedKernel.Launch(dev, kern.Cover(4), x, idx, out)
}

func TestEmulatorChecksAreCaseInsensitiveAndMerged(t *testing.T) {
	for _, env := range []string{"ALL", "MemCheck", " memcheck , racecheck"} {
		t.Setenv("KERN_EMU_CHECK", env)
		for name, dev := range map[string]*kern.Device{
			"no options":          kern.OpenEmulator(),
			"with options":        kern.OpenEmulator(emu.Options{Workers: 1}),
			"with racecheck only": kern.OpenEmulator(emu.Options{Racecheck: true}),
		} {
			if !strings.Contains(dev.Name(), "memcheck") {
				t.Errorf("KERN_EMU_CHECK=%q %s: device %q does not say memcheck is on", env, name, dev.Name())
			}
			var rep *emu.Report
			if err := gatherOutOfBounds(dev); !errors.As(err, &rep) {
				t.Errorf("KERN_EMU_CHECK=%q %s: %v, want a memcheck *emu.Report", env, name, err)
			}
		}
	}
}
