package engine

// A step's tokens from each row's largest logits. On a GPU the whole
// rows cost a copy of 600 KB a sequence at Qwen3's 151,936-token
// vocabulary (tens of µs over PCIe, pageable memory) and a pass of the
// host over every float before the next step can launch. So where every
// sampling sequence of a step draws greedily or with top-k, the device
// picks each row's first candidates in the sampler's order
// (ops.TopKPacked) and the host draws from those
// (sample.Sampler.NextFrom), the same token Next draws from the whole
// row. Logprobs come from the candidates and the row's log-sum-exp
// (ops.TopKPackedLSE): the sampled token, every token more likely and the
// top 20 are all candidates. A row whose candidates do not decide its
// draw (a top-k close to the candidates' count with many of them already
// seen, say) has the whole logits downloaded after all, for that step.

import (
	"math"
	"slices"

	"github.com/gokern/kern"
	"github.com/gokern/kern/llm/qwen3"
	"github.com/gokern/kern/ops"
)

// defaultCandidates is the candidates a row hands the host on a GPU: more
// than Qwen3's top-k of 20 by enough to leave room for a repetition
// penalty's seen tokens.
const defaultCandidates = 64

// candidates is how many of each row's logits the step hands the host:
// 0 for the whole rows, -1 for none (every job is mid-prompt); lse is
// whether a job asks for logprobs, which the candidates give with their
// row's log-sum-exp.
func (e *Engine) candidates(out *kern.Buffer[float32], active []*job) (c int, lse bool) {
	c = candidateCount(e.sampleCandidates, out.Device(), e.Config.VocabSize)
	sampling, greedy, top := false, true, 0
	for _, j := range active {
		if len(j.rest) > 0 {
			continue
		}
		sampling = true
		greedy = greedy && j.smp.Greedy() && !j.logprobs
		if j.logprobs {
			lse, top = true, max(top, j.top)
		}
	}
	switch {
	case !sampling:
		return -1, false
	case c <= 0, lse && (top > c || !ops.TopKPackedLSEFits(e.Config.VocabSize, c)):
		return 0, false
	case greedy:
		return 1, false // the largest decides a greedy draw with no penalty
	}
	return c, lse
}

// logprobsFrom is logprobs (logprobs.go) for the candidate at pos of a
// row whose log-sum-exp is lse: the sampled token is a candidate, and so
// is every token of larger logit and every one of the top k.
func logprobsFrom(vals []float32, ids []int32, lse float64, pos, k int) SampledLogprob {
	out := SampledLogprob{TokenLogprob: TokenLogprob{ids[pos], float64(vals[pos]) - lse}, Rank: 1}
	for _, v := range vals {
		if v > vals[pos] {
			out.Rank++
		}
	}
	if k > 0 {
		out.Top = make([]TokenLogprob, 0, k)
		for i := range min(k, len(vals)) {
			out.Top = append(out.Top, TokenLogprob{ids[i], float64(vals[i]) - lse})
		}
	}
	return out
}

// picked is a step's draws from candidates: each job's token (-1 for a
// job mid-prompt), its logprobs where it asked for them and they came
// from the candidates, and whether the whole rows were downloaded into
// the step's logits (for the rows the candidates did not decide).
type picked struct {
	toks  []int32
	lps   []*SampledLogprob
	whole bool
}

// pickFromCandidates draws the next token of every job that samples this
// step from the c largest logits of its row of out (with lse, and the
// row's log-sum-exp for logprobs), and from the whole row, downloaded
// into logits, for those whose candidates do not decide it.
func (e *Engine) pickFromCandidates(out *kern.Buffer[float32], active []*job, c int, lse bool, logits []float32) (picked, error) {
	rows, V := len(active), e.Config.VocabSize
	stride := c
	if lse {
		stride++
	}
	var keys []uint64
	if src, ok := e.Model.(candidateSource); ok && !lse {
		// Picked inside the step (its graph's launches and copy).
		if mk, k := src.DecodeCandidates(); mk != nil && k >= c && len(mk) == rows*k {
			keys, stride = mk, k
			e.stats.stepPicks.Add(1)
		}
	}
	if keys == nil {
		if e.cand == nil || e.cand.Len() != rows*stride || e.cand.Device() != out.Device() {
			e.freeCandidates()
			var err error
			if e.cand, err = kern.Alloc[uint64](out.Device(), rows*stride); err != nil {
				return picked{}, err
			}
		}
		// Packed (value, id) pairs: one copy to the host, not two.
		var err error
		if lse {
			err = ops.TopKPackedLSE(out.Device(), e.cand, out, rows, V, c)
		} else {
			err = ops.TopKPacked(out.Device(), e.cand, out, rows, V, c)
		}
		if err != nil {
			return picked{}, err
		}
		if keys, err = e.cand.Download(); err != nil {
			return picked{}, err
		}
	}
	vals, ids := ops.TopKPairs(keys)
	p := picked{toks: make([]int32, rows), lps: make([]*SampledLogprob, rows)}
	var undecided []int
	for i, j := range active {
		p.toks[i] = -1
		if len(j.rest) > 0 {
			continue
		}
		v, id := vals[i*stride:i*stride+c], ids[i*stride:i*stride+c]
		tok, ok := j.smp.NextFrom(v, id, j.seen)
		if !ok {
			undecided = append(undecided, i)
			continue
		}
		p.toks[i] = tok
		e.stats.candidateDraws.Add(1)
		if j.logprobs {
			pos := slices.Index(id, tok) // a candidate: NextFrom draws from them
			lp := logprobsFrom(v, id, math.Float64frombits(keys[i*stride+c]), pos, j.top)
			p.lps[i] = &lp
		}
	}
	if len(undecided) == 0 {
		return p, nil
	}
	e.stats.wholeRows.Add(1)
	if err := out.CopyTo(logits); err != nil {
		return picked{}, err
	}
	for _, i := range undecided {
		p.toks[i] = active[i].smp.Next(logits[i*V:(i+1)*V], active[i].seen)
	}
	p.whole = true
	return p, nil
}

// candidateSource is a Runner whose decode steps pick each row's largest
// logits themselves, inside their graph (qwen3.Model.SetDecodeCandidates):
// the last step's, k a row, or nil.
type candidateSource interface {
	DecodeCandidates() (keys []uint64, k int)
}

// DecodeCandidates implements candidateSource.
func (s Single) DecodeCandidates() ([]uint64, int) { return s.M.DecodeCandidates() }

// pickInStep has m's decode steps pick the engine's candidates, where the
// engine takes them (a GPU, or SampleCandidates set) on the ops path.
func pickInStep(m *qwen3.Model, opt Options) error {
	k := candidateCount(opt.SampleCandidates, m.Device(), m.Config.VocabSize)
	if k <= 0 || !m.UsingOps() {
		return nil
	}
	return m.SetDecodeCandidates(k)
}

// candidateCount is the candidates a row hands the host on dev, given
// Options.SampleCandidates n and the vocabulary V; ≤ 0 for whole rows.
func candidateCount(n int, dev *kern.Device, V int) int {
	if n == 0 && dev.Kind() == "cuda" {
		n = defaultCandidates
	}
	return min(n, ops.TopKMax, V)
}

// freeCandidates frees the candidates' buffer.
func (e *Engine) freeCandidates() {
	if e.cand != nil {
		e.cand.Free()
		e.cand = nil
	}
}
