package tp

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/internal/fixture"
	"github.com/gokern/kern/llm/qwen3"
)

// TestBatchMatchesOneRank: three sequences stepped in batches of changing
// shape (a prefill beside decodes, pages of 4 positions) at TP=2 give
// each sequence's logits within relTol of the same batches at TP=1.
func TestBatchMatchesOneRank(t *testing.T) {
	dir := fixture.Model(t, "tiny-qwen3-untied")
	prompts := [][]int32{{3, 141, 59, 26, 535, 897}, {7, 8}, {400, 12, 99, 5, 1, 2, 3, 4, 5}}
	next := [][]int32{{11, 12}, {13, 14}, {15, 16}}
	batches := [][]int{{0, 1}, {0, 1, 2}, {2, 0}, {1, 2}}

	// steps runs the batches through forward, returning each batch's
	// logits per sequence in the batch.
	steps := func(forward func(batch []int, in [][]int32) (*kern.Buffer[float32], error)) [][]float32 {
		done := make([]int, 3)
		var rows [][]float32
		for _, batch := range batches {
			var ins [][]int32
			for _, i := range batch {
				if done[i] == 0 {
					ins = append(ins, prompts[i])
				} else {
					ins = append(ins, next[i][done[i]-1:done[i]])
				}
				done[i]++
			}
			out, err := forward(batch, ins)
			if err != nil {
				t.Fatal(err)
			}
			xs, _ := out.Download()
			V := len(xs) / len(batch)
			for j := range batch {
				rows = append(rows, xs[j*V:(j+1)*V])
			}
		}
		return rows
	}

	one, err := qwen3.Load(kern.OpenEmulator(), dir, qwen3.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pool1, err := one.NewKVPool(16, 4)
	if err != nil {
		t.Fatal(err)
	}
	seqs1 := []*qwen3.Seq{pool1.NewSeq(), pool1.NewSeq(), pool1.NewSeq()}
	want := steps(func(batch []int, in [][]int32) (*kern.Buffer[float32], error) {
		var ss []*qwen3.Seq
		for _, i := range batch {
			ss = append(ss, seqs1[i])
		}
		return one.ForwardBatch(ss, in)
	})
	pool1.Free()
	one.Free()

	m, err := LoadLocal([]*kern.Device{kern.OpenEmulator(), kern.OpenEmulator()}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	pool, err := m.NewKVPool(16, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Free()
	seqs := []*Seq{pool.NewSeq(), pool.NewSeq(), pool.NewSeq()}
	got := steps(func(batch []int, in [][]int32) (*kern.Buffer[float32], error) {
		var ss []*Seq
		for _, i := range batch {
			ss = append(ss, seqs[i])
		}
		return m.ForwardBatch(ss, in)
	})
	for i := range want {
		checkRow(t, fmt.Sprintf("row %d", i), got[i], want[i])
	}
	if seqs[2].Len() != len(prompts[2])+2 {
		t.Errorf("sequence 2 holds %d positions, want %d", seqs[2].Len(), len(prompts[2])+2)
	}
	seqs[0].Release()
	if seqs[0].Len() != 0 {
		t.Error("Release left positions")
	}

	// A step the pool has no room for fails on every rank with
	// qwen3.ErrPoolFull; after a release the model steps again.
	long := make([]int32, 16*4)
	big := pool.NewSeq()
	if _, err := m.ForwardBatch([]*Seq{big}, [][]int32{long}); !errors.Is(err, qwen3.ErrPoolFull) {
		t.Fatalf("a prompt larger than the free pages: %v", err)
	}
	seqs[1].Release()
	seqs[2].Release()
	big.Release()
	if _, err := m.ForwardBatch([]*Seq{big}, [][]int32{long[:8]}); err != nil {
		t.Fatalf("the step after a failed one: %v", err)
	}
}
