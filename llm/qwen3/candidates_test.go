package qwen3

import (
	"sort"
	"strings"
	"testing"

	"github.com/gokern/kern/ops"
)

// TestDecodeCandidates: with SetDecodeCandidates, each decode step on the
// ops path leaves every row's k largest logits in host memory, largest
// first, ties to the lower id (the logits' own order), eager, captured
// and replayed; a prefill leaves none; turning it on drops the graphs
// captured without it.
func TestDecodeCandidates(t *testing.T) {
	const k = 8
	for _, d := range testDevices {
		t.Run(d.name, func(t *testing.T) {
			m := randomOps(t, d.dev, Presets["tiny"], 5, true)
			pool, err := m.NewKVPool(8, DefaultPageSize)
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Free()
			a, b := pool.NewSeq(), pool.NewSeq()
			step := func(toks [][]int32) []float32 {
				t.Helper()
				out, err := m.ForwardBatch([]*Seq{a, b}, toks)
				if err != nil {
					t.Fatal(err)
				}
				logits, err := out.Download()
				if err != nil {
					t.Fatal(err)
				}
				return logits
			}
			step([][]int32{{1, 2, 3}, {4, 5}})
			step([][]int32{{6}, {7}}) // a decode step before the pick, eager
			step([][]int32{{8}, {9}}) // captured
			if err := m.SetDecodeCandidates(k); err != nil {
				t.Fatal(err)
			}
			V := m.Config.VocabSize
			replays := m.GraphReplays()
			for i := range 4 { // eager, captured, replayed twice
				logits := step([][]int32{{int32(10 + i)}, {int32(20 + i)}})
				keys, kk := m.DecodeCandidates()
				if kk != k || len(keys) != 2*k {
					t.Fatalf("step %d: %d candidates of k = %d, want 2×%d", i, len(keys), kk, k)
				}
				for r := range 2 {
					row := logits[r*V : (r+1)*V]
					idx := make([]int, V)
					for j := range idx {
						idx[j] = j
					}
					sort.SliceStable(idx, func(x, y int) bool { return row[idx[x]] > row[idx[y]] })
					for j := range k {
						if v, id := ops.TopKPair(keys[r*k+j]); int(id) != idx[j] || v != row[idx[j]] {
							t.Fatalf("step %d, row %d, rank %d: (%d, %v), want (%d, %v)", i, r, j, id, v, idx[j], row[idx[j]])
						}
					}
				}
			}
			if m.GraphReplays()-replays != 3 {
				t.Errorf("%d graph launches after the pick was turned on, want 3: an eager step first (the graph captured before it dropped), then the capture's and two replays", m.GraphReplays()-replays)
			}
			c := pool.NewSeq()
			if _, err := m.ForwardBatch([]*Seq{c}, [][]int32{{1, 2}}); err != nil {
				t.Fatal(err)
			}
			if keys, _ := m.DecodeCandidates(); keys != nil {
				t.Error("a prefill left candidates")
			}
			if err := m.SetDecodeCandidates(ops.TopKMax + 1); err == nil || !strings.Contains(err.Error(), "want 0 ≤ k ≤") {
				t.Errorf("k past TopKMax: %v", err)
			}
		})
	}
	f32, err := NewRandom(testDevices[0].dev, Presets["tiny"], 1)
	if err != nil {
		t.Fatal(err)
	}
	defer f32.Free()
	if err := f32.SetDecodeCandidates(4); err == nil || !strings.Contains(err.Error(), "ops path") {
		t.Errorf("the float32 path: %v", err)
	}
}
