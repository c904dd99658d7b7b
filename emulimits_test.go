package kern_test

import (
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
)

// TestEmulatorSharedLimit: the emulator reports 99 KiB of shared memory
// per block unless opened with emu.Options.MaxSharedPerBlock, up to an
// H100's 227 KiB (what the emulator runs). Launches are checked against
// the reported limit (TestMatmul's v3 128x256 cases need the larger).
func TestEmulatorSharedLimit(t *testing.T) {
	for _, c := range []struct{ opt, want int }{
		{0, 99 * 1024},
		{emu.MaxSharedPerBlockSM90, 227 * 1024},
		{1 << 20, 227 * 1024},
	} {
		dev := kern.OpenEmulator(emu.Options{MaxSharedPerBlock: c.opt})
		if got := dev.Limits().MaxSharedPerBlock; got != c.want {
			t.Errorf("MaxSharedPerBlock option %d: the device reports %d, want %d", c.opt, got, c.want)
		}
		dev.Close()
	}
}
