// Package sample picks the next token from a row of logits on the host:
// greedy, or sampling with temperature, top-k, top-p and min-p, after a
// repetition penalty, from a seeded random stream.
//
// The order is Hugging Face transformers' (generate with do_sample):
// repetition penalty, then temperature, then top-k, top-p and min-p, each
// filter applied to what the previous one kept, then a draw from the
// renormalized distribution. Ties at a top-k or top-p boundary are broken
// toward the lower token id, so a seed gives the same tokens everywhere.
//
// It runs on the host, so every option stays in plain Go. Next takes a
// whole row of logits: a filter orders only the candidates it needs
// (order.go), and a draw at Qwen3's 151,936 tokens costs about 0.5 ms
// with its generation config, where a full sort of the vocabulary took
// 25 ms (BenchmarkNext). NextFrom takes the row's largest logits alone
// (ops.TopK's, on a GPU, so that a step copies 512 bytes a sequence, not
// 600 KB), and for greedy decoding and top-k sampling draws the token
// Next would, in about a microsecond (candidates.go). (ops.Sample does
// temperature/top-k/top-p on the device, with its own random stream.)
package sample

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Params are the sampling settings. The zero value is greedy decoding.
type Params struct {
	Temperature       float64 // 0: greedy (argmax); else divides the logits
	TopK              int     // keep the TopK most likely tokens; 0: all
	TopP              float64 // keep the fewest tokens with mass ≥ TopP; 0 or 1: all
	MinP              float64 // drop tokens with p < MinP·p_max; 0: none
	RepetitionPenalty float64 // >1 discourages tokens already seen; 0 or 1: none
	Seed              uint64
}

// Validate reports out-of-range parameters.
func (p Params) Validate() error {
	switch {
	case !(p.Temperature >= 0) || math.IsInf(p.Temperature, 0):
		return fmt.Errorf("sample: temperature %g, want a finite value ≥ 0", p.Temperature)
	case p.TopK < 0:
		return fmt.Errorf("sample: top_k %d, want ≥ 0", p.TopK)
	case !(p.TopP >= 0 && p.TopP <= 1):
		return fmt.Errorf("sample: top_p %g, want a value in [0, 1]", p.TopP)
	case !(p.MinP >= 0 && p.MinP <= 1):
		return fmt.Errorf("sample: min_p %g, want a value in [0, 1]", p.MinP)
	case !(p.RepetitionPenalty >= 0) || math.IsInf(p.RepetitionPenalty, 0):
		return fmt.Errorf("sample: repetition_penalty %g, want a finite value > 0", p.RepetitionPenalty)
	}
	return nil
}

// Sampler draws tokens with fixed Params from its own random stream.
type Sampler struct {
	p   Params
	rng *rand.Rand
	idx []int32   // scratch: candidate ids
	pos []int     // scratch: the kept candidates' positions in idx
	buf []float64 // scratch: penalized logits
}

// New returns a sampler; the same Params (seed included) give the same
// tokens for the same logits.
func New(p Params) (*Sampler, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Sampler{p: p, rng: rand.New(rand.NewPCG(p.Seed, p.Seed^0x9e3779b97f4a7c15))}, nil
}

// Next picks a token from logits given the tokens seen so far (prompt and
// generated, for the repetition penalty). NaN logits are never picked.
func (s *Sampler) Next(logits []float32, seen []int32) int32 {
	x := s.buf[:0]
	for _, v := range logits {
		x = append(x, logit64(v))
	}
	s.buf = x
	if r, on := s.penalty(); on {
		done := map[int32]bool{}
		for _, id := range seen {
			if id < 0 || int(id) >= len(x) || done[id] {
				continue
			}
			done[id] = true
			x[id] = penalize(x[id], r)
		}
	}
	if s.p.Temperature == 0 {
		return argmax(x)
	}
	// One pass: the temperature, the candidates (every token whose
	// scaled logit is above -Inf) and their maximum m.
	idx := s.idx[:0]
	m, t := math.Inf(-1), s.p.Temperature
	for i := range x {
		v := x[i] / t
		x[i] = v
		if !math.IsInf(v, -1) {
			idx = append(idx, int32(i))
			if v > m { // no NaN here: NaN logits became -Inf
				m = v
			}
		}
	}
	if len(idx) == 0 {
		return argmax(x)
	}
	// Candidates in descending logit order (ties: lower id first) as far
	// as a filter needs the order (order.go); sorted is how many lead
	// idx in that order.
	k, tp := s.p.TopK, s.p.TopP
	topP := tp > 0 && tp < 1
	sorted := 0
	if k > 0 && k < len(idx) {
		idx = topK(x, idx, k)
		sorted = len(idx)
	}
	if topP && sorted == 0 {
		sorted = -1 // nucleusOrder orders them once the weights are known
	}
	s.idx = idx
	return idx[s.filterDraw(x, idx, m, sorted)]
}

// filterDraw weighs the candidates idx (values x[i], the largest m) by
// exp(x − m), keeps top-p's and then min-p's, and draws one; it returns
// its position in idx. The first sorted of idx are in before's order (-1:
// none yet, for top-p to order).
func (s *Sampler) filterDraw(x []float64, idx []int32, m float64, sorted int) int {
	z := 0.0
	for _, i := range idx {
		x[i] = math.Exp(x[i] - m)
		z += x[i]
	}
	tp := s.p.TopP
	topP := tp > 0 && tp < 1
	if topP && sorted < 0 {
		sorted = nucleusOrder(x, idx, z, tp)
	}
	pos := s.pos[:0] // positions in idx kept
	if topP {
		// The shortest prefix of the order with mass ≥ tp.
		acc, n := 0.0, 0
		for n < len(idx) {
			if n == sorted { // the nucleus reaches past the sorted part
				sortCandidates(x, idx[n:])
				sorted = len(idx)
			}
			acc += x[idx[n]] / z
			pos = append(pos, n)
			n++
			if acc >= tp {
				break
			}
		}
		z = acc * z
	} else {
		for n := range idx {
			pos = append(pos, n)
		}
	}
	if mp := s.p.MinP; mp > 0 {
		// The most likely candidate has weight exp(0) = 1 (before top-p
		// only if it was kept, which it always is).
		kept := pos[:0]
		z = 0
		for _, n := range pos {
			if x[idx[n]] >= mp {
				kept = append(kept, n)
				z += x[idx[n]]
			}
		}
		pos = kept
	}
	s.pos = pos
	u := s.rng.Float64() * z
	for _, n := range pos {
		u -= x[idx[n]]
		if u < 0 {
			return n
		}
	}
	return pos[len(pos)-1] // rounding left u ≥ 0 at the end
}

// logit64 is a logit as the sampler computes with it: float64, NaN as
// -Inf (never drawn).
func logit64(v float32) float64 {
	if f := float64(v); !math.IsNaN(f) {
		return f
	}
	return math.Inf(-1)
}

// penalty is the repetition penalty's factor and whether it applies (not
// 0 or 1).
func (s *Sampler) penalty() (float64, bool) {
	r := s.p.RepetitionPenalty
	return r, r > 0 && r != 1
}

// penalize is a seen token's logit x under the repetition penalty r:
// pushed toward -Inf for r > 1 (divided if positive, multiplied if not),
// as transformers' RepetitionPenaltyLogitsProcessor does.
func penalize(x, r float64) float64 {
	if x > 0 {
		return x / r
	}
	return x * r
}

func argmax(x []float64) int32 {
	best := 0
	for i, v := range x {
		if v > x[best] || math.IsInf(x[best], -1) && !math.IsInf(v, -1) {
			best = i
		}
	}
	return int32(best)
}
