package qwen3

import (
	"errors"
	"testing"

	"github.com/gokern/kern/internal/fixture"
)

// TestBatchMatchesSolo: sequences stepped together in batches of
// changing shape (a prefill beside decodes, pages of 4 positions so page
// tables span several pages) get bit-identical logits to each sequence
// run alone.
func TestBatchMatchesSolo(t *testing.T) {
	for _, d := range testDevices {
		t.Run(d.name, func(t *testing.T) {
			m, err := Load(d.dev, fixture.Model(t, "tiny-qwen3-hd32"), LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Free()
			V := m.Config.VocabSize
			prompts := [][]int32{{3, 141, 59, 26, 535, 897}, {7, 8}, {400, 12, 99, 5, 1, 2, 3, 4, 5}}
			next := [][]int32{{11, 12}, {13, 14}, {15, 16}} // the decode inputs (teacher-forced)

			// Solo: each sequence alone in its own cache.
			solo := make([][][]float32, 3)
			for i := range prompts {
				c, err := m.NewCache(32)
				if err != nil {
					t.Fatal(err)
				}
				for _, in := range [][]int32{prompts[i], next[i][:1], next[i][1:]} {
					out, err := m.Forward(c, in, false)
					if err != nil {
						t.Fatal(err)
					}
					xs, _ := out.Download()
					solo[i] = append(solo[i], xs)
				}
				c.Free()
			}

			pool, err := m.NewKVPool(16, 4)
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Free()
			seqs := []*Seq{pool.NewSeq(), pool.NewSeq(), pool.NewSeq()}
			step := make([]int, 3) // how many solo steps each sequence has done
			input := func(i int) []int32 {
				if step[i] == 0 {
					return prompts[i]
				}
				return next[i][step[i]-1 : step[i]]
			}
			for n, batch := range [][]int{{0, 1}, {0, 1, 2}, {2, 0}, {1, 2}} {
				var ss []*Seq
				var ins [][]int32
				for _, i := range batch {
					ss = append(ss, seqs[i])
					ins = append(ins, input(i))
				}
				out, err := m.ForwardBatch(ss, ins)
				if err != nil {
					t.Fatalf("batch %d: %v", n, err)
				}
				xs, _ := out.Download()
				for r, i := range batch {
					got, want := xs[r*V:(r+1)*V], solo[i][step[i]]
					for j := range want {
						if got[j] != want[j] {
							t.Fatalf("batch %d %v, sequence %d step %d: logit %d = %g, alone %g", n, batch, i, step[i], j, got[j], want[j])
						}
					}
					step[i]++
				}
			}
			used := 0
			for _, s := range seqs {
				used += len(s.pages)
				s.Release()
			}
			if used == 0 || pool.FreePages() != 16 {
				t.Errorf("pages: %d used, %d free after release, want 16", used, pool.FreePages())
			}
		})
	}
}

func TestBatchErrors(t *testing.T) {
	m, err := Load(testDevices[1].dev, fixture.Model(t, "tiny-qwen3-tied"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	pool, _ := m.NewKVPool(2, 4)
	defer pool.Free()
	other, _ := m.NewKVPool(1, 4)
	defer other.Free()
	a, b := pool.NewSeq(), pool.NewSeq()
	for _, c := range []struct {
		seqs []*Seq
		toks [][]int32
	}{
		{[]*Seq{a}, [][]int32{{1, 2, 3, 4, 5, 6, 7, 8, 9}}}, // 9 positions, 8 in the pool
		{[]*Seq{a, a}, [][]int32{{1}, {2}}},
		{[]*Seq{a, other.NewSeq()}, [][]int32{{1}, {2}}},
		{[]*Seq{a}, [][]int32{{}}},
		{[]*Seq{a}, [][]int32{{5000}}},
		{[]*Seq{a, b}, [][]int32{{1}}},
	} {
		if _, err := m.ForwardBatch(c.seqs, c.toks); err == nil {
			t.Errorf("ForwardBatch(%d seqs, %v): no error", len(c.seqs), c.toks)
		}
	}
	_, err = m.ForwardBatch([]*Seq{b}, [][]int32{{1, 2, 3, 4, 5, 6, 7, 8, 9}})
	if !errors.Is(err, ErrPoolFull) {
		t.Errorf("pool exhausted: %v", err)
	}
}
