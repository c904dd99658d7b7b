package main

import (
	"fmt"
	"sync"

	"github.com/gokern/kern"
	"github.com/gokern/kern/llm/qwen3"
	"github.com/gokern/kern/llm/sample"
	"github.com/gokern/kern/ops"
)

// picker chooses a bench step's next tokens as the engine does
// (llm/engine/candidates.go): each row's largest logits picked on the
// device (ops.TopKPacked, one for a greedy draw) and drawn from on the host
// (sample.Sampler.NextFrom), the whole rows downloaded only for a row
// they do not decide; or, with candidates ≤ 0, every row downloaded and
// drawn from whole (sample.Sampler.Next), as the engine does on the
// emulator.
type picker struct {
	m             *qwen3.Model
	smps          []*sample.Sampler // a row's, seeded Seed+row
	c, V          int
	keys          *kern.Buffer[uint64]
	host          []float32
	decided, rows int // draws from candidates, rows drawn whole
}

func newPicker(dev *kern.Device, m *qwen3.Model, rows, candidates int, sp sample.Params) (*picker, error) {
	V := m.Config.VocabSize
	p := &picker{m: m, V: V, c: min(candidates, ops.TopKMax, V), host: make([]float32, rows*V)}
	for i := range rows {
		q := sp
		q.Seed += uint64(i)
		s, err := sample.New(q)
		if err != nil {
			return nil, err
		}
		p.smps = append(p.smps, s)
	}
	if p.c <= 0 {
		return p, nil
	}
	if p.smps[0].Greedy() {
		p.c = 1
	}
	if m.UsingOps() {
		// The decode steps pick them in their graphs, as the engine's do.
		if err := m.SetDecodeCandidates(p.c); err != nil {
			return nil, err
		}
	}
	var err error
	if p.keys, err = kern.Alloc[uint64](dev, rows*p.c); err != nil {
		return nil, err
	}
	return p, nil
}

// pick sets tokens[i] to row i's next token from logits [rows, V].
func (p *picker) pick(logits *kern.Buffer[float32], tokens [][]int32) error {
	rows := len(p.smps)
	whole := make([]bool, rows)
	if p.c > 0 {
		keys, k := p.m.DecodeCandidates()
		if keys == nil || k != p.c || len(keys) != rows*k {
			if err := ops.TopKPacked(logits.Device(), p.keys, logits, rows, p.V, p.c); err != nil {
				return err
			}
			var err error
			if keys, err = p.keys.Download(); err != nil {
				return err
			}
		}
		vals, ids := ops.TopKPairs(keys)
		for i, s := range p.smps {
			tok, ok := s.NextFrom(vals[i*p.c:(i+1)*p.c], ids[i*p.c:(i+1)*p.c], nil)
			tokens[i], whole[i] = []int32{tok}, !ok
			if ok {
				p.decided++
			}
		}
	} else {
		for i := range whole {
			whole[i] = true
		}
	}
	any := false
	for _, w := range whole {
		any = any || w
	}
	if !any {
		return nil
	}
	if err := logits.CopyTo(p.host); err != nil {
		return err
	}
	var wg sync.WaitGroup
	for i, s := range p.smps {
		if !whole[i] {
			continue
		}
		p.rows++
		wg.Add(1)
		go func() {
			defer wg.Done()
			tokens[i] = []int32{s.Next(p.host[i*p.V:(i+1)*p.V], nil)}
		}()
	}
	wg.Wait()
	return nil
}

// describe says how the tokens are picked, for the bench's header.
func (p *picker) describe(sp sample.Params) string {
	draw := "greedy"
	if sp.Temperature > 0 {
		draw = fmt.Sprintf("temperature %g, top-k %d, top-p %g", sp.Temperature, sp.TopK, sp.TopP)
	}
	if p.c <= 0 {
		return draw + ", every row's logits downloaded and drawn from on the host"
	}
	where := "after the step"
	if p.m.UsingOps() {
		where = "in the step's graph"
	}
	return fmt.Sprintf("%s, each row's %d largest logits picked on the device (ops.TopK, %s) and drawn from on the host, a row's whole logits only where they do not decide the draw", draw, p.c, where)
}

// summary counts the draws, for after the run.
func (p *picker) summary() string {
	return fmt.Sprintf("draws: %d from the candidates, %d from whole rows", p.decided, p.rows)
}

func (p *picker) free() {
	if p.keys != nil {
		p.keys.Free()
	}
}
