package engine

// A step's tokens from each row's largest logits. On a GPU the whole
// rows cost a copy of 600 KB a sequence at Qwen3's 151,936-token
// vocabulary (tens of µs over PCIe, pageable memory) and a pass of the
// host over every float before the next step can launch. So where every
// sampling sequence of a step draws greedily or with top-k and none asks
// for logprobs, the device picks each row's first candidates in the
// sampler's order (ops.TopKPacked) and the host draws from those
// (sample.Sampler.NextFrom), the same token Next draws from the whole
// row. A row whose candidates do not decide its draw (a top-k close to
// the candidates' count with many of them already seen, say) has the
// whole logits downloaded after all, for that step.

import (
	"github.com/gokern/kern"
	"github.com/gokern/kern/ops"
)

// defaultCandidates is the candidates a row hands the host on a GPU: more
// than Qwen3's top-k of 20 by enough to leave room for a repetition
// penalty's seen tokens.
const defaultCandidates = 64

// candidates is how many of each row's logits the step hands the host:
// 0 for the whole rows, -1 for none (every job is mid-prompt).
func (e *Engine) candidates(out *kern.Buffer[float32], active []*job) int {
	c := e.sampleCandidates
	if c == 0 && out.Device().Kind() == "cuda" {
		c = defaultCandidates
	}
	sampling, greedy := false, true
	for _, j := range active {
		if len(j.rest) > 0 {
			continue
		}
		if j.logprobs {
			c = 0
		}
		sampling = true
		greedy = greedy && j.smp.Greedy()
	}
	switch {
	case !sampling:
		return -1
	case c <= 0:
		return 0
	case greedy:
		return 1 // the largest decides a greedy draw with no penalty
	}
	return min(c, ops.TopKMax, e.Config.VocabSize)
}

// pickFromCandidates draws the next token of every job that samples this
// step (-1 for a job mid-prompt) from the c largest logits of its row of
// out, and from the whole row, downloaded into logits, for those whose
// candidates do not decide it. It reports whether it downloaded the
// rows.
func (e *Engine) pickFromCandidates(out *kern.Buffer[float32], active []*job, c int, logits []float32) ([]int32, bool, error) {
	rows, V := len(active), e.Config.VocabSize
	if e.cand == nil || e.cand.Len() != rows*c || e.cand.Device() != out.Device() {
		e.freeCandidates()
		var err error
		if e.cand, err = kern.Alloc[uint64](out.Device(), rows*c); err != nil {
			return nil, false, err
		}
	}
	// Packed (value, id) pairs: one copy to the host, not two.
	if err := ops.TopKPacked(out.Device(), e.cand, out, rows, V, c); err != nil {
		return nil, false, err
	}
	keys, err := e.cand.Download()
	if err != nil {
		return nil, false, err
	}
	vals, ids := make([]float32, len(keys)), make([]int32, len(keys))
	for i, key := range keys {
		vals[i], ids[i] = ops.TopKPair(key)
	}
	toks := make([]int32, rows)
	var undecided []int
	for i, j := range active {
		toks[i] = -1
		if len(j.rest) > 0 {
			continue
		}
		tok, ok := j.smp.NextFrom(vals[i*c:(i+1)*c], ids[i*c:(i+1)*c], j.seen)
		if !ok {
			undecided = append(undecided, i)
			continue
		}
		toks[i] = tok
		e.stats.candidateDraws.Add(1)
	}
	if len(undecided) == 0 {
		return toks, false, nil
	}
	e.stats.wholeRows.Add(1)
	if err := out.CopyTo(logits); err != nil {
		return nil, false, err
	}
	for _, i := range undecided {
		toks[i] = active[i].smp.Next(logits[i*V:(i+1)*V], active[i].seen)
	}
	return toks, true, nil
}

// freeCandidates frees the candidates' buffer.
func (e *Engine) freeCandidates() {
	if e.cand != nil {
		e.cand.Free()
		e.cand = nil
	}
}
