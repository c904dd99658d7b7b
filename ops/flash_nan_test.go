package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
)

// TestFlashAttentionNeighbourNaN plants NaN and ±Inf in every K and V
// value of the second sequence of a varlen batch and checks that the
// first sequence's output is the float64 attention of its own tokens:
// its last K/V tile runs into the second sequence's rows, whose scores
// are masked (P = 0), but 0·NaN is NaN, so those V rows must not reach
// P·V at all. Both the sm_80 kernels (they zero-fill those rows) and the
// sm_90a ones (forced on the emulator) are checked, for key lengths that
// end a tile early (40), late (63) and past one tile (100), under
// memcheck, racecheck and synccheck (the sm_90a producer's zeroing of
// the ragged tile is ordered by its own mbarrier and fence).
func TestFlashAttentionNeighbourNaN(t *testing.T) {
	for _, hopper := range []bool{false, true} {
		for _, hd := range []int{64, 128} {
			for _, lk0 := range []int{40, 63, 100} {
				c0 := attnCase{lq: []int{17}, lk: []int{lk0}, heads: 2, kvHeads: 1, hd: hd, causal: lk0 == 63}
				name := fmt.Sprintf("hopper=%t/d%d/lk%d", hopper, hd, lk0)
				t.Run(name, func(t *testing.T) {
					forceHopper = hopper
					defer func() { forceHopper = false }()
					dev := kern.OpenEmulator(emu.Options{Memcheck: true, Racecheck: true, Synccheck: true})
					defer dev.Close()
					neighbourNaN[gpu.Half](t, dev, c0)
					neighbourNaN[gpu.BFloat16](t, dev, c0)
				})
			}
		}
	}
}

// neighbourNaN runs c0's single sequence followed by a 30-query, 70-key
// sequence full of NaN and ±Inf, and compares the first sequence's rows.
func neighbourNaN[T Half16](t *testing.T, dev *kern.Device, c0 attnCase) {
	t.Helper()
	lq1, lk1 := 30, 70
	rng := rand.New(rand.NewPCG(uint64(c0.lk[0]), uint64(c0.hd)))
	rowQ, rowK := c0.heads*c0.hd, c0.kvHeads*c0.hd
	nq0, nk0 := c0.lq[0]*rowQ, c0.lk[0]*rowK
	qv := randn(rng, nq0+lq1*rowQ, 1)
	kv, vv := randn(rng, nk0+lk1*rowK, 1), randn(rng, nk0+lk1*rowK, 1)
	bad := []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
	for i := nk0; i < len(kv); i++ {
		kv[i], vv[i] = bad[i%3], bad[(i+1)%3]
	}
	q, qw := upload[T](t, dev, qv)
	k, kw := upload[T](t, dev, kv)
	v, vw := upload[T](t, dev, vv)
	out := alloc[T](t, dev, len(qv))
	lse := alloc[float32](t, dev, c0.heads*(c0.lq[0]+lq1))
	cuQ, cuK := uploadT(t, dev, SeqOffsets(c0.lq[0], lq1)), uploadT(t, dev, SeqOffsets(c0.lk[0], lk1))
	a := Attention{Heads: c0.heads, KVHeads: c0.kvHeads, HeadDim: c0.hd, Causal: c0.causal, MaxSeqQ: lq1}
	if err := FlashAttention(dev, out, q, k, v, lse, cuQ, cuK, a); err != nil {
		t.Fatal(err)
	}
	wantO, _, mag, _ := attnRef(c0, qw[:nq0], kw[:nk0], vw[:nk0], float64(a.scale()))
	got := download(t, out)[:nq0]
	for i, x := range got {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			t.Fatalf("%T: out[%d] (query %d of the first sequence) = %v: the neighbour's NaN/Inf leaked", *new(T), i, i/rowQ, x)
		}
	}
	u := unit[T]()
	compare(t, "out", got, wantO, tol{abs: 4 * tiny[T](), rel: u + 0x1p-20, srel: 2 * u}, mag)
}
