package ops

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
)

// withHopperAttention runs f with FlashAttention forced onto the sm_90a
// kernels (attnh) on an emulator device.
func withHopperAttention(t *testing.T, f func(dev *kern.Device), opts ...emu.Options) {
	t.Helper()
	forceHopper = true
	defer func() { forceHopper = false }()
	dev := kern.OpenEmulator(opts...)
	defer dev.Close()
	f(dev)
}

// TestFlashAttentionHopper runs the sm_90a kernels on the emulator
// against the float64 reference on the sm_80 kernels' shapes (sequence
// lengths 1, 17, 64, 257 and varlen batches, causal or not, GQA 1-8, head
// dims 64 and 128), with the same tolerances (runAttn).
func TestFlashAttentionHopper(t *testing.T) {
	cases := flashCases
	if os.Getenv("KERN_BIG") != "" {
		cases = append(cases, attnCase{lq: []int{1000}, lk: []int{1000}, heads: 2, kvHeads: 1, hd: 128, causal: true},
			attnCase{lq: []int{300, 1}, lk: []int{1000, 700}, heads: 4, kvHeads: 4, hd: 64})
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

// TestFlashAttentionHopperSanitizers runs the sm_90a kernels under
// memcheck, racecheck and synccheck: the hand-over of every K/V stage
// between the producer warp's TMA copies and the consumer warpgroup's
// wgmma reads is ordered by mbarriers only (no bar.sync after the
// start), which racecheck must accept. Five key tiles of 128 through two
// stages reuse each stage; ragged tiles, GQA and causal masks included.
func TestFlashAttentionHopperSanitizers(t *testing.T) {
	withHopperAttention(t, func(dev *kern.Device) {
		rng := rand.New(rand.NewPCG(9, 10))
		for _, hd := range []int{64, 128} {
			c := attnCase{lq: []int{70, 3}, lk: []int{70, 580}, heads: 4, kvHeads: 2, hd: hd, causal: true}
			nq, nk := sum(c.lq)*c.heads*hd, sum(c.lk)*c.kvHeads*hd
			q, _ := upload[gpu.Half](t, dev, normals(rng, nq, 1))
			k, _ := upload[gpu.Half](t, dev, normals(rng, nk, 1))
			v, _ := upload[gpu.Half](t, dev, normals(rng, nk, 1))
			cuQ, cuK := uploadT(t, dev, SeqOffsets(c.lq...)), uploadT(t, dev, SeqOffsets(c.lk...))
			a := Attention{Heads: 4, KVHeads: 2, HeadDim: hd, Causal: true, MaxSeqQ: 70}
			out, lse := alloc[gpu.Half](t, dev, nq), alloc[float32](t, dev, 4*sum(c.lq))
			if err := FlashAttention(dev, out, q, k, v, lse, cuQ, cuK, a); err != nil {
				t.Errorf("FlashAttention d%d: %v", hd, err)
			}
		}
	}, emu.Options{Memcheck: true, Racecheck: true, Synccheck: true})
}

// TestFlashAttentionHopperVersions runs the first Hopper kernel, kept
// selectable by AttentionHopperVersion for timing against the current
// one (1: attnh64, 64-key tiles), on a few of the same shapes: ragged
// tiles, varlen, GQA, causal, both head dims.
func TestFlashAttentionHopperVersions(t *testing.T) {
	defer func() { AttentionHopperVersion = 0 }()
	for _, ver := range []struct {
		v    int
		name string
	}{{1, "attnh64"}} {
		AttentionHopperVersion = ver.v
		withHopperAttention(t, func(dev *kern.Device) {
			for i, c := range []attnCase{flashCases[4], flashCases[5], flashCases[7], flashCases[8]} {
				t.Run(fmt.Sprintf("v%d/%s", ver.v, c), func(t *testing.T) {
					t.Run("f16", func(t *testing.T) { runAttn[gpu.Half](t, dev, c, uint64(i)) })
					t.Run("bf16", func(t *testing.T) { runAttn[gpu.BFloat16](t, dev, c, uint64(i)) })
				})
			}
			if got := FlashAttentionKernels(dev); !strings.Contains(got, ver.name) {
				t.Errorf("FlashAttentionKernels with AttentionHopperVersion %d = %q, want %s named", ver.v, got, ver.name)
			}
		})
	}
}

// TestFlashAttentionHopperMapCache: tensor maps are kept per buffer, so a
// second call reuses them, a freed buffer is refused by Device.TensorMap
// instead of being read through a stale map, and a new buffer gets
// its own map.
func TestFlashAttentionHopperMapCache(t *testing.T) {
	withHopperAttention(t, func(dev *kern.Device) {
		c := attnCase{lq: []int{17}, lk: []int{40}, heads: 2, kvHeads: 1, hd: 64}
		runAttn[gpu.Half](t, dev, c, 1)
		runAttn[gpu.Half](t, dev, c, 2) // new buffers, new maps
		rng := rand.New(rand.NewPCG(3, 4))
		q, _ := upload[gpu.Half](t, dev, normals(rng, 17*2*64, 1))
		k, _ := upload[gpu.Half](t, dev, normals(rng, 40*64, 1))
		v, _ := upload[gpu.Half](t, dev, normals(rng, 40*64, 1))
		out := alloc[gpu.Half](t, dev, 17*2*64)
		cuQ, cuK := uploadT(t, dev, SeqOffsets(17)), uploadT(t, dev, SeqOffsets(40))
		a := Attention{Heads: 2, KVHeads: 1, HeadDim: 64, MaxSeqQ: 17}
		if err := FlashAttention(dev, out, q, k, v, nil, cuQ, cuK, a); err != nil {
			t.Fatal(err)
		}
		if err := FlashAttention(dev, out, q, k, v, nil, cuQ, cuK, a); err != nil {
			t.Fatalf("second call with the same buffers: %v", err)
		}
		k.Free()
		if err := FlashAttention(dev, out, q, k, v, nil, cuQ, cuK, a); err == nil {
			t.Fatal("a freed k was accepted")
		}
		// Many short-lived buffers: each call's maps come from
		// Device.TensorMap, which never holds the buffers it has described.
		for i := range 24 {
			q1, _ := upload[gpu.Half](t, dev, normals(rng, 2*64, 1))
			k1, _ := upload[gpu.Half](t, dev, normals(rng, 64, 1))
			v1, _ := upload[gpu.Half](t, dev, normals(rng, 64, 1))
			one := uploadT(t, dev, SeqOffsets(1))
			if err := FlashAttention(dev, alloc[gpu.Half](t, dev, 2*64), q1, k1, v1, nil, one, one, Attention{Heads: 2, KVHeads: 1, HeadDim: 64, MaxSeqQ: 1}); err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
		}
	})
}
