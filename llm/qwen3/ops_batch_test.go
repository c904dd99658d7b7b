package qwen3

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gokern/kern/internal/fixture"
)

// TestOpsBatchMatchesSolo is TestBatchMatchesSolo on the ops path: batches
// of changing shape and kind (prefills beside decodes, which run as a
// prefill pass and a decode pass; a decode step of 17 sequences, past
// the GEMV's 16 rows; prefills of 1 to 3 sequences) give each sequence
// bit-identical logits to the same sequence stepped alone.
func TestOpsBatchMatchesSolo(t *testing.T) {
	for _, d := range testDevices {
		t.Run(d.name, func(t *testing.T) {
			m, err := Load(d.dev, fixture.Model(t, "tiny-qwen3-hd32"), LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Free()
			if err := m.UseOps(); err != nil {
				t.Fatal(err)
			}
			V := m.Config.VocabSize
			const nseq = 18
			prompt := func(i int) []int32 { // lengths 1 to 4, distinct tokens
				p := []int32{int32(3 + 7*i)}
				for j := 1; j < 1+i%4; j++ {
					p = append(p, int32(100+13*i+j))
				}
				return p
			}
			next := func(i, step int) []int32 { return []int32{int32(500 + 3*i + step)} }
			// steps[i] is sequence i's inputs: its prompt, then two
			// decode tokens (teacher-forced).
			steps := make([][][]int32, nseq)
			for i := range steps {
				steps[i] = [][]int32{prompt(i), next(i, 0), next(i, 1)}
			}
			pool, err := m.NewKVPool(nseq*2+4, 16)
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Free()
			solo := make([][][]float32, nseq)
			for i := range nseq {
				s := pool.NewSeq()
				for _, in := range steps[i] {
					out, err := m.ForwardBatch([]*Seq{s}, [][]int32{in})
					if err != nil {
						t.Fatal(err)
					}
					xs, _ := out.Download()
					solo[i] = append(solo[i], xs)
				}
				s.Release()
			}

			seqs := make([]*Seq, nseq)
			for i := range seqs {
				seqs[i] = pool.NewSeq()
			}
			done := make([]int, nseq)
			all := make([]int, nseq)
			for i := range all {
				all[i] = i
			}
			for n, batch := range [][]int{
				{0, 1},       // two prefills: one token, two tokens
				{0, 1, 2, 3}, // decodes beside prefills: a split step
				{4, 5, 6, 0}, // the same, decode last
				{7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}, // prefills only
				all[1:], // 17 decodes: past the GEMV's 16 rows
				{2, 3},  // two decodes
				all[4:], // 14 decodes
			} {
				var ss []*Seq
				var ins [][]int32
				var live []int
				for _, i := range batch {
					if done[i] == len(steps[i]) {
						continue
					}
					ss = append(ss, seqs[i])
					ins = append(ins, steps[i][done[i]])
					live = append(live, i)
				}
				out, err := m.ForwardBatch(ss, ins)
				if err != nil {
					t.Fatalf("batch %d: %v", n, err)
				}
				xs, _ := out.Download()
				if len(xs) != len(live)*V {
					t.Fatalf("batch %d: %d logits, want %d×%d", n, len(xs), len(live), V)
				}
				for r, i := range live {
					got, want := xs[r*V:(r+1)*V], solo[i][done[i]]
					for j := range want {
						if got[j] != want[j] {
							t.Fatalf("batch %d %v, sequence %d step %d: logit %d = %g, alone %g", n, live, i, done[i], j, got[j], want[j])
						}
					}
					done[i]++
				}
			}
			if got := fmt.Sprint(done); got != fmt.Sprint([]int{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}) {
				t.Errorf("steps done per sequence %s, want 3 each", got)
			}
		})
	}
}

// TestOpsMixedStepFailsWhole: a mixed step (run as two passes) with a bad
// token in its second pass's sequence fails before either pass runs: no
// sequence advances.
func TestOpsMixedStepFailsWhole(t *testing.T) {
	m, err := Load(testDevices[0].dev, fixture.Model(t, "tiny-qwen3-hd32"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	if err := m.UseOps(); err != nil {
		t.Fatal(err)
	}
	pool, err := m.NewKVPool(4, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Free()
	a, b := pool.NewSeq(), pool.NewSeq()
	if _, err := m.ForwardBatch([]*Seq{a}, [][]int32{{3, 4, 5}}); err != nil {
		t.Fatal(err)
	}
	V := int32(m.Config.VocabSize)
	// The prefill pass (b) runs first and is fine; the decode pass's
	// token (a's) is outside the vocabulary.
	_, err = m.ForwardBatch([]*Seq{a, b}, [][]int32{{V}, {7, 8}})
	if err == nil || !strings.Contains(err.Error(), "outside the vocabulary") {
		t.Fatalf("bad token in a mixed step: %v", err)
	}
	if a.Len != 3 || b.Len != 0 {
		t.Errorf("after the failed step: lengths %d and %d, want 3 and 0", a.Len, b.Len)
	}
	if _, err := m.ForwardBatch([]*Seq{a, b}, [][]int32{{9}, {7, 8}}); err != nil {
		t.Fatalf("the step again, corrected: %v", err)
	}
	if a.Len != 4 || b.Len != 2 {
		t.Errorf("after the step: lengths %d and %d, want 4 and 2", a.Len, b.Len)
	}
}
