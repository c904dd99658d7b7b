package ops

import (
	"os"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// withHopperAttention runs f with FlashAttention forced onto the sm_90a
// kernels (attnh) on an emulator device.
func withHopperAttention(t *testing.T, f func(dev *kern.Device)) {
	t.Helper()
	forceHopperAttention = true
	defer func() { forceHopperAttention = false }()
	dev := kern.OpenEmulator()
	defer dev.Close()
	f(dev)
}

// TestFlashAttentionHopper runs the sm_90a kernels on the emulator
// against the float64 reference on the sm_80 kernels' shapes (sequence
// lengths 1, 17, 64, 257 and varlen batches, causal or not, GQA 1-8, head
// dims 64 and 128), with the same tolerances (runAttn).
func TestFlashAttentionHopper(t *testing.T) {
	cases := flashCases
	if os.Getenv("KERN_HOPPER_ATTN_CASE") != "" {
		cases = cases[:1]
	}
	withHopperAttention(t, func(dev *kern.Device) {
		for i, c := range cases {
			t.Run(c.String(), func(t *testing.T) {
				t.Run("f16", func(t *testing.T) { runAttn[gpu.Half](t, dev, c, uint64(i)) })
				t.Run("bf16", func(t *testing.T) { runAttn[gpu.BFloat16](t, dev, c, uint64(i)) })
			})
		}
	})
}
