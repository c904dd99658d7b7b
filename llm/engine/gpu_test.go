//go:build gpu

package engine

// With -tags gpu: go test -tags gpu ./llm/engine

import (
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/internal/fixture"
)

// TestOpsWhereFastOnGPU: on a GPU, OpsWhereFast takes the ops path, and
// batched requests there still get their solo tokens.
func TestOpsWhereFastOnGPU(t *testing.T) {
	dev, err := kern.OpenCUDA(0)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(dev, fixture.Model(t, "tiny-qwen3-hd32"), Options{TokenizerDir: fixture.Tokenizer(t), OpsWhereFast: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if !e.Model.(Single).M.UsingOps() {
		t.Fatal("OpsWhereFast on a GPU: the float32 path")
	}
	testBatchedRequestsMatchSolo(t, e)
}

// TestCandidatesOnGPU: on a GPU, where they are the default, tokens drawn
// from each row's largest logits (ops.TopKPacked) are those of whole
// rows, on the float32 path and on the ops path.
func TestCandidatesOnGPU(t *testing.T) {
	open := func() *kern.Device {
		dev, err := kern.OpenCUDA(0)
		if err != nil {
			t.Fatal(err)
		}
		return dev
	}
	for _, ops := range []bool{false, true} {
		testCandidatesMatchWholeRows(t, open, Options{Ops: ops})
	}
}
