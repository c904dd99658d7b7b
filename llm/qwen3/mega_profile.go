package qwen3

// The persistent layer's phase timer: where a layer's time goes, measured
// on the device. Each block's thread 0 reads its SM's cycle counter
// (gpu.Clock64) at the layer's phase boundaries (megaMark in mega.go);
// the counters of different SMs are not synchronized, so every figure is
// a difference of one block's own reads: how long that block worked in a
// phase, or waited at a barrier for the slowest block. A latency model
// ranks designs (docs/emulator.md); this says what a GPU did.

import (
	"errors"
	"fmt"
	"math"
)

// PhaseTime is one phase of the persistent layer in the last timed decode
// step: the cycles each block spent in it, over every block and layer.
// On the emulator the counter is the block's executed instructions.
type PhaseTime struct {
	Phase          string
	Mean, Min, Max float64
}

// megaPhases names the intervals between consecutive marks.
var megaPhases = [...]string{
	"wait for the layer before (PDL)",
	"input RMSNorm",
	"q/k/v GEMV",
	"barrier",
	"attention",
	"barrier",
	"o_proj GEMV (input copy, residual)",
	"barrier",
	"post-attention RMSNorm",
	"gate/up GEMV, SwiGLU",
	"barrier",
	"down_proj GEMV (input copy, residual)",
}

// ProfilePersistentDecode turns the persistent layer's phase timer on or
// off. Call it after UsePersistentDecode and before the first decode step
// (the timer's buffer is made with the layer's scratch, and a captured
// decode graph keeps what it recorded). The timer costs a cycle-counter
// read and a store by one thread of each block at each of 13 marks a
// layer.
func (m *Model) ProfilePersistentDecode(on bool) error {
	if m.ops == nil || !m.ops.persistent {
		return errors.New("qwen3: the phase timer is the persistent decode layer's: call UsePersistentDecode(true) first")
	}
	m.ops.profile = on
	return nil
}

// PersistentPhases reads the phase timer of the last decode step the
// persistent layer ran: per phase, the mean, least and most cycles over
// every block of every layer.
func (m *Model) PersistentPhases() ([]PhaseTime, error) {
	if m.ops == nil || !m.ops.profile {
		return nil, errors.New("qwen3: the phase timer is off: call ProfilePersistentDecode(true) before the first decode step")
	}
	s := m.ops.lastMega
	if s == nil || !s.profile {
		return nil, errors.New("qwen3: no decode step has run on the persistent layer with the phase timer on")
	}
	marks, err := s.prof.Download()
	if err != nil {
		return nil, fmt.Errorf("qwen3: reading the phase timer: %w", err)
	}
	return megaPhaseTimes(marks), nil
}

// megaPhaseTimes summarizes marks, megaMarks a block, into megaPhases.
func megaPhaseTimes(marks []int64) []PhaseTime {
	out := make([]PhaseTime, len(megaPhases))
	n := 0
	for i := range out {
		out[i] = PhaseTime{Phase: megaPhases[i], Min: math.Inf(1), Max: math.Inf(-1)}
	}
	for b := 0; b+megaMarks <= len(marks); b += megaMarks {
		for i := range out {
			d := float64(marks[b+i+1] - marks[b+i])
			out[i].Mean += d
			out[i].Min = min(out[i].Min, d)
			out[i].Max = max(out[i].Max, d)
		}
		n++
	}
	for i := range out {
		if n == 0 {
			out[i].Min, out[i].Max = 0, 0
			continue
		}
		out[i].Mean /= float64(n)
	}
	return out
}
